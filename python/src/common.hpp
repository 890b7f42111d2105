// Shared pieces of the Python bindings (baracuda._core): errors as exceptions, arrays as DynTensors, names as
// enumerations, and the template that binds any plan of the plan API from a table of its arguments.
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/vector.h>

#include <cstddef>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "baracuda/core/dyn_tensor.hpp"
#include "baracuda/core/element.hpp"
#include "baracuda/core/sku.hpp"
#include "baracuda/core/status.hpp"
#include "baracuda/core/stream.hpp"
#include "baracuda/core/tensor.hpp"
#include "baracuda/core/workspace.hpp"

namespace baracuda::python {

namespace nb = nanobind;

// ---- errors -------------------------------------------------------------------------------------------

/// Raises the exception of `e.code` (baracuda.InvalidProblem, ...) with the C++ message.
[[noreturn]] void raise(const Error& e);
inline void check(const Status& s) {
  if (!s.is_ok()) raise(s.error());
}
template <class T>
T unwrap(Result<T>&& r) {
  if (!r.is_ok()) raise(r.error());
  return std::move(r).value();
}
void bind_errors(nb::module_& m);

// ---- enumerations by name -------------------------------------------------------------------------------

/// The names of an enumeration for Python: `count` values 0 .. count - 1, spelled by `name(value)`.
/// Specialised beside each family's bindings; most derive from NamedByToString.
template <class E>
struct EnumNames;  // static constexpr std::size_t count; static constexpr const char* what; name(E)

/// Names by the library's `to_string` ("swiglu", "first_half", "f16").
struct NamedByToString {
  template <class E>
  static std::string_view name(E e) {
    return to_string(e);
  }
};

/// The value named `name`, or ValueError listing the names.
template <class E>
E parse_name(std::string_view name) {
  std::string known;
  for (std::size_t i = 0; i < EnumNames<E>::count; ++i) {
    if (EnumNames<E>::name(static_cast<E>(i)) == name) return static_cast<E>(i);
    known += (i ? ", " : "") + std::string(EnumNames<E>::name(static_cast<E>(i)));
  }
  throw nb::value_error(
      ("unknown " + std::string(EnumNames<E>::what) + " '" + std::string(name) + "' (one of: " + known + ")").c_str());
}
/// The names of every value.
template <class E>
std::vector<std::string> all_names() {
  std::vector<std::string> names;
  for (std::size_t i = 0; i < EnumNames<E>::count; ++i) names.emplace_back(EnumNames<E>::name(static_cast<E>(i)));
  return names;
}

/// EnumNames<E> for an enumeration the library's `to_string` names: `n` values, `description` in errors.
#define BARACUDA_PY_NAMED_BY_TO_STRING(E, n, description) \
  template <>                                              \
  struct EnumNames<E> : NamedByToString {                  \
    static constexpr std::size_t count = n;                \
    static constexpr const char* what = description;       \
  }

BARACUDA_PY_NAMED_BY_TO_STRING(ElementKind, kNumElementKinds, "element kind");
BARACUDA_PY_NAMED_BY_TO_STRING(BackendKind, 8, "backend");

/// A shape from a sequence of integers, and as a tuple.
Shape to_shape(const std::vector<int64_t>& dims);
nb::tuple from_shape(const Shape& s);

// ---- arrays -------------------------------------------------------------------------------------------

/// An array argument: any object nanobind takes as an ndarray (`__dlpack__`, the buffer protocol), or a
/// baracuda.Tensor (an array with an explicit element kind: fp8 or bf16 held in integer arrays).
struct TensorArg {
  nb::object array;
  std::optional<ElementKind> kind;
};

/// `value` as a tensor of `device` (`what` names it in errors); the array must be writable when `writable`.
DynTensor to_tensor(nb::handle value, const Stream& stream, const char* what, bool writable);

// ---- plans --------------------------------------------------------------------------------------------

/// One tensor of a plan's Args: its Python keyword and member (exactly one of `in`/`out` set).
template <class Args>
struct ArgField {
  const char* name;
  ConstDynTensor Args::*in = nullptr;
  DynTensor Args::*out = nullptr;
};
template <class Args>
ArgField<Args> input(const char* name, ConstDynTensor Args::*m) {
  return {name, m, nullptr};
}
template <class Args>
ArgField<Args> output(const char* name, DynTensor Args::*m) {
  return {name, nullptr, m};
}

/// Args from keyword arguments: every keyword must name a field; a field not given stays empty (the
/// plan's optional operands).
template <class Args>
Args make_args(const std::vector<ArgField<Args>>& fields, const Stream& stream, const nb::kwargs& kw) {
  Args args{};
  std::size_t used = 0;
  for (const auto& f : fields) {
    if (!kw.contains(f.name)) continue;
    ++used;
    const DynTensor t = to_tensor(kw[f.name], stream, f.name, f.out != nullptr);
    if (f.out != nullptr)
      args.*(f.out) = t;
    else
      args.*(f.in) = t;
  }
  if (used != static_cast<std::size_t>(PyDict_Size(kw.ptr()))) {
    std::string names;
    for (const auto& f : fields) names += (names.empty() ? "" : ", ") + std::string(f.name);
    throw nb::type_error(("unknown tensor argument (this plan takes: " + names + ")").c_str());
  }
  return args;
}

/// The workspace a Python object gives: None, or a writable array whose bytes are the workspace.
Workspace to_workspace(nb::handle value, const Stream& stream);

template <class Plan>
using DescriptorOf = std::decay_t<decltype(std::declval<const Plan&>().descriptor())>;

/// Binds an erased plan: `select(stream, descriptor, prefer_backend=None)`, `sku`, `descriptor`,
/// `workspace_size`, `can_implement(stream, **tensors)` and `run(stream, workspace=None, **tensors)`
/// (the GIL is released while it runs).
template <class Plan>
nb::class_<Plan> bind_plan(nb::module_& m, const char* name, std::vector<ArgField<typename Plan::Args>> fields,
                           const char* doc) {
  using Args = typename Plan::Args;
  using Desc = DescriptorOf<Plan>;
  nb::class_<Plan> c(m, name, doc);
  c.def_static(
       "select",
       [](const Stream& stream, const Desc& desc, std::optional<std::string> prefer_backend) {
         PlanPreference pref;
         if (prefer_backend) pref.prefer_backend = parse_name<BackendKind>(*prefer_backend);
         return unwrap(Plan::select(stream, desc, pref));
       },
       nb::arg("stream"), nb::arg("descriptor"), nb::arg("prefer_backend") = nb::none(),
       "Selects the kernel for `descriptor` on `stream`'s device (raises on an invalid or unsupported problem).")
      .def_prop_ro("sku", [](const Plan& p) { return to_string(p.sku()); }, "The kernel the plan runs.")
      .def_prop_ro("descriptor", [](const Plan& p) { return p.descriptor(); })
      .def_prop_ro("workspace_size", [](const Plan& p) { return p.workspace_size(); },
                   "Bytes of workspace `run` needs.")
      .def(
          "can_implement",
          [fields](const Plan& p, const Stream& stream, const nb::kwargs& kw) {
            check(p.can_implement(make_args(fields, stream, kw)));
          },
          nb::arg("stream"), nb::arg("kwargs"), "Raises unless the plan can run on these tensors.")
      .def(
          "run",
          [fields](const Plan& p, const Stream& stream, nb::handle workspace, const nb::kwargs& kw) {
            const Args args = make_args(fields, stream, kw);
            const Workspace ws = to_workspace(workspace, stream);
            Status s;
            {
              nb::gil_scoped_release unlocked;
              s = p.run(stream, ws, args);
            }
            check(s);
          },
          nb::arg("stream"), nb::arg("workspace") = nb::none(), nb::arg("kwargs"),
          "Runs the plan on `stream` with the named tensors (arrays with __dlpack__ or the buffer protocol).");
  return c;
}

/// Binds member `m`, of an enumeration, as a property that reads and writes its name.
template <class C, class E>
void enum_property(nb::class_<C>& c, const char* name, E C::*m, const char* doc) {
  c.def_prop_rw(
      name, [m](const C& o) { return std::string(EnumNames<E>::name(o.*m)); },
      [m](C& o, std::string_view v) { o.*m = parse_name<E>(v); }, doc);
}
/// Binds member `m`, a Shape, as a property that reads and writes a tuple of integers.
template <class C>
void shape_property(nb::class_<C>& c, const char* name, Shape C::*m, const char* doc) {
  c.def_prop_rw(
      name, [m](const C& o) { return from_shape(o.*m); },
      [m](C& o, const std::vector<int64_t>& v) { o.*m = to_shape(v); }, doc);
}

}  // namespace baracuda::python
