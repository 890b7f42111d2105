// baracuda-profiler: runs plans on a device, verifies them against the host device, reports time,
// bandwidth and error. See --help and docs/profiler.md.
#include <algorithm>
#include <deque>
#include <future>
#include <iostream>
#include <string>
#include <vector>

#include "device.hpp"
#include "scenario.hpp"
#include "options.hpp"
#include "report.hpp"
#include "runner.hpp"

namespace bp = baracuda::profiler;
using baracuda::ElementKind;

namespace {

/// --list: every (op, kinds) the chosen device's plans accept, with the SKU `select` resolves to.
int list_plans(const bp::Options& o, const bp::DeviceChoice& device) {
  std::vector<std::vector<std::string>> rows;
  for (const bp::Scenario& sc : bp::scenarios()) {
    if (!sc.matches(o.op)) continue;
    for (ElementKind in : bp::all_kinds()) {
      if (o.dtype && in != *o.dtype) continue;
      for (ElementKind chosen : bp::all_kinds()) {
        const ElementKind out = sc.output_kind(in, chosen);
        if (out != chosen) continue;  // one row per input kind unless the op lets the output kind vary
        if (o.out_dtype && out != *o.out_dtype) continue;
        const bp::Problem p{in, out, o.shape.value_or(baracuda::Shape{1024}), o.strided, sc.variant};
        auto sku = sc.select(device.stream, p);
        if (sku) rows.push_back({std::string(sc.name), bp::describe_kinds(sc, p), to_string(*sku)});
      }
    }
  }
  size_t w0 = 2, w1 = 5;
  for (const auto& r : rows) w0 = std::max(w0, r[0].size()), w1 = std::max(w1, r[1].size());
  auto line = [&](const std::string& a, const std::string& b, const std::string& c) {
    std::cout << a << std::string(w0 - a.size() + 2, ' ') << b << std::string(w1 - b.size() + 2, ' ') << c << '\n';
  };
  line("op", "kinds", "sku");
  for (const auto& r : rows) line(r[0], r[1], r[2]);
  std::cout << rows.size() << " plans on the " << device.info.device << " device\n";
  return rows.empty() ? 1 : 0;
}

using Case = std::pair<const bp::Scenario*, bp::Problem>;

/// The cases to run: the default suite, narrowed or overridden by --op/--dtype/--out-dtype/--shape.
baracuda::Result<std::vector<Case>> plan_cases(const bp::Options& o, baracuda::DeviceKind device) {
  std::vector<Case> cases;
  bool known = o.op.empty();
  for (const bp::Scenario& sc : bp::scenarios()) {
    if (!sc.matches(o.op)) continue;
    known = true;
    std::vector<bp::Problem> kinds;
    if (o.dtype) {
      const ElementKind out = sc.output_kind(*o.dtype, o.out_dtype.value_or(*o.dtype));
      if (o.out_dtype && out != *o.out_dtype) {
        if (o.op == sc.name)
          return baracuda::Error::invalid("baracuda-profiler: the output kind of " + o.op + " is " +
                                          std::string(to_string(out)) + ", not --out-dtype " +
                                          std::string(to_string(*o.out_dtype)));
        continue;
      }
      kinds.push_back({*o.dtype, out, {}, false, sc.variant});
    } else {
      kinds = sc.default_kinds(sc.variant);
    }
    const std::vector<baracuda::Shape> shapes = o.shape ? std::vector{*o.shape} : sc.default_shapes(device);
    for (bp::Problem p : kinds)
      for (const baracuda::Shape& s : shapes) {
        p.shape = s;
        p.strided = o.strided;
        p.variant = sc.variant;
        cases.emplace_back(&sc, p);
      }
  }
  if (!known) {
    std::vector<std::string_view> families;
    for (const bp::Scenario& sc : bp::scenarios())
      if (std::find(families.begin(), families.end(), sc.family) == families.end()) families.push_back(sc.family);
    std::string names;
    for (std::string_view f : families) names += (names.empty() ? "" : ", ") + std::string(f);
    return baracuda::Error::invalid("baracuda-profiler: unknown op '" + o.op + "' (families: " + names +
                                    "; --list shows every op)");
  }
  return cases;
}

}  // namespace

int main(int argc, char** argv) {
  auto parsed = bp::parse_options(argc, argv);
  if (!parsed) {
    std::cerr << parsed.error().message << '\n';
    return 2;
  }
  const bp::Options& o = *parsed;
  if (o.help) {
    std::cout << bp::usage();
    return 0;
  }
  auto device = bp::choose_device(o.device);
  if (!device) {
    std::cerr << "baracuda-profiler: --device " << o.device << ": " << device.error().to_string() << '\n';
    return 3;  // the device is not usable here (CTest treats this as a skip)
  }
  if (o.list) {
    bp::print_header(std::cout, device->info, bp::OutputFormat::Table);
    return list_plans(o, *device);
  }
  auto cases = plan_cases(o, device->stream.device());
  if (!cases) {
    std::cerr << cases.error().message << '\n';
    return 2;
  }
  if (o.format != bp::OutputFormat::Table && !device->info.note.empty())
    std::cerr << "note: " << device->info.note << '\n';
  bp::print_header(std::cout, device->info, o.format);

  const baracuda::DeviceKind kind = device->stream.device();
  const bp::RunSettings settings{o.warmup.value_or(bp::default_warmup(kind)), o.repeat.value_or(bp::default_repeat(kind)),
                                 o.verify_limit.value_or(bp::default_verify_limit())};
  std::vector<bp::Row> rows;
  int count[5] = {0, 0, 0, 0, 0};  // indexed by RowStatus
  // On cuda the host half of each case (the reference run and the comparison, seconds for 10^7 elements)
  // overlaps the timing of the next cases on the GPU, on up to `workers` threads. On sim and host the
  // timing itself runs on the CPU, so the cases run one after the other.
  const unsigned workers = kind == baracuda::DeviceKind::Cuda ? bp::verification_workers() : 0;
  std::deque<std::future<bp::Row>> pending;
  // CSV rows go out as they finish (in case order), so that a run stopped by a time cap keeps them.
  const bool stream_csv = o.format == bp::OutputFormat::Csv;
  if (stream_csv) bp::print_csv_header(std::cout);
  auto add = [&](bp::Row r) {
    if (stream_csv) bp::print_csv_row(std::cout, device->info, r), std::cout.flush();
    rows.push_back(std::move(r));
  };
  auto collect = [&] {
    add(pending.front().get());
    pending.pop_front();
  };
  for (const auto& [scenario, problem] : *cases) {
    bp::Measured m = bp::measure_case(*scenario, problem, device->stream, settings);
    if (workers == 0) {
      add(bp::verify_case(*scenario, problem, std::move(m), settings));
      continue;
    }
    pending.push_back(
        std::async(std::launch::async, bp::verify_case, std::cref(*scenario), problem, std::move(m), settings));
    while (pending.size() > workers) collect();
  }
  while (!pending.empty()) collect();
  for (const bp::Row& r : rows) ++count[static_cast<int>(r.status)];
  if (!stream_csv) bp::print_rows(std::cout, device->info, rows, o.format);
  const int passed = count[0], failed = count[1], unsupported = count[2], timed = count[3], errors = count[4];
  if (o.format == bp::OutputFormat::Table)
    std::cout << rows.size() << " cases: " << passed << " passed, " << failed << " failed, " << unsupported
              << " unsupported, " << errors << " errors, " << timed << " timed without the host check\n";
  return failed + errors > 0 || passed + timed == 0 ? 1 : 0;
}
