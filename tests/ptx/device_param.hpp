// The PTX self-tests' parameter: each test runs on the sim device and on cuda, where a case skips, saying why,
// unless the build compiled the test's kernels and a GPU that can run them is usable.
#pragma once

#include <gtest/gtest.h>

#include <climits>
#include <ostream>
#include <string>

#include "baracuda/core/stream.hpp"

namespace ptxtest {

enum class Dev { Sim, Cuda };
inline void PrintTo(Dev d, std::ostream* os) { *os << (d == Dev::Sim ? "sim" : "cuda"); }
/// "sim" or "cuda": the suffix of an instantiated test's name.
inline std::string dev_name(const ::testing::TestParamInfo<Dev>& info) {
  return info.param == Dev::Sim ? "sim" : "cuda";
}

/// What the cuda cases of a self-test need.
struct CudaNeeds {
  bool have_kernels;            ///< the build compiled the test's kernels by nvcc
  const char* without_kernels;  ///< the skip message when it did not
  int min_sm = 0;               ///< the compute capabilities that run the kernels: min_sm..max_sm
  int max_sm = INT_MAX;
  const char* other_sm = "";    ///< the skip message for a GPU outside them
};

/// A self-test over Dev whose cuda cases skip unless `needs` are met.
class DeviceTest : public ::testing::TestWithParam<Dev> {
 protected:
  explicit DeviceTest(CudaNeeds needs) : needs_(needs) {}
  void SetUp() override {
    if (GetParam() != Dev::Cuda) return;
    if (!needs_.have_kernels) GTEST_SKIP() << needs_.without_kernels;
    const auto& a = baracuda::cuda_availability();
    if (!a.usable) GTEST_SKIP() << "no usable CUDA device: " << a.reason;
    if (needs_.min_sm == 0 && needs_.max_sm == INT_MAX) return;
    const auto info = baracuda::cuda_device_info(0);
    if (!info.is_ok() || info->sm < needs_.min_sm || info->sm > needs_.max_sm) GTEST_SKIP() << needs_.other_sm;
  }

 private:
  CudaNeeds needs_;
};

}  // namespace ptxtest
