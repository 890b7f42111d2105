// Test support: a rejection check shared by the families' reject tests.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "baracuda/core/status.hpp"

namespace baracuda::test {

/// `s` failed with `code`, and its message names `plan`.
inline void expect_error(const Status& s, ErrorCode code, std::string_view plan) {
  ASSERT_FALSE(s);
  EXPECT_EQ(s.code(), code) << s.to_string();
  EXPECT_NE(s.error().message.find(plan), std::string::npos) << "the message names the plan: " << s.to_string();
}

}  // namespace baracuda::test
