// Test support: the execution context of the sim device, for the tests that launch kernels directly
// (bypassing a plan): the engines' tests and the int8 GEMM's tile tests.
#pragma once

#include <gtest/gtest.h>

#include "baracuda/core/stream.hpp"
#include "core/exec_context.hpp"

namespace baracuda::test {

inline detail::ExecContext sim_context() {
  auto ctx = detail::make_exec_context(Stream::sim());
  EXPECT_TRUE(ctx.is_ok());
  return *ctx;
}

}  // namespace baracuda::test
