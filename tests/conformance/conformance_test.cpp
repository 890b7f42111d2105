// The conformance suite: every plan of every family, as the profiler's scenarios select it and lay out its
// operands (tools/profiler/scenarios/: one file per family, which is all a family registers), through the
// checks every plan owes its callers, on the host, sim and cuda devices (cuda skipped without a GPU):
//   - outputs stay in their views: the guard bytes around every output, and the gaps of strided views, keep
//     their sentinel (a layout a plan rejects must be rejected by run too, and leave the outputs alone);
//   - determinism: two runs on fresh operands give the same output bytes;
//   - an empty problem (first extent 0) is accepted and writes nothing outside the outputs' views (an output
//     with elements, such as a per-tensor amax, may still be written);
//   - the rejection matrix: each operand in turn of another kind, another shape, one more dimension, null
//     with elements, misaligned, missing, and (outputs) broadcast with stride 0 — can_implement fails, run
//     fails with the same code and writes nothing. An operand whose absence is accepted is optional (the
//     gradients a backward may skip, an fp8 scale_inv, a symmetric zero point): absent also means null
//     data there, and every other mutation of it must still be rejected;
//   - a stream of another device, and a workspace one byte short, are rejected by run;
//   - sim agrees with host (bit for bit, or within the tolerance table where the scenario says so), dense
//     and strided, and with each input reversed (a negative stride) and each output written in place over
//     an input of its kind and shape: both devices accept or reject such a layout alike, and agree when
//     they accept it; ctest runs the sim cases again under the reverse thread schedule, with the checkers.
// Whether the host's values are right is each family's suite's business (independent references).
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "scenario.hpp"
#include "support/devices.hpp"
#include "verify.hpp"

namespace baracuda::profiler {
namespace {

struct Case {
  const Scenario* scenario = nullptr;
  Problem problem;
  DeviceKind device = DeviceKind::Host;
  std::string name;
};

std::string sanitized(std::string s) {
  std::string r;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s.compare(i, 2, "->") == 0) r += "_to_", ++i;
    else r += std::isalnum(static_cast<unsigned char>(s[i])) ? s[i] : '_';
  }
  return r;
}

/// Every scenario × its default kinds, on its first default sim shape, on each of `devices`.
std::vector<Case> cases(std::initializer_list<DeviceKind> devices = {DeviceKind::Host, DeviceKind::Sim,
                                                                     DeviceKind::Cuda}) {
  std::vector<Case> r;
  for (const Scenario& sc : scenarios()) {
    const std::vector<Shape> shapes = sc.default_shapes(DeviceKind::Sim);
    if (shapes.empty()) continue;
    for (Problem p : sc.default_kinds(sc.variant)) {
      p.shape = shapes.front();
      p.variant = sc.variant;
      for (DeviceKind d : devices) {
        const std::string name =
            sanitized(std::string(sc.name) + "_" + describe_kinds(sc, p) + "_" + std::string(to_string(d)));
        // Two default problems of a scenario may describe alike (e.g. variants keyed by a parameter).
        const size_t same = std::count_if(r.begin(), r.end(), [&](const Case& c) { return c.name.rfind(name, 0) == 0; });
        r.push_back({&sc, p, d, same == 0 ? name : name + "_" + std::to_string(same)});
      }
    }
  }
  return r;
}

std::string what(const Status& s) { return s ? "OK" : s.error().to_string(); }

/// Whether byte `b` of a downloaded allocation lies under an element of its view.
std::vector<bool> footprint(const HostTensor& t) {
  std::vector<bool> under(t.bytes.size(), false);
  const int bits = element_bits(t.kind);
  for (int64_t i = 0; i < t.numel(); ++i) {
    const int64_t first = t.offset(i) * bits / 8, last = ((t.offset(i) + 1) * bits + 7) / 8;
    for (int64_t b = first; b < last && b < static_cast<int64_t>(under.size()); ++b) under[b] = true;
  }
  return under;
}

