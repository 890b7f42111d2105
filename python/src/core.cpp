// The core of baracuda._core: exceptions, streams, arrays as tensors, workspaces.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

#include "common.hpp"

namespace baracuda::python {

BARACUDA_PY_NAMED_BY_TO_STRING(DeviceKind, 3, "device");

// ---- errors -------------------------------------------------------------------------------------------

namespace {
PyObject* g_errors[7] = {};  // by ErrorCode
PyObject* g_base = nullptr;

PyObject* new_error(nb::module_& m, const char* name, PyObject* builtin, const char* doc) {
  const std::string qualified = std::string("baracuda.") + name;
  nb::object bases = nb::make_tuple(nb::handle(g_base), nb::handle(builtin));
  PyObject* cls = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, bases.ptr(), nullptr);
  if (cls == nullptr) throw nb::python_error();
  m.attr(name) = nb::handle(cls);
  return cls;
}
}  // namespace

void bind_errors(nb::module_& m) {
  g_base = PyErr_NewExceptionWithDoc("baracuda.Error", "Base of every error baracuda raises.", PyExc_Exception,
                                     nullptr);
  if (g_base == nullptr) throw nb::python_error();
  m.attr("Error") = nb::handle(g_base);
  auto at = [](ErrorCode c) -> PyObject*& { return g_errors[static_cast<int>(c)]; };
  at(ErrorCode::Unsupported) = new_error(m, "Unsupported", PyExc_NotImplementedError,
                                         "A valid request this build, device or plan cannot serve.");
  at(ErrorCode::InvalidProblem) = new_error(m, "InvalidProblem", PyExc_ValueError,
                                            "The request itself is wrong (shape, dtype, parameter).");
  at(ErrorCode::MisalignedOperand) = new_error(m, "MisalignedOperand", PyExc_ValueError,
                                               "A pointer or stride violates a documented alignment rule.");
  at(ErrorCode::WorkspaceTooSmall) =
      new_error(m, "WorkspaceTooSmall", PyExc_ValueError, "The workspace is smaller than the plan needs.");
  at(ErrorCode::BufferTooSmall) = new_error(m, "BufferTooSmall", PyExc_ValueError, "A buffer is too small.");
  at(ErrorCode::DeviceError) = new_error(m, "DeviceError", PyExc_RuntimeError, "The device (or the emulator) failed.");
  at(ErrorCode::Internal) = new_error(m, "InternalError", PyExc_RuntimeError, "A bug in baracuda.");
}

void raise(const Error& e) {
  PyObject* cls = g_errors[static_cast<int>(e.code)];
  PyErr_SetString(cls != nullptr ? cls : PyExc_RuntimeError, e.message.c_str());
  throw nb::python_error();
}

// ---- shapes -------------------------------------------------------------------------------------------

Shape to_shape(const std::vector<int64_t>& dims) {
  if (dims.size() > static_cast<std::size_t>(kMaxRank))
    throw nb::value_error(("rank " + std::to_string(dims.size()) + " is above the maximum " +
                           std::to_string(kMaxRank))
                              .c_str());
  Shape s;
  s.rank = static_cast<int>(dims.size());
  for (std::size_t i = 0; i < dims.size(); ++i) s.dims[i] = dims[i];
  return s;
}

nb::tuple from_shape(const Shape& s) {
  nb::list dims;
  for (int i = 0; i < s.rank; ++i) dims.append(s.dims[i]);
  return nb::tuple(dims);
}

// ---- arrays -------------------------------------------------------------------------------------------

