// What the profiler knows about one op: its problems, how to set one up on a device, and what it moves.
//
// Each op family has one file under scenarios/ that appends its `Scenario`s (one per op of the family) to
// a list; scenarios/registry.cpp calls those functions from a list CMake writes from the files that are there
// (no static self-registration, which static linking would drop).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <baracuda/baracuda.hpp>

#include "operands.hpp"

namespace baracuda::profiler {

/// One problem: element kinds, logical shape, layout.
struct Problem {
  ElementKind dtype = ElementKind::F32;      ///< the input kind (the output kind of ops with no input)
  ElementKind out_dtype = ElementKind::F32;  ///< the output kind
  Shape shape;                               ///< the output's shape
  bool strided = false;  ///< operands are strided views (see operands.hpp) instead of dense tensors
  uint32_t variant = 0;  ///< the scenario's `variant` (which op of a family with several)
};

/// A plan selected on one device with its operands allocated and initialised (deterministically: the same
/// Problem gives the same inputs on every device).
class Instance {
 public:
  virtual ~Instance() = default;
  virtual KernelSku sku() const = 0;
  /// `can_implement` on the prepared operands.
  virtual Status check() const = 0;
  /// One launch (asynchronous on cuda).
  virtual Status run(const Stream& stream) = 0;
  /// The output operands, downloaded (in the order of the plan's arguments).
  virtual Result<std::vector<HostTensor>> outputs() const = 0;

  // What the conformance suite (tests/conformance) drives: the operands' views in the plan's argument order
  // (its inputs, then its outputs), and can_implement / run on views it gives, mutated ones included.
  virtual size_t input_count() const = 0;
  virtual std::vector<DynTensor> views() const = 0;
  virtual Status check_views(const std::vector<DynTensor>& views) const = 0;
  virtual Status run_views(const Stream& stream, Workspace workspace, const std::vector<DynTensor>& views) const = 0;
  /// The workspace prepared for run (workspace_size() bytes).
  virtual Workspace workspace() const = 0;
  /// Operand `i` (of `views()`), downloaded with its own view.
  virtual Result<HostTensor> download_operand(size_t i) const = 0;
};

/// How many bytes one run must read and write, and how many flops it does (0: not a compute-bound op).
struct Traffic {
  double bytes = 0;
  double flops = 0;
};

/// How outputs are compared with the host device's.
enum class Comparison {
  Exact,     ///< bit-exact (NaN equals NaN); mismatches count differing elements
  Tolerance,  ///< |out - ref| <= atol + rtol * |ref| with the per-dtype table of verify.hpp
  /// Tolerance, and integer outputs within one step: a value quantized from a float the device computes with a
  /// different rounding than the host (a fused norm's y) moves by one where it sits on a rounding boundary.
  QuantizedStep,
};

/// What the output kind of an op is.
enum class OutputKind {
  SameAsInput,  ///< out_dtype = dtype
  Chosen,       ///< any kind, --out-dtype (a cast)
  Bool,         ///< always bool (a comparison)
};

struct Scenario {
  std::string_view name;     ///< the --op name ("fill", "add", ...)
  std::string_view family;   ///< the family ("fill", "binary", ...); --op accepts it too
  std::string_view summary;  ///< one line for --list
  uint32_t variant = 0;      ///< passed to every function below in Problem::variant
  OutputKind output = OutputKind::SameAsInput;
  Comparison comparison = Comparison::Exact;
  /// The kinds the default suite runs (shape left empty).
  std::vector<Problem> (*default_kinds)(uint32_t variant);
  /// The shapes the default suite runs on `device` (small on host/sim, realistic on cuda).
  std::vector<Shape> (*default_shapes)(DeviceKind device);
  /// Selects the plan for `problem` on `stream` and returns its SKU (what --list prints), or why not.
  Result<KernelSku> (*select)(const Stream& stream, const Problem& problem);
  /// Selects the plan on `stream` and prepares operands; the error of `select` when it fails.
  Result<std::unique_ptr<Instance>> (*prepare)(const Stream& stream, const Problem& problem);
  Traffic (*traffic)(const Problem& problem);
  /// The library routine this op is compared with on cuda ("cuBLAS f16 GEMM"); empty when there is none.
  std::string_view baseline_name = {};
  /// The baseline's median time for `problem` on `stream` (a cuda stream), timed as the plan is; null when
  /// there is none.
  Result<double> (*baseline)(const Stream& stream, const Problem& problem, int warmup, int repeat) = nullptr;
  /// How many terms each element of output `output` sums (a reduction's length: a norm's weight gradient sums
  /// over the rows), which widens Comparison::Tolerance's absolute bound (verify.hpp); null: 1 for every output.
  int64_t (*summed_terms)(const Problem& problem, size_t output) = nullptr;

  /// The terms output `output` sums per element (1 without summed_terms).
  int64_t terms_of(const Problem& problem, size_t output) const {
    return summed_terms != nullptr ? summed_terms(problem, output) : 1;
  }
  /// Whether `--op name` selects this scenario (its own name or its family's).
  bool matches(std::string_view op) const { return op.empty() || op == name || op == family; }
  /// The output kind for input kind `in` (`chosen` when the op lets the caller choose).
  ElementKind output_kind(ElementKind in, ElementKind chosen) const {
    return output == OutputKind::Chosen ? chosen : output == OutputKind::Bool ? ElementKind::Bool : in;
  }
};

/// Every scenario, in the order --list and the default suite show them.
std::span<const Scenario> scenarios();

/// "f32", or "f32->bf16" when the op's output kind is not its input kind.
std::string describe_kinds(const Scenario& s, const Problem& p);

/// Every element kind, in `ElementKind` order (for --list and dtype sweeps).
std::span<const ElementKind> all_kinds();

}  // namespace baracuda::profiler
