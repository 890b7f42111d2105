#include "options.hpp"

#include <charconv>
#include <cstdlib>
#include <string>
#include <string_view>

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
  *out = s;
  return true;
}

Result<Options> parse_options(int argc, const char* const* argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    std::string_view value;
    bool has_value = false;
    if (const size_t eq = arg.find('='); arg.starts_with("--") && eq != std::string_view::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
      has_value = true;
    }
    auto next = [&](std::string_view name) -> Result<std::string_view> {
      if (has_value) return value;
      if (i + 1 >= argc) return bad(std::string(name) + " needs a value");
      return std::string_view(argv[++i]);
    };
    auto kind = [&](std::string_view name) -> Result<ElementKind> {
      auto v = next(name);
      if (!v) return v.error();
      ElementKind k;
      if (!parse_element_kind(*v, &k)) return bad("unknown element kind '" + std::string(*v) + "' for " + std::string(name));
      return k;
    };
    auto count = [&](std::string_view name) -> Result<int> {
      auto v = next(name);
      if (!v) return v.error();
      int64_t n = 0;
      if (!parse_int(*v, &n) || n < 0 || n > 1000000) return bad(std::string(name) + " needs a count, got '" + std::string(*v) + "'");
      return static_cast<int>(n);
    };

    if (arg == "--help" || arg == "-h") {
      o.help = true;
    } else if (arg == "--list") {
      o.list = true;
    } else if (arg == "--csv") {
      o.format = OutputFormat::Csv;
    } else if (arg == "--json") {
      o.format = OutputFormat::Json;
    } else if (arg == "--strided") {
      o.strided = true;
    } else if (arg == "--op") {
      auto v = next(arg);
      if (!v) return v.error();
      o.op = std::string(*v);
    } else if (arg == "--dtype") {
      auto k = kind(arg);
      if (!k) return k.error();
      o.dtype = *k;
    } else if (arg == "--out-dtype") {
      auto k = kind(arg);
      if (!k) return k.error();
      o.out_dtype = *k;
    } else if (arg == "--shape") {
      auto v = next(arg);
      if (!v) return v.error();
      Shape s;
      if (!parse_shape(*v, &s)) return bad("--shape wants extents like 4096x4096, got '" + std::string(*v) + "'");
      o.shape = s;
    } else if (arg == "--device") {
      auto v = next(arg);
      if (!v) return v.error();
      if (*v != "auto" && *v != "cuda" && *v != "sim" && *v != "host")
        return bad("--device is auto, cuda, sim or host, got '" + std::string(*v) + "'");
      o.device = std::string(*v);
    } else if (arg == "--warmup") {
      auto n = count(arg);
      if (!n) return n.error();
      o.warmup = *n;
    } else if (arg == "--verify-limit") {
      auto v = next(arg);
      if (!v) return v.error();
      char* end = nullptr;
      const std::string text(*v);
      const double limit = std::strtod(text.c_str(), &end);
      if (text.empty() || *end != '\0' || !(limit >= 0))
        return bad("--verify-limit needs a flop count such as 2e10 (0: no limit), got '" + text + "'");
      o.verify_limit = limit;
    } else if (arg == "--repeat") {
      auto n = count(arg);
      if (!n) return n.error();
      if (*n == 0) return bad("--repeat must be at least 1");
      o.repeat = *n;
    } else {
      return bad("unknown argument '" + std::string(argv[i]) + "'");
    }
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
mismatching elements, floating-point ops report max abs/rel error against torch.testing's tolerances.
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