namespace {

using AnyArray = nb::ndarray<nb::ro>;

// DLPack's device types.
constexpr int kDLCPU = 1, kDLCUDA = 2, kDLCUDAHost = 3, kDLCUDAManaged = 13;

std::optional<ElementKind> kind_of(nb::dlpack::dtype t) {
  using C = nb::dlpack::dtype_code;
  if (t.lanes != 1) return std::nullopt;
  switch (static_cast<C>(t.code)) {
    case C::Float: return t.bits == 16 ? ElementKind::F16 : t.bits == 32 ? ElementKind::F32
                        : t.bits == 64 ? std::optional(ElementKind::F64) : std::nullopt;
    case C::Bfloat: return t.bits == 16 ? std::optional(ElementKind::Bf16) : std::nullopt;
    case C::Int: return t.bits == 8 ? ElementKind::S8 : t.bits == 32 ? ElementKind::S32
                      : t.bits == 64 ? std::optional(ElementKind::S64) : std::nullopt;
    case C::UInt: return t.bits == 8 ? ElementKind::U8 : t.bits == 32 ? std::optional(ElementKind::U32)
                                                                      : std::nullopt;
    case C::Bool: return t.bits == 8 ? std::optional(ElementKind::Bool) : std::nullopt;
    case C::Float8_E4M3FN: return ElementKind::Fp8E4M3;
    case C::Float8_E5M2: return ElementKind::Fp8E5M2;
    default: return std::nullopt;
  }
}

std::string describe(nb::dlpack::dtype t) {
  return "dtype code " + std::to_string(t.code) + ", " + std::to_string(t.bits) + " bits, " +
         std::to_string(t.lanes) + " lanes";
}

[[noreturn]] void invalid(const std::string& what) { raise(Error::invalid(what)); }

void check_device(const AnyArray& a, const Stream& stream, const char* what) {
  const int type = a.device_type();
  if (stream.device() == DeviceKind::Cuda) {
    if ((type != kDLCUDA && type != kDLCUDAManaged) || a.device_id() != stream.device_index())
      invalid(std::string(what) + ": the plan runs on cuda device " + std::to_string(stream.device_index()) +
              ", the array is not in that device's memory (DLPack device type " + std::to_string(type) + ", id " +
              std::to_string(a.device_id()) + ")");
  } else if (type != kDLCPU && type != kDLCUDAHost && type != kDLCUDAManaged) {
    invalid(std::string(what) + ": the " + std::string(to_string(stream.device())) +
            " device reads host memory; the array is on DLPack device type " + std::to_string(type));
  }
}

}  // namespace

DynTensor to_tensor(nb::handle value, const Stream& stream, const char* what, bool writable) {
  std::optional<ElementKind> kind;
  nb::handle array = value;
  if (nb::isinstance<TensorArg>(value)) {
    const TensorArg& t = nb::cast<const TensorArg&>(value);
    array = t.array;
    kind = t.kind;
  }
  AnyArray a;
  if (!nb::try_cast(array, a, /*convert=*/false))
    throw nb::type_error((std::string(what) + ": expected an array (an object with __dlpack__ or the buffer "
                                              "protocol), got " +
                          std::string(nb::str(array.type()).c_str()))
                             .c_str());
  if (writable) {
    nb::ndarray<> w;
    if (!nb::try_cast(array, w, false)) invalid(std::string(what) + ": the output array is read-only");
  }
  check_device(a, stream, what);
  const std::optional<ElementKind> natural = kind_of(a.dtype());
  if (!kind) {
    if (!natural) invalid(std::string(what) + ": no element kind has the array's dtype (" + describe(a.dtype()) + ")");
    kind = natural;
  } else if (element_bits(*kind) == 4) {
    if (a.dtype().bits != 8 || a.dtype().lanes != 1)
      invalid(std::string(what) + ": a " + std::string(to_string(*kind)) +
              " tensor is packed in an array of bytes (two values per byte), not " + describe(a.dtype()));
  } else if (element_bits(*kind) != a.dtype().bits || a.dtype().lanes != 1) {
    invalid(std::string(what) + ": a " + std::string(to_string(*kind)) + " tensor needs an array of " +
            std::to_string(element_bits(*kind)) + "-bit elements (" + describe(a.dtype()) + ")");
  }
  if (a.ndim() > static_cast<std::size_t>(kMaxRank))
    invalid(std::string(what) + ": rank " + std::to_string(a.ndim()) + " is above the maximum " +
            std::to_string(kMaxRank));
  DynTensor t;
  t.data = const_cast<void*>(a.data());
  t.kind = *kind;
  t.shape.rank = static_cast<int>(a.ndim());
  for (std::size_t i = 0; i < a.ndim(); ++i) {
    t.shape.dims[i] = static_cast<int64_t>(a.shape(i));
    t.stride[i] = a.stride(i);  // in elements, as DynTensor's
  }
  if (element_bits(*kind) == 4) {  // bytes [..., L] hold the values [..., 2L], the even index in the low nibble
    if (a.ndim() == 0) invalid(std::string(what) + ": a packed 4-bit tensor needs rank >= 1");
    const auto bytes = t.stride;
    t.shape.dims[a.ndim() - 1] *= 2;
    t.stride = detail::DynTensorLayout::dense_strides(t.shape);
    for (std::size_t i = 0; i < a.ndim(); ++i)  // the bytes row-major: byte strides are half the value strides
      if (a.shape(i) > 1 && (i + 1 == a.ndim() ? bytes[i] != 1 : bytes[i] * 2 != t.stride[i]))
        invalid(std::string(what) + ": a packed 4-bit tensor must be contiguous");
  }
  return t;
}

