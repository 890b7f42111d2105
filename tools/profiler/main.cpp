// baracuda-profiler: runs plans on a device, verifies them against the host device, reports time,
// bandwidth and error. See --help and docs/profiler.md.
#include <iostream>
#include <string>
#include <vector>

#include "device.hpp"
#include "family.hpp"
#include "options.hpp"
#include "report.hpp"
#include "runner.hpp"

namespace bp = baracuda::profiler;
using baracuda::ElementKind;

namespace {

/// --list: every (op, kinds) the chosen device's plans accept, with the SKU `select` resolves to.
int list_plans(const bp::Options& o, const bp::DeviceChoice& device) {
  std::vector<std::vector<std::string>> rows;
  for (const bp::Family& f : bp::families()) {
    if (!o.op.empty() && f.name != o.op) continue;
    for (ElementKind in : bp::all_kinds()) {
      if (o.dtype && in != *o.dtype) continue;
      for (ElementKind out : bp::all_kinds()) {
        if (!f.converts && out != in) continue;
        if (o.out_dtype && out != *o.out_dtype) continue;
        const bp::Problem p{in, out, o.shape.value_or(baracuda::Shape{1024}), o.strided};
        auto sku = f.select(device.stream, p);
        if (sku) rows.push_back({std::string(f.name), bp::describe_kinds(p, f.converts), to_string(*sku)});
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

/// The cases to run: the default suite, narrowed or overridden by --op/--dtype/--out-dtype/--shape.
baracuda::Result<std::vector<std::pair<const bp::Family*, bp::Problem>>> plan_cases(const bp::Options& o,
                                                                                     baracuda::DeviceKind device) {
  std::vector<std::pair<const bp::Family*, bp::Problem>> cases;
  for (const bp::Family& f : bp::families()) {
    if (!o.op.empty() && f.name != o.op) continue;
    std::vector<bp::Problem> kinds;
    if (o.dtype) {
      const ElementKind out = o.out_dtype.value_or(*o.dtype);
      if (!f.converts && out != *o.dtype) {
        if (!o.op.empty())
          return baracuda::Error::invalid("baracuda-profiler: " + o.op + " has no --out-dtype (its output kind is its input kind)");
        continue;
      }
      kinds.push_back({*o.dtype, out, {}, false});
    } else {
      kinds = f.default_kinds();
    }
    const std::vector<baracuda::Shape> shapes = o.shape ? std::vector{*o.shape} : f.default_shapes(device);
    for (bp::Problem p : kinds)
      for (const baracuda::Shape& s : shapes) {
        p.shape = s;
        p.strided = o.strided;
        cases.emplace_back(&f, p);
      }
  }
  if (!o.op.empty() && !bp::find_family(o.op)) {
    std::string known;
    for (const bp::Family& f : bp::families()) known += (known.empty() ? "" : ", ") + std::string(f.name);
    return baracuda::Error::invalid("baracuda-profiler: unknown op '" + o.op + "' (known: " + known + ")");
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
  const bp::RunSettings settings{o.warmup.value_or(bp::default_warmup(kind)), o.repeat.value_or(bp::default_repeat(kind))};
  std::vector<bp::Row> rows;
  int count[4] = {0, 0, 0, 0};  // indexed by RowStatus
  for (const auto& [family, problem] : *cases) {
    rows.push_back(bp::run_case(*family, problem, device->stream, settings));
    ++count[static_cast<int>(rows.back().status)];
  }
  bp::print_rows(std::cout, device->info, rows, o.format);
  const int passed = count[0], failed = count[1], unsupported = count[2], errors = count[3];
  if (o.format == bp::OutputFormat::Table)
    std::cout << rows.size() << " cases: " << passed << " passed, " << failed << " failed, " << unsupported
              << " unsupported, " << errors << " errors\n";
  return failed + errors > 0 || passed == 0 ? 1 : 0;
}
