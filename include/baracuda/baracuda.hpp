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
#include "baracuda/core/workspace.hpp"
#include "baracuda/ops/affine.hpp"
#include "baracuda/ops/binary.hpp"
#include "baracuda/ops/cast.hpp"
#include "baracuda/ops/dynamic_range_quantize.hpp"
#include "baracuda/ops/fill.hpp"
#include "baracuda/ops/fp8.hpp"
#include "baracuda/ops/gated_activation.hpp"
#include "baracuda/ops/quant_granularity.hpp"
#include "baracuda/ops/quantize.hpp"
#include "baracuda/ops/unary.hpp"