Workspace to_workspace(nb::handle value, const Stream& stream) {
  if (value.is_none()) return {};
  nb::ndarray<> a;
  if (!nb::try_cast(value, a, false))
    throw nb::type_error("workspace: expected None or a writable array (its bytes are the workspace)");
  check_device(AnyArray(a), stream, "workspace");
  return Workspace(a.data(), a.nbytes());
}

// ---- module -------------------------------------------------------------------------------------------

void bind_core(nb::module_& m) {
  nb::class_<Stream>(m, "Stream",
                     "Where a plan runs: `host` (the C++ reference), `sim` (the CUDA kernels on the CPU, through "
                     "the SIMT emulator) or `cuda` (a GPU and one of its CUDA streams).")
      .def_static("host", &Stream::host)
      .def_static("sim", &Stream::sim)
      .def_static(
          "cuda",
          [](int device, std::uintptr_t handle) {
            return unwrap(Stream::cuda(device, reinterpret_cast<cudaStream_t>(handle)));
          },
          nb::arg("device") = 0, nb::arg("handle") = 0,
          "A stream of cuda device `device`; `handle` is a cudaStream_t as an integer (0: the legacy default "
          "stream), e.g. torch.cuda.current_stream().cuda_stream.")
      .def_prop_ro("device", [](const Stream& s) { return std::string(to_string(s.device())); })
      .def_prop_ro("device_index", &Stream::device_index)
      .def_prop_ro("handle", [](const Stream& s) { return reinterpret_cast<std::uintptr_t>(s.cuda_stream()); })
      .def("synchronize", [](const Stream& s) {
        Status st;
        {
          nb::gil_scoped_release unlocked;
          st = s.synchronize();
        }
        check(st);
      })
      .def("__repr__", [](const Stream& s) {
        return "baracuda.Stream(" + std::string(to_string(s.device())) +
               (s.device() == DeviceKind::Cuda ? ", " + std::to_string(s.device_index()) : std::string()) + ")";
      });

  nb::class_<TensorArg>(m, "Tensor",
                        "An array with an explicit element kind, for the kinds no DLPack dtype names portably: "
                        "`Tensor(a.view(numpy.uint8), 'fp8e4m3')`, `Tensor(a.view(numpy.uint16), 'bf16')`. The "
                        "array's elements must have the kind's width.")
      .def(
          "__init__",
          [](TensorArg* t, nb::object array, std::optional<std::string> kind) {
            new (t) TensorArg{std::move(array), kind ? std::optional(parse_name<ElementKind>(*kind)) : std::nullopt};
          },
          nb::arg("array"), nb::arg("kind") = nb::none())
      .def_prop_ro("array", [](const TensorArg& t) { return t.array; })
      .def_prop_ro("kind", [](const TensorArg& t) {
        return t.kind ? std::optional(std::string(to_string(*t.kind))) : std::nullopt;
      });

  m.def("element_kinds", &all_names<ElementKind>, "The element kinds' names.");
  m.def("element_bits", [](std::string_view kind) { return element_bits(parse_name<ElementKind>(kind)); },
        "Bits per element of a kind.");
  m.def(
      "data_pointer",
      [](nb::handle value) {
        return reinterpret_cast<std::uintptr_t>(to_tensor(value, Stream::host(), "array", false).data);
      },
      nb::arg("array"),
      "The address baracuda reads for a host array (or a Tensor): what a plan would use, without a copy.");
  m.def("cuda_available", [] { return cuda_availability().usable; },
        "Whether a CUDA device is usable (the cuda device's plans can run).");
  m.def("cuda_unavailable_reason", [] { return cuda_availability().reason; });
}

}  // namespace baracuda::python
