#include "runner.hpp"

#include <algorithm>
#include <cstdio>
#include <string>
#include <thread>

#include "timing.hpp"
#include "verify.hpp"

namespace baracuda::profiler {
namespace {

/// Unsupported when the plan declined (select said Unsupported, or can_implement rejected the operands the
/// profiler built, e.g. a strided view of a packed kind); Error otherwise.
Row fail(Row r, const Error& e, std::string_view stage) {
  const bool declined = e.code == ErrorCode::Unsupported || stage == "can_implement";
  r.status = declined ? RowStatus::Unsupported : RowStatus::Error;
  r.message = std::string(stage) + ": " + e.to_string();
  return r;
}

/// The outputs of the same plan selected on the host device over the same inputs.
Result<std::vector<HostTensor>> reference_outputs(const Scenario& scenario, const Problem& problem) {
  const Stream host = Stream::host();
  auto ref = scenario.prepare(host, problem);
  if (!ref) return ref.error();
  BARACUDA_TRY((*ref)->check());
  BARACUDA_TRY((*ref)->run(host));
  return (*ref)->outputs();
}

}  // namespace

std::string shape_text(const Shape& s) {
  if (s.rank == 0) return "scalar";
  std::string r;
  for (int i = 0; i < s.rank; ++i) {
    if (i) r += 'x';
    r += std::to_string(s.dims[i]);
  }
  return r;
}

std::string describe_kinds(const Scenario& s, const Problem& p) {
  std::string r(to_string(p.dtype));
  if (s.output != OutputKind::SameAsInput || p.out_dtype != p.dtype) r += "->" + std::string(to_string(p.out_dtype));
  return r;
}

Measured measure_case(const Scenario& scenario, const Problem& problem, const Stream& stream,
                      const RunSettings& settings) {
  Measured m;
  Row& r = m.row;
  r.op = std::string(scenario.name);
  r.kinds = describe_kinds(scenario, problem);
  r.shape = shape_text(problem.shape);
  r.layout = problem.strided ? "strided" : "dense";
  const Traffic t = scenario.traffic(problem);
  r.bytes = t.bytes;
  r.flops = t.flops;

  auto inst = scenario.prepare(stream, problem);
  if (!inst) return {fail(std::move(r), inst.error(), "select"), {}};
  r.sku = to_string((*inst)->sku());
  if (Status s = (*inst)->check(); !s) return {fail(std::move(r), s.error(), "can_implement"), {}};

  auto timing = measure(stream, [&] { return (*inst)->run(stream); }, settings.warmup, settings.repeat);
  if (!timing) return {fail(std::move(r), timing.error(), "run"), {}};
  r.time_s = timing->median_s;
  r.repeats = timing->repeats;
  if (scenario.baseline && stream.device() == DeviceKind::Cuda) {
    auto b = scenario.baseline(stream, problem, settings.warmup, settings.repeat);
    if (b) {
      r.baseline = std::string(scenario.baseline_name);
      r.baseline_s = *b;
    } else {
      r.message = "baseline not timed: " + b.error().to_string();
    }
  }

  auto out = (*inst)->outputs();
  if (!out) return {fail(std::move(r), out.error(), "download"), {}};
  m.outputs = std::move(out).value();
  m.ran = true;
  return m;
}

Row verify_case(const Scenario& scenario, const Problem& problem, Measured m, const RunSettings& settings) {
  Row r = std::move(m.row);
  if (!m.ran) return r;
  if (settings.verify_limit_flops > 0 && r.flops > settings.verify_limit_flops) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "not verified: the host reference would do %.3g flops (--verify-limit %.3g)",
                  r.flops, settings.verify_limit_flops);
    r.status = RowStatus::Unverified;
    r.message = r.message.empty() ? std::string(buf) : std::string(buf) + "; " + r.message;
    return r;
  }
  auto ref = reference_outputs(scenario, problem);
  if (!ref) return fail(std::move(r), ref.error(), "host reference");
  Verification v;
  if (m.outputs.size() != ref->size()) v.problem = "the device and the host reference have different outputs";
  for (size_t i = 0; i < m.outputs.size() && v.problem.empty(); ++i)
    v.merge(compare(m.outputs[i], (*ref)[i], scenario.comparison, scenario.terms_of(problem, i)));
  r.max_abs_error = v.max_abs_error;
  r.max_rel_error = v.max_rel_error;
  r.mismatches = v.mismatches;
  r.checked = v.checked;
  r.status = v.passed() ? RowStatus::Passed : RowStatus::Failed;
  if (!v.problem.empty()) r.message = v.problem;
  else if (!v.passed())
    r.message = std::to_string(v.mismatches) + " of " + std::to_string(v.checked) +
                " elements differ from the host device" + (r.message.empty() ? "" : "; " + r.message);
  return r;
}

unsigned verification_workers() {
  const unsigned hw = std::thread::hardware_concurrency();
  return std::clamp(hw > 2 ? hw - 2 : 1u, 1u, 8u);
}

Row run_case(const Scenario& scenario, const Problem& problem, const Stream& stream, const RunSettings& settings) {
  return verify_case(scenario, problem, measure_case(scenario, problem, stream, settings), settings);
}

}  // namespace baracuda::profiler
