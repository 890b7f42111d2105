/// \file
/// \brief The umbrella header: the whole public API of baracuda.
#pragma once

#include "baracuda/core/buffer.hpp"
#include "baracuda/core/dyn_tensor.hpp"
#include "baracuda/core/element.hpp"
#include "baracuda/core/plan.hpp"
#include "baracuda/core/scalar.hpp"
#include "baracuda/core/sku.hpp"
#include "baracuda/core/status.hpp"
#include "baracuda/core/stream.hpp"
#include "baracuda/core/tensor.hpp"
#include "baracuda/core/typed_plan.hpp"
#include "baracuda/core/workspace.hpp"
// Every header of include/baracuda/ops: a list the build writes (src/CMakeLists.txt) and installs.
#include "baracuda/all_ops.hpp"