/// The bytes of each output outside its view must still be the sentinel (`fill_sentinel`'s 0xA5); all of
/// them when `untouched` (a rejected run).
void expect_only_views_written(const Instance& inst, const std::string& when, bool untouched = false) {
  auto outs = inst.outputs();
  ASSERT_TRUE(outs) << outs.error().to_string();
  for (size_t o = 0; o < outs->size(); ++o) {
    const HostTensor& t = (*outs)[o];
    const std::vector<bool> under = footprint(t);
    for (size_t b = 0; b < t.bytes.size(); ++b) {
      if ((untouched || !under[b]) && t.bytes[b] != 0xA5) {
        ADD_FAILURE() << when << ": output " << o << " byte " << b << " of " << t.bytes.size() << " is "
                      << int{t.bytes[b]} << (under[b] ? " (in the view)" : " (outside the view)");
        return;
      }
    }
  }
}

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

class Conformance : public ::testing::TestWithParam<Case> {
 protected:
  /// Skips a cuda case without a usable GPU, or in a build without CUDA kernels.
  void SetUp() override {
    std::string why_not;
    const std::optional<Stream> s = test::stream_for(GetParam().device, &why_not);
    if (!s) GTEST_SKIP() << why_not;
    stream_ = *s;
    Problem p = GetParam().problem;
    const auto selected = GetParam().scenario->select(stream_, p);
    BARACUDA_SKIP_IF_NO_CUDA_KERNELS(selected, GetParam().device);
  }
  Result<std::unique_ptr<Instance>> prepare(bool strided = false, const Shape* shape = nullptr) const {
    Problem p = GetParam().problem;
    p.strided = strided;
    if (shape != nullptr) p.shape = *shape;
    return GetParam().scenario->prepare(stream_, p);
  }
  Stream stream() const { return stream_; }

 private:
  Stream stream_ = Stream::host();
};

TEST_P(Conformance, OutputsStayInTheirViews) {
  for (const bool strided : {false, true}) {
    auto inst = prepare(strided);
    ASSERT_TRUE(inst) << inst.error().to_string();
    const Status checked = (*inst)->check();
    const Status ran = (*inst)->run(stream());
    if (!strided) ASSERT_TRUE(checked) << what(checked);  // every scenario's dense layout is served
    ASSERT_EQ(static_cast<bool>(checked), static_cast<bool>(ran)) << "can_implement " << what(checked) << ", run " << what(ran);
    expect_only_views_written(**inst, strided ? "strided" : "dense", !ran);
  }
}

TEST_P(Conformance, TwoRunsAreBitEqual) {
  std::vector<std::vector<HostTensor>> results;
  for (int run = 0; run < 2; ++run) {
    auto inst = prepare();
    ASSERT_TRUE(inst) << inst.error().to_string();
    const Status s = (*inst)->run(stream());
    ASSERT_TRUE(s) << what(s);
    auto outs = (*inst)->outputs();
    ASSERT_TRUE(outs) << outs.error().to_string();
    results.push_back(std::move(outs).value());
  }
  ASSERT_EQ(results[0].size(), results[1].size());
  for (size_t o = 0; o < results[0].size(); ++o)
    EXPECT_TRUE(results[0][o].bytes == results[1][o].bytes) << "output " << o << " differs between two runs";
}

TEST_P(Conformance, EmptyProblemWritesNothing) {
  Shape empty = GetParam().problem.shape;
  ASSERT_GT(empty.rank, 0);
  empty.dims[0] = 0;
  auto inst = prepare(false, &empty);
  ASSERT_TRUE(inst) << inst.error().to_string();
  const Status s = (*inst)->run(stream());
  ASSERT_TRUE(s) << what(s);
  expect_only_views_written(**inst, "empty problem");
}

