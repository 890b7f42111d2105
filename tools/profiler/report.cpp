#include "report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include <nlohmann/json.hpp>

namespace baracuda::profiler {
namespace {

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}
std::string err_text(double e) { return e == 0 ? "0" : fmt("%.2e", e); }

bool ran(const Row& r) {
  return r.status == RowStatus::Passed || r.status == RowStatus::Failed || r.status == RowStatus::Unverified;
}
bool verified(const Row& r) { return r.status == RowStatus::Passed || r.status == RowStatus::Failed; }

/// A JSON number, or null where the figure does not exist (not timed, no reference).
nlohmann::json json_number(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

std::string csv_field(std::string_view s) {
  if (s.find_first_of(",\"\n") == std::string_view::npos) return std::string(s);
  std::string r = "\"";
  for (char c : s) r += c == '"' ? std::string("\"\"") : std::string(1, c);
  return r + "\"";
}

void print_table(std::ostream& os, const std::vector<Row>& rows) {
  const bool any_flops = std::any_of(rows.begin(), rows.end(), [](const Row& r) { return r.flops > 0; });
  std::vector<std::string> head = {"op", "kinds", "shape", "layout", "sku", "time(us)", "GB/s"};
  if (any_flops) head.push_back("TFLOP/s");
  std::string baseline;
  for (const Row& r : rows)
    if (r.baseline_s > 0) baseline = r.baseline;
  if (!baseline.empty()) head.push_back("speedup");
  for (const char* h : {"max_abs_err", "max_rel_err", "mismatches", "status"}) head.push_back(h);

  std::vector<std::vector<std::string>> cells;
  for (const Row& r : rows) {
    std::vector<std::string> c = {r.op, r.kinds, r.shape, r.layout, r.sku.empty() ? "-" : r.sku};
    const bool timed = ran(r);
    c.push_back(timed ? fmt("%.2f", r.time_s * 1e6) : "-");
    c.push_back(timed ? fmt("%.1f", r.gbps()) : "-");
    if (any_flops) c.push_back(timed && r.flops > 0 ? fmt("%.2f", r.tflops()) : "-");
    if (!baseline.empty()) c.push_back(r.speedup() > 0 ? fmt("%.2fx", r.speedup()) : "-");
    const bool compared = verified(r);
    c.push_back(compared ? err_text(r.max_abs_error) : "-");
    c.push_back(compared ? err_text(r.max_rel_error) : "-");
    c.push_back(compared ? std::to_string(r.mismatches) : "-");
    c.push_back(std::string(to_string(r.status)));
    cells.push_back(std::move(c));
  }
  std::vector<size_t> width(head.size());
  for (size_t i = 0; i < head.size(); ++i) width[i] = head[i].size();
  for (const auto& c : cells)
    for (size_t i = 0; i < c.size(); ++i) width[i] = std::max(width[i], c[i].size());
  auto line = [&](const std::vector<std::string>& c) {
    std::string s;
    for (size_t i = 0; i < c.size(); ++i) {
      s += c[i];
      if (i + 1 < c.size()) s += std::string(width[i] - c[i].size() + 2, ' ');
    }
    os << s << '\n';
  };
  line(head);
  for (const auto& c : cells) line(c);
  if (!baseline.empty()) os << "speedup: the time of " << baseline << " on the same shape over this time\n";
  for (const Row& r : rows)
    if (!r.message.empty())
      os << "  " << r.op << ' ' << r.kinds << ' ' << r.shape << ' ' << r.layout << ": " << to_string(r.status)
         << ": " << r.message << '\n';
}

void print_csv(std::ostream& os, const RunInfo& info, const std::vector<Row>& rows) {
  print_csv_header(os);
  for (const Row& r : rows) print_csv_row(os, info, r);
}

void print_json(std::ostream& os, const RunInfo& info, const std::vector<Row>& rows) {
  nlohmann::ordered_json doc = {{"device", info.device}, {"device_name", info.device_name}, {"note", info.note}};
  nlohmann::ordered_json& out = doc["rows"] = nlohmann::ordered_json::array();
  for (const Row& r : rows)
    out.push_back({{"op", r.op},
                   {"kinds", r.kinds},
                   {"shape", r.shape},
                   {"layout", r.layout},
                   {"sku", r.sku},
                   {"status", to_string(r.status)},
                   {"time_us", json_number(r.time_s * 1e6)},
                   {"repeats", r.repeats},
                   {"bytes", json_number(r.bytes)},
                   {"gbps", json_number(r.gbps())},
                   {"flops", json_number(r.flops)},
                   {"tflops", json_number(r.tflops())},
                   {"max_abs_err", json_number(r.max_abs_error)},
                   {"max_rel_err", json_number(r.max_rel_error)},
                   {"mismatches", r.mismatches},
                   {"checked", r.checked},
                   {"baseline", r.baseline},
                   {"baseline_us", json_number(r.baseline_s * 1e6)},
                   {"speedup", json_number(r.speedup())},
                   {"message", r.message}});
  // Invalid UTF-8 in a message is replaced, never thrown on.
  os << doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
}

}  // namespace

std::string_view to_string(RowStatus s) {
  switch (s) {
    case RowStatus::Passed: return "ok";
    case RowStatus::Failed: return "FAILED";
    case RowStatus::Unsupported: return "unsupported";
    case RowStatus::Unverified: return "timed";
    case RowStatus::Error: return "ERROR";
  }
  return "?";
}

void print_header(std::ostream& os, const RunInfo& info, OutputFormat format) {
  if (format != OutputFormat::Table) return;
  os << "device: " << info.device;
  if (!info.device_name.empty()) os << " (" << info.device_name << ")";
  os << '\n';
  if (!info.note.empty()) os << "note: " << info.note << '\n';
}

void print_csv_header(std::ostream& os) {
  os << "device,op,kinds,shape,layout,sku,status,time_us,repeats,bytes,gbps,flops,tflops,max_abs_err,"
        "max_rel_err,mismatches,checked,baseline,baseline_us,speedup,message\n";
}

void print_csv_row(std::ostream& os, const RunInfo& info, const Row& r) {
  os << info.device << ',' << r.op << ',' << r.kinds << ',' << r.shape << ',' << r.layout << ','
     << csv_field(r.sku) << ',' << to_string(r.status) << ',' << fmt("%.3f", r.time_s * 1e6) << ','
     << r.repeats << ',' << fmt("%.0f", r.bytes) << ',' << fmt("%.3f", r.gbps()) << ',' << fmt("%.0f", r.flops)
     << ',' << fmt("%.4f", r.tflops()) << ',' << fmt("%.6g", r.max_abs_error) << ',' << fmt("%.6g", r.max_rel_error)
     << ',' << r.mismatches << ',' << r.checked << ',' << csv_field(r.baseline) << ','
     << fmt("%.3f", r.baseline_s * 1e6) << ',' << fmt("%.4f", r.speedup()) << ',' << csv_field(r.message) << '\n';
}

void print_rows(std::ostream& os, const RunInfo& info, const std::vector<Row>& rows, OutputFormat format) {
  switch (format) {
    case OutputFormat::Table: print_table(os, rows); break;
    case OutputFormat::Csv: print_csv(os, info, rows); break;
    case OutputFormat::Json: print_json(os, info, rows); break;
  }
}

}  // namespace baracuda::profiler
