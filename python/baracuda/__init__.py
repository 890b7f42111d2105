"""baracuda: machine-learning operators for NVIDIA GPUs, with a C++ reference (``host``) and the CUDA kernels
emulated on the CPU (``sim``).

Two layers:

* the plan API, as in C++: ``plan = baracuda.UnaryPlan.select(stream, descriptor)`` once, then
  ``plan.run(stream, input=x, out=y)`` many times (``plan.sku`` names the kernel, ``plan.workspace_size`` the
  scratch it needs);
* the functional API, :mod:`baracuda.ops`: ``baracuda.ops.silu(x)``, which selects and caches plans by
  descriptor and allocates outputs in the caller's framework (torch in, torch out; numpy in, numpy out).

Arrays cross through DLPack or the buffer protocol without a copy. Errors raise :class:`baracuda.Error`
subclasses carrying the C++ message: :class:`InvalidProblem` (a ``ValueError``), :class:`Unsupported` (a
``NotImplementedError``), :class:`DeviceError` (a ``RuntimeError``), ...
"""

from ._core import (
    AffineDescriptor,
    AffinePlan,
    BinaryBackwardPlan,
    BinaryDescriptor,
    BinaryPlan,
    BufferTooSmall,
    CastDescriptor,
    CastPlan,
    CompareDescriptor,
    ComparePlan,
    DeviceError,
    DynamicRangeQuantizeDescriptor,
    DynamicRangeQuantizePlan,
    Error,
    FillDescriptor,
    FillPlan,
    Fp8DequantizeDescriptor,
    Fp8DequantizePlan,
    Fp8GemmDescriptor,
    Fp8GemmPlan,
    Fp8QuantizeDescriptor,
    Fp8QuantizePlan,
    Fp8ScalingUpdateDescriptor,
    Fp8ScalingUpdatePlan,
    GatedActivationBackwardPlan,
    GatedActivationDescriptor,
    GatedActivationPlan,
    GemmDescriptor,
    GemmPlan,
    GroupedGemmDescriptor,
    GroupedGemmPlan,
    IntGemmDescriptor,
    IntGemmPlan,
    Int4GemmDescriptor,
    Int4MarlinGemmPlan,
    Int4MarlinRepackPlan,
    Int4RepackDescriptor,
    Int4Weights,
    InternalError,
    InvalidProblem,
    MisalignedOperand,
    QuantizeDescriptor,
    QuantizePlan,
    QuantizedLinearDescriptor,
    NormBackwardPlan,
    NormDescriptor,
    NormPlan,
    QuantizedLinearPlan,
    ReduceDescriptor,
    ReducePlan,
    RopeDescriptor,
    RopePlan,
    SequenceDescriptor,
    SequencePlan,
    SmoothQuantLinearDescriptor,
    SmoothQuantLinearPlan,
    SoftmaxBackwardPlan,
    SoftmaxDescriptor,
    SoftmaxPlan,
    Stream,
    Tensor,
    TernaryBackwardPlan,
    TernaryDescriptor,
    TernaryPlan,
    UnaryBackwardPlan,
    UnaryDescriptor,
    UnaryPlan,
    Unsupported,
    WhereBackwardPlan,
    WhereDescriptor,
    WherePlan,
    WorkspaceTooSmall,
    awq_pack,
    awq_unpack,
    binary_ops,
    compare_ops,
    cuda_available,
    data_pointer,
    dequantize_int4,
    dynamic_range_modes,
    element_bits,
    element_kinds,
    fp8_gemm_scalings,
    gated_activation_kinds,
    gptq_pack,
    gptq_unpack,
    linear_activations,
    marlin_act_order_perm,
    marlin_from_int4,
    quantize_int4,
    quantize_ops,
    reduce_ops,
    ternary_ops,
    unary_ops,
)
from . import ops

__version__ = "0.1.0"

__all__ = [name for name in dir() if not name.startswith("_")]
