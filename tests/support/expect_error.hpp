// Test support: the rejection and selection checks shared by the families' reject tests.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>

#include "baracuda/core/sku.hpp"
#include "baracuda/core/status.hpp"
#include "baracuda/core/stream.hpp"

namespace baracuda::test {

/// `s` failed with `code`, and its message contains `text` (the plan's name, or the rule that was broken).
inline void expect_error(const Status& s, ErrorCode code, std::string_view text) {
  ASSERT_FALSE(s) << "expected " << to_string(code) << " containing '" << text << "'";
  EXPECT_EQ(s.code(), code) << s.to_string();
  EXPECT_NE(s.error().message.find(text), std::string::npos) << s.to_string();
}

/// The Result `r` (of a select or a factory) failed with `code`, and its message contains `text`.
template <class R>
void expect_select_error(const R& r, ErrorCode code, std::string_view text) {
  expect_error(r.status(), code, text);
}

/// `s` failed with `code`, and its message names `plan` and contains `needle` (the rule that was broken).
inline void expect_error_naming(const Status& s, ErrorCode code, std::string_view plan, std::string_view needle) {
  ASSERT_FALSE(s.is_ok()) << "expected " << to_string(code) << " containing '" << needle << "'";
  EXPECT_EQ(s.code(), code) << s.to_string();
  EXPECT_NE(s.error().message.find(needle), std::string::npos) << s.to_string();
  EXPECT_NE(s.error().message.find(plan), std::string::npos) << s.to_string();
}

/// Plan::select on `stream` rejects `desc` as Unsupported, naming `plan`, when the preference asks for
/// `backend`, another device's.
template <class Plan, class Descriptor>
void expect_other_backend_unsupported(const Stream& stream, const Descriptor& desc, BackendKind backend,
                                      std::string_view plan) {
  expect_error(Plan::select(stream, desc, PlanPreference().with_backend(backend)).status(), ErrorCode::Unsupported,
               plan);
}

/// The SKU variant that Plan::select gives `desc` on `stream`: the kernel a rule chose; "none", and a failure, when
/// select rejects it.
template <class Plan, class Descriptor>
std::string selected_variant(const Stream& stream, const Descriptor& desc) {
  auto plan = Plan::select(stream, desc);
  EXPECT_TRUE(plan) << plan.status().to_string();
  return plan ? std::string(plan->sku().variant) : "none";
}

/// Each typed plan of `Plans` rejects `desc` at select on the host with InvalidProblem, naming `plan`: their
/// element types or rank are not the descriptor's.
template <class... Plans, class Descriptor>
void expect_typed_plans_reject(const Descriptor& desc, std::string_view plan) {
  (expect_error(Plans::select(Stream::host(), desc).status(), ErrorCode::InvalidProblem, plan), ...);
}

/// `plan` rejects `args` with `code` alike in can_implement and in a run on the host (each message naming
/// `name`), and that run writes none of `outputs` (the host floats the args' outputs view, set to 7 before it).
template <class Plan>
void expect_rejected(const Plan& plan, const typename Plan::Args& args, ErrorCode code, std::string_view name,
                     std::initializer_list<std::span<float>> outputs) {
  expect_error(plan.can_implement(args), code, name);
  for (std::span<float> o : outputs) std::fill(o.begin(), o.end(), 7.0f);
  expect_error(plan.run(Stream::host(), {}, args), code, name);
  for (std::span<float> o : outputs)
    for (float f : o) EXPECT_EQ(f, 7.0f) << "run wrote despite the rejection";
}

}  // namespace baracuda::test