/// One way to spoil an operand; `applies` says whether it makes sense for this operand.
struct Mutation {
  const char* name;
  std::function<bool(const DynTensor&, bool output)> applies;
  std::function<void(DynTensor&)> apply;
  ErrorCode code;     ///< what can_implement must say, where `code_is_rule`
  bool code_is_rule;  ///< false where another rule may reject first (a packed output must be contiguous)
  bool absence;       ///< the operand made absent: accepted for an optional operand
};

/// Another kind of the same width where there is one, so only the kind check can tell.
ElementKind other_kind(ElementKind k) {
  switch (k) {
    case ElementKind::F32: return ElementKind::S32;
    case ElementKind::S32: return ElementKind::F32;
    case ElementKind::F16: return ElementKind::Bf16;
    case ElementKind::Bf16: return ElementKind::F16;
    case ElementKind::F64: return ElementKind::S64;
    case ElementKind::S64: return ElementKind::F64;
    case ElementKind::S8: return ElementKind::U8;
    case ElementKind::U8: return ElementKind::S8;
    case ElementKind::S4: return ElementKind::U4;
    case ElementKind::U4: return ElementKind::S4;
    case ElementKind::Fp8E4M3: return ElementKind::Fp8E5M2;
    case ElementKind::Fp8E5M2: return ElementKind::Fp8E4M3;
    default: return k == ElementKind::U8 ? ElementKind::S8 : ElementKind::U8;
  }
}

std::vector<Mutation> mutations() {
  auto any = [](const DynTensor&, bool) { return true; };
  return {
      {"another kind", any, [](DynTensor& t) { t.kind = other_kind(t.kind); }, ErrorCode::InvalidProblem, true, false},
      {"another shape", any,
       [](DynTensor& t) {
         if (t.shape.rank == 0) t.shape = Shape{2};
         else t.shape.dims[t.shape.rank - 1] += 2;
       },
       ErrorCode::InvalidProblem, true, false},
      {"one more dimension", [](const DynTensor& t, bool) { return t.shape.rank < kMaxRank; },
       [](DynTensor& t) {
         t.shape.dims[t.shape.rank] = 1;
         t.stride[t.shape.rank] = 1;
         ++t.shape.rank;
       },
       ErrorCode::InvalidProblem, true, false},
      {"null data", [](const DynTensor& t, bool) { return t.numel() > 0; }, [](DynTensor& t) { t.data = nullptr; },
       ErrorCode::InvalidProblem, true, true},
      {"misaligned", [](const DynTensor& t, bool) { return t.numel() > 0 && element_bits(t.kind) >= 16; },
       [](DynTensor& t) { t.data = static_cast<uint8_t*>(t.data) + 1; }, ErrorCode::MisalignedOperand, true,
       false},
      {"missing", [](const DynTensor& t, bool) { return t.numel() > 0; }, [](DynTensor& t) { t = DynTensor{}; },
       ErrorCode::InvalidProblem, true, true},
      {"broadcast output",
       [](const DynTensor& t, bool output) {
         return output && std::any_of(t.shape.dims.begin(), t.shape.dims.begin() + t.shape.rank,
                                      [](int64_t e) { return e > 1; });
       },
       [](DynTensor& t) {
         for (int d = 0; d < t.shape.rank; ++d)
           if (t.shape.dims[d] > 1) {
             t.stride[d] = 0;
             return;
           }
       },
       ErrorCode::InvalidProblem, false, false},
  };
}

