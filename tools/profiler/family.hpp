// What an op family gives the profiler: its problems, how to set one up on a device, and what it moves.
//
// Each family is one file under scenarios/ that defines a `Family` value; scenarios/registry.cpp lists
// them explicitly (no static self-registration, which static linking would drop).
#pragma once

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
  ElementKind out_dtype = ElementKind::F32;  ///< the output kind (== dtype unless the family converts)
  Shape shape;
  bool strided = false;  ///< operands are strided views (see operands.hpp) instead of dense tensors
};
/// "f32", or "f32->bf16" for converting families (always with the arrow).
std::string describe_kinds(const Problem& p, bool converts);

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
  /// The output operand, downloaded.
  virtual Result<HostTensor> output() const = 0;
};

/// How many bytes one run must read and write, and how many flops it does (0: not a compute-bound op).
struct Traffic {
  double bytes = 0;
  double flops = 0;
};

/// How outputs are compared with the host device's.
enum class Comparison {
  Exact,     ///< bit-exact (NaN equals NaN); mismatches count differing elements
  Tolerance  ///< |out - ref| <= atol + rtol * |ref| with the per-dtype table of verify.hpp
};

struct Family {
  std::string_view name;     ///< the --op name
  std::string_view summary;  ///< one line for --list and --help
  bool converts = false;     ///< takes --out-dtype (output kind may differ from the input kind)
  Comparison comparison = Comparison::Exact;
  /// The (dtype, out_dtype) pairs the default suite runs.
  std::vector<Problem> (*default_kinds)();
  /// The shapes the default suite runs on `device` (small on host/sim, realistic on cuda).
  std::vector<Shape> (*default_shapes)(DeviceKind device);
  /// Selects the plan for `problem` on `stream` and returns its SKU (what --list prints), or why not.
  Result<KernelSku> (*select)(const Stream& stream, const Problem& problem);
  /// Selects the plan on `stream` and prepares operands; the error of `select` when it fails.
  Result<std::unique_ptr<Instance>> (*prepare)(const Stream& stream, const Problem& problem);
  Traffic (*traffic)(const Problem& problem);
};

/// Every family, in the order --list and the default suite show them.
std::span<const Family> families();
const Family* find_family(std::string_view name);

/// Every element kind, in `ElementKind` order (for --list and dtype sweeps).
std::span<const ElementKind> all_kinds();

}  // namespace baracuda::profiler
