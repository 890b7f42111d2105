// The profiler's results, and their table, CSV and JSON forms.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "options.hpp"

namespace baracuda::profiler {

enum class RowStatus {
  Passed,       ///< ran and matched the host device
  Failed,       ///< ran and did not match
  Unsupported,  ///< the plan cannot serve this case on this device (select or can_implement said so)
  Unverified,   ///< ran and was timed; the host reference was not run (over --verify-limit)
  Error,        ///< something else went wrong (a device error, an internal error)
};
std::string_view to_string(RowStatus s);

struct Row {
  std::string op;
  std::string kinds;   ///< "f32" or "f32->bf16"
  std::string shape;   ///< "4096x4096"
  std::string layout;  ///< "dense" or "strided"
  std::string sku;
  RowStatus status = RowStatus::Error;
  std::string message;  ///< why, for Unsupported/Error/Failed
  double time_s = 0;
  int repeats = 0;
  double bytes = 0;
  double flops = 0;
  double max_abs_error = 0;
  double max_rel_error = 0;
  int64_t mismatches = 0;
  int64_t checked = 0;
  std::string baseline;   ///< the scenario's baseline_name, when it was timed
  double baseline_s = 0;  ///< its median time (0: not timed)

  /// Baseline time over this time: > 1 when the plan is faster than the library routine.
  double speedup() const { return time_s > 0 && baseline_s > 0 ? baseline_s / time_s : 0; }

  double gbps() const { return time_s > 0 ? bytes / time_s * 1e-9 : 0; }
  double tflops() const { return time_s > 0 ? flops / time_s * 1e-12 : 0; }
};

/// What ran where: printed above the table and stored in the JSON.
struct RunInfo {
  std::string device;       ///< "cuda", "sim" or "host"
  std::string device_name;  ///< e.g. the GPU's name; empty for host/sim
  std::string note;         ///< e.g. why cuda was not used
};

void print_header(std::ostream& os, const RunInfo& info, OutputFormat format);
/// Prints the rows; the table form is aligned, so all rows are printed at once.
void print_rows(std::ostream& os, const RunInfo& info, const std::vector<Row>& rows, OutputFormat format);
/// CSV written row by row as the cases finish, so that a run stopped early (a time cap) keeps what it
/// measured: the header line, then one line per row.
void print_csv_header(std::ostream& os);
void print_csv_row(std::ostream& os, const RunInfo& info, const Row& r);

}  // namespace baracuda::profiler