TEST_P(Conformance, RejectsEveryBadOperand) {
  auto inst = prepare();
  ASSERT_TRUE(inst) << inst.error().to_string();
  const Instance& in = **inst;
  const std::vector<DynTensor> good = in.views();
  ASSERT_TRUE(in.check_views(good)) << what(in.check_views(good));
  int tried = 0;
  for (size_t i = 0; i < good.size(); ++i) {
    const bool output = i >= in.input_count();
    std::vector<DynTensor> absent = good;
    absent[i] = DynTensor{};
    const bool optional = static_cast<bool>(in.check_views(absent));
    for (const Mutation& m : mutations()) {
      if (!m.applies(good[i], output) || (optional && m.absence)) continue;
      std::vector<DynTensor> bad = good;
      m.apply(bad[i]);
      const std::string where = "operand " + std::to_string(i) + " (" + (output ? "output" : "input") + "), " + m.name;
      const Status c = in.check_views(bad);
      ++tried;
      if (c) {
        ADD_FAILURE() << where << ": can_implement accepted it";
        continue;
      }
      const Status r = in.run_views(stream(), in.workspace(), bad);
      if (m.code_is_rule) EXPECT_EQ(c.error().code, m.code) << where << ": " << c.error().to_string();
      ASSERT_FALSE(r) << where << ": run accepted what can_implement rejected (" << c.error().to_string() << ")";
      EXPECT_EQ(r.error().code, c.error().code) << where << ": run said " << r.error().to_string();
      if (std::string(m.name) == "missing")
        EXPECT_NE(c.error().message.find("missing"), std::string::npos) << where << ": " << c.error().message;
    }
  }
  EXPECT_GT(tried, 0);
  expect_only_views_written(in, "rejected runs", true);
}

TEST_P(Conformance, RunRejectsAnotherDeviceAndAShortWorkspace) {
  auto inst = prepare();
  ASSERT_TRUE(inst) << inst.error().to_string();
  const Instance& in = **inst;
  const Stream other = GetParam().device == DeviceKind::Host ? Stream::sim() : Stream::host();
  const Status s = in.run_views(other, in.workspace(), in.views());
  ASSERT_FALSE(s) << "run on another device's stream succeeded";
  EXPECT_EQ(s.error().code, ErrorCode::InvalidProblem) << s.error().to_string();
  const Workspace ws = in.workspace();
  if (ws.size > 0) {
    const Status w = in.run_views(stream(), Workspace{ws.data, ws.size - 1}, in.views());
    ASSERT_FALSE(w) << "run with a workspace one byte short succeeded";
    EXPECT_EQ(w.error().code, ErrorCode::WorkspaceTooSmall) << w.error().to_string();
  }
  expect_only_views_written(in, "rejected runs", true);
}

INSTANTIATE_TEST_SUITE_P(Plans, Conformance, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& i) { return i.param.name; });

/// Sim against host: the one device whose cases compare with another.
class SimAgreesWithHost : public Conformance {};

TEST_P(SimAgreesWithHost, DenseAndStrided) {
  const Case& c = GetParam();
  for (const bool strided : {false, true}) {
    Problem p = c.problem;
    p.strided = strided;
    std::vector<HostTensor> outs[2];
    Status ran[2];
    for (int d = 0; d < 2; ++d) {
      auto inst = c.scenario->prepare(d == 0 ? Stream::host() : Stream::sim(), p);
      ASSERT_TRUE(inst) << inst.error().to_string();
      ran[d] = (*inst)->run(d == 0 ? Stream::host() : Stream::sim());
      if (!ran[d]) continue;
      auto o = (*inst)->outputs();
      ASSERT_TRUE(o) << o.error().to_string();
      outs[d] = std::move(o).value();
    }
    ASSERT_EQ(static_cast<bool>(ran[0]), static_cast<bool>(ran[1])) << "host: " << what(ran[0]) << ", sim: " << what(ran[1]);
    if (!strided) ASSERT_TRUE(ran[1]) << what(ran[1]);
    ASSERT_EQ(outs[0].size(), outs[1].size());
    for (size_t o = 0; o < outs[0].size(); ++o) {
      const Verification v =
          compare(outs[1][o], outs[0][o], c.scenario->comparison, c.scenario->terms_of(c.problem, o));
      EXPECT_TRUE(v.passed()) << (strided ? "strided" : "dense") << " output " << o << ": " << v.mismatches << " of "
                              << v.checked << " elements differ (max abs error " << v.max_abs_error << ") " << v.problem;
    }
  }
}

