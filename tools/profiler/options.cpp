#include "options.hpp"

#include <charconv>
#include <cstdlib>
#include <string>
#include <string_view>
#include <tuple>

#include <CLI/CLI.hpp>

namespace baracuda::profiler {
namespace {

bool parse_int(std::string_view s, int64_t* out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size();
}

Error bad(const std::string& what) { return Error::invalid("baracuda-profiler: " + what + " (see --help)"); }

}  // namespace

bool parse_shape(std::string_view text, Shape* out) {
  Shape s;
  s.rank = 0;
  while (true) {
    const size_t x = text.find('x');
    int64_t v = 0;
    if (!parse_int(text.substr(0, x), &v) || v < 0 || s.rank == kMaxRank) return false;
    s.dims[s.rank++] = v;
    if (x == std::string_view::npos) break;
    text.remove_prefix(x + 1);
  }
  if (!s.valid()) return false;  // more elements than a tensor may hold (2^56)
  *out = s;
  return true;
}

Result<Options> parse_options(int argc, const char* const* argv) {
  Options o;
  // CLI11 parses; the conversions below keep the profiler's own rules and messages. --help is an ordinary
  // flag (our usage() text, not CLI11's generated one).
  CLI::App app("baracuda-profiler");
  app.set_help_flag();
  app.allow_windows_style_options(false);
  std::string device, dtype, out_dtype, shape, verify_limit;
  std::optional<int64_t> warmup, repeat;
  bool csv = false, json = false;
  app.add_flag("-h,--help", o.help);
  app.add_flag("--list", o.list);
  app.add_flag("--csv", csv);
  app.add_flag("--json", json);
  app.add_flag("--strided", o.strided);
  app.add_option("--op", o.op);
  app.add_option("--dtype", dtype);
  app.add_option("--out-dtype", out_dtype);
  app.add_option("--shape", shape);
  app.add_option("--device", device);
  app.add_option("--warmup", warmup);
  app.add_option("--repeat", repeat);
  app.add_option("--verify-limit", verify_limit);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return bad(e.what());
  }

  if (csv) o.format = OutputFormat::Csv;
  if (json) o.format = OutputFormat::Json;
  auto kind = [](std::string_view name, const std::string& v, std::optional<ElementKind>* out) -> Status {
    if (v.empty()) return {};
    ElementKind k;
    if (!parse_element_kind(v, &k)) return bad("unknown element kind '" + v + "' for " + std::string(name));
    *out = k;
    return {};
  };
  BARACUDA_TRY(kind("--dtype", dtype, &o.dtype));
  BARACUDA_TRY(kind("--out-dtype", out_dtype, &o.out_dtype));
  if (!shape.empty()) {
    Shape sh;
    if (!parse_shape(shape, &sh)) return bad("--shape wants extents like 4096x4096, got '" + shape + "'");
    o.shape = sh;
  }
  if (!device.empty()) {
    if (device != "auto" && device != "cuda" && device != "sim" && device != "host")
      return bad("--device is auto, cuda, sim or host, got '" + device + "'");
    o.device = device;
  }
  for (auto [name, value, field] : {std::tuple{"--warmup", &warmup, &o.warmup}, std::tuple{"--repeat", &repeat, &o.repeat}}) {
    if (!*value) continue;
    if (**value < 0 || **value > 1000000)
      return bad(std::string(name) + " needs a count, got '" + std::to_string(**value) + "'");
    *field = static_cast<int>(**value);
  }
  if (o.repeat && *o.repeat == 0) return bad("--repeat must be at least 1");
  if (!verify_limit.empty()) {
    char* end = nullptr;
    const double limit = std::strtod(verify_limit.c_str(), &end);
    if (*end != '\0' || !(limit >= 0))
      return bad("--verify-limit needs a flop count such as 2e10 (0: no limit), got '" + verify_limit + "'");
    o.verify_limit = limit;
  }
  if (o.out_dtype && !o.dtype) return bad("--out-dtype needs --dtype");
  return o;
}

std::string usage() {
  return R"(baracuda-profiler: runs baracuda plans on a device, verifies them against the host device, and
reports time, bandwidth and error.

Usage:
  baracuda-profiler                       run the default suite (every plan, a few shapes and dtypes)
  baracuda-profiler --list [--device D]   list every plan and its SKU on a device
  baracuda-profiler --op NAME [--dtype T [--out-dtype T]] [--shape AxB[xC...]] [options]

Options:
  --op NAME         one op (add, cast, ...) or a whole family (binary, ...); see --list; default: all
  --dtype T         input element kind (the output kind of ops without an input): f16 bf16 f32 f64 s8 u8
                    s32 s64 bool fp8e4m3 fp8e5m2 s4 u4 u32; default: the suite's kinds
  --out-dtype T     output element kind of converting ops (cast); default: --dtype
  --shape AxB...    logical shape, row-major; default: the suite's shapes for the device
  --device D        auto (default: cuda when a GPU is usable, else host), cuda, sim or host
  --warmup N        untimed runs before timing (default: 5 on cuda, 1 on sim and host)
  --repeat N        timed runs; the median is reported (default: 20 on cuda, 3 on sim, 5 on host)
  --verify-limit F  cases doing more than F flops (GEMMs) are timed but not checked by the host reference
                    ("timed" instead of "ok"); 0: check every case; default: 2e10
  --strided         every operand is a strided view (innermost stride 2) instead of a dense tensor
  --csv, --json     machine-readable output instead of the table
  -h, --help        this text

Each case selects the plan on the device, times it (CUDA events on cuda, steady_clock elsewhere), then runs
the same plan selected on the host device over the same inputs and compares the outputs: exact ops count
mismatching elements, floating-point ops report max abs/rel error against torch.testing's tolerances (a fused
norm's quantized output may also differ by one step).
GB/s counts the bytes each run must read and write. On cuda the L2 cache is flushed before each timed run,
and GEMM scenarios also time cuBLAS fp16 GEMM of the same shape (the speedup column). Exit status: 0 when every case that ran passed, 1 when
one failed (or none could run), 2 on a usage error, 3 when the requested device is not usable.
)";
}

double default_verify_limit() { return 2e10; }

int default_warmup(DeviceKind d) { return d == DeviceKind::Cuda ? 5 : 1; }
int default_repeat(DeviceKind d) {
  switch (d) {
    case DeviceKind::Cuda: return 20;
    case DeviceKind::Sim: return 3;
    case DeviceKind::Host: return 5;
  }
  return 1;
}

}  // namespace baracuda::profiler
