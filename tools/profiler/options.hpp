// Command-line options of baracuda-profiler.
#pragma once

#include <optional>
#include <string>

#include <baracuda/baracuda.hpp>

namespace baracuda::profiler {

enum class OutputFormat { Table, Csv, Json };

struct Options {
  bool help = false;
  bool list = false;
  std::string op;  ///< an op or family name; empty: all
  std::optional<ElementKind> dtype;
  std::optional<ElementKind> out_dtype;
  std::optional<Shape> shape;
  std::string device = "auto";  ///< auto | cuda | sim | host
  std::optional<int> warmup;    ///< default: see default_warmup()
  std::optional<int> repeat;    ///< default: see default_repeat()
  OutputFormat format = OutputFormat::Table;
  bool strided = false;
  std::optional<double> verify_limit;  ///< --verify-limit; default: see default_verify_limit()
};

/// Parses argv; `InvalidProblem` with a message naming the bad argument.
Result<Options> parse_options(int argc, const char* const* argv);
/// The --help text.
std::string usage();
/// Parses "4096x4096" (or "0", "257x259x3"); false when malformed.
bool parse_shape(std::string_view text, Shape* out);

int default_warmup(DeviceKind d);
int default_repeat(DeviceKind d);
/// Flops over which a case's host reference is skipped: 2e10 (about ten seconds of a CPU core).
double default_verify_limit();

}  // namespace baracuda::profiler