/// Another layout of the prepared operands: `apply` changes the views; `results` lists the operands that hold
/// the outputs afterwards (an in-place output's result is in its input's buffer).
struct Layout {
  std::string name;
  std::function<void(std::vector<DynTensor>&)> apply;
  std::vector<size_t> results;
};

std::vector<Layout> other_layouts(const Instance& in) {
  const std::vector<DynTensor> v = in.views();
  const size_t nin = in.input_count();
  std::vector<size_t> outputs;
  for (size_t o = nin; o < v.size(); ++o) outputs.push_back(o);
  std::vector<Layout> r;
  for (size_t i = 0; i < nin; ++i) {
    const DynTensor& t = v[i];
    const int d = t.shape.rank - 1;
    if (d < 0 || t.shape.dims[d] < 2 || element_bits(t.kind) < 8) continue;
    r.push_back({"input " + std::to_string(i) + " reversed",
                 [i, d](std::vector<DynTensor>& w) {
                   DynTensor& u = w[i];
                   u.data = static_cast<uint8_t*>(u.data) +
                            (u.shape.dims[d] - 1) * u.stride[d] * (element_bits(u.kind) / 8);
                   u.stride[d] = -u.stride[d];
                 },
                 outputs});
  }
  for (size_t o = nin; o < v.size(); ++o)
    for (size_t i = 0; i < nin; ++i) {
      if (v[i].kind != v[o].kind || !(v[i].shape == v[o].shape) || v[o].numel() == 0) continue;
      std::vector<size_t> results = outputs;
      std::replace(results.begin(), results.end(), o, i);
      r.push_back({"output " + std::to_string(o) + " in place over input " + std::to_string(i),
                   [i, o](std::vector<DynTensor>& w) { w[o] = w[i]; }, results});
    }
  return r;
}

TEST_P(SimAgreesWithHost, ReversedInputsAndInPlace) {
  const Case& c = GetParam();
  auto probe = c.scenario->prepare(Stream::host(), c.problem);
  ASSERT_TRUE(probe) << probe.error().to_string();
  for (const Layout& l : other_layouts(**probe)) {
    std::unique_ptr<Instance> inst[2];
    Status checked[2], ran[2];
    for (int d = 0; d < 2; ++d) {
      const Stream stream = d == 0 ? Stream::host() : Stream::sim();
      auto p = c.scenario->prepare(stream, c.problem);  // fresh operands: in-place runs overwrite inputs
      ASSERT_TRUE(p) << p.error().to_string();
      inst[d] = std::move(p).value();
      std::vector<DynTensor> v = inst[d]->views();
      l.apply(v);
      checked[d] = inst[d]->check_views(v);
      if (checked[d]) ran[d] = inst[d]->run_views(stream, inst[d]->workspace(), v);
    }
    ASSERT_EQ(static_cast<bool>(checked[0]), static_cast<bool>(checked[1]))
        << l.name << ": host " << what(checked[0]) << ", sim " << what(checked[1]);
    if (!checked[0]) {
      EXPECT_EQ(checked[0].error().code, checked[1].error().code) << l.name;
      continue;
    }
    ASSERT_TRUE(ran[0]) << l.name << ": " << what(ran[0]);
    ASSERT_TRUE(ran[1]) << l.name << ": " << what(ran[1]);
    for (size_t k : l.results) {
      auto host = inst[0]->download_operand(k), sim = inst[1]->download_operand(k);
      ASSERT_TRUE(host && sim);
      const Verification v = compare(*sim, *host, c.scenario->comparison);
      EXPECT_TRUE(v.passed()) << l.name << ", operand " << k << ": " << v.mismatches << " of " << v.checked
                              << " elements differ (max abs error " << v.max_abs_error << ") " << v.problem;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Plans, SimAgreesWithHost, ::testing::ValuesIn(cases({DeviceKind::Sim})),
                         [](const ::testing::TestParamInfo<Case>& i) { return i.param.name; });

}  // namespace
}  // namespace baracuda::profiler
