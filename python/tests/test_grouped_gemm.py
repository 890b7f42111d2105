"""The grouped GEMM (GroupedGemmPlan) from Python against a loop of PyTorch matmuls, one per group, on host and
sim. The reference runs in float64 on the same inputs; the bound is the documented one, 2(K + 2)·2^-24·Σ|x·w|
for the kernels' f32 sums (and the host's exact products) plus one rounding of the output kind."""

import pytest

import baracuda
from baracuda import ops

torch = pytest.importorskip("torch")

UNIT = {torch.float16: 2.0 ** -11, torch.bfloat16: 2.0 ** -8, torch.float32: 2.0 ** -24}


def rand(shape, dtype, seed):
    return (torch.rand(shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64) * 2 - 1).to(dtype)


def torch_loop(x, w, offsets, bias):
    """y by a loop of torch.matmul over the groups, in float64, and Σ|x·w| (+ |bias|) for the bound."""
    y = torch.zeros(x.shape[0], w.shape[1], dtype=torch.float64)
    mag = torch.zeros_like(y)
    for e in range(w.shape[0]):
        lo, hi = int(offsets[e]), int(offsets[e + 1])
        xe = x[lo:hi].double()
        y[lo:hi] = torch.matmul(xe, w[e].double().t())
        mag[lo:hi] = torch.matmul(xe.abs(), w[e].double().abs().t())
        if bias is not None:
            y[lo:hi] += bias[e].double()
            mag[lo:hi] += bias[e].double().abs()
    return y, mag


def check(got, ref, mag, k, out_dtype):
    tol = 2.0 * (k + 2) * 2.0 ** -24 * mag + UNIT[out_dtype] * ref.abs() + 2.0 ** -24
    err = (got.double() - ref).abs()
    assert got.dtype == out_dtype
    assert bool((err <= tol).all()), f"max error {float(err.max())}"


@pytest.mark.parametrize("dtype,output", [(torch.float16, None), (torch.bfloat16, None), (torch.bfloat16, "f32"),
                                          (torch.float32, None)])
@pytest.mark.parametrize("offsets_dtype", [torch.int32, torch.int64])
@pytest.mark.parametrize("with_bias", [False, True])
def test_matches_a_loop_of_torch_matmuls(dtype, output, offsets_dtype, with_bias, device):
    sizes = [17, 0, 1, 40]
    n, k = 24, 16
    offsets = torch.tensor([0] + list(torch.tensor(sizes).cumsum(0)), dtype=offsets_dtype)
    x = rand((sum(sizes), k), dtype, 1)
    w = rand((len(sizes), n, k), dtype, 2)
    out_dtype = torch.float32 if output == "f32" else dtype
    bias = rand((len(sizes), n), out_dtype, 3) if with_bias else None
    y = ops.grouped_gemm(x, w, offsets, bias, output=output, device=device)
    assert y.shape == (sum(sizes), n)
    ref, mag = torch_loop(x, w, offsets, bias)
    check(y, ref, mag, k, out_dtype)


def test_mixture_of_experts_routing(device):
    """Tokens routed to experts (top-1), sorted by expert with torch.sort, the offsets from torch.bincount; the
    result unsorted again equals each token's own expert applied by torch."""
    tokens, e, n, k = 37, 5, 16, 24
    x = rand((tokens, k), torch.float32, 4)
    w = rand((e, n, k), torch.float32, 5)
    expert = torch.randint(0, e, (tokens,), generator=torch.Generator().manual_seed(6))
    order = torch.sort(expert, stable=True).indices
    counts = torch.bincount(expert, minlength=e)
    offsets = torch.cat([torch.zeros(1, dtype=torch.int64), counts.cumsum(0)])
    y_sorted = ops.grouped_gemm(x[order].contiguous(), w, offsets, device=device)
    y = torch.empty_like(y_sorted)
    y[order] = y_sorted
    ref = torch.stack([torch.matmul(w[expert[t]].double(), x[t].double()) for t in range(tokens)])
    mag = torch.stack([torch.matmul(w[expert[t]].double().abs(), x[t].double().abs()) for t in range(tokens)])
    check(y, ref, mag, k, torch.float32)


def test_plan_api_and_rejections(device):
    desc = baracuda.GroupedGemmDescriptor(groups=2, total_m=5, n=3, k=8, input="bf16", output="f32",
                                          offsets="s32", has_bias=True)
    assert (desc.groups, desc.total_m, desc.n, desc.k, desc.has_bias) == (2, 5, 3, 8, True)
    assert (desc.input, desc.output, desc.offsets) == ("bf16", "f32", "s32")
    with pytest.raises(baracuda.Unsupported):
        ops.grouped_gemm(rand((5, 8), torch.float64, 7), rand((2, 3, 8), torch.float64, 8),
                         torch.tensor([0, 2, 5]), device=device)
    with pytest.raises(baracuda.InvalidProblem, match="missing|offsets"):
        ops.grouped_gemm(rand((5, 8), torch.float16, 7), rand((2, 3, 8), torch.float16, 8),
                         torch.tensor([0, 2, 5, 5]), device=device)
