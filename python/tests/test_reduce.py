"""ReducePlan from Python against PyTorch's own reductions (torch.sum, mean, prod, amax, amin, argmax, argmin,
var, std, linalg.vector_norm, logsumexp, any, all), on host and sim: values, result kinds and shapes, NaN
and empty-dimension rules, and the errors."""

import math

import numpy as np
import pytest

import baracuda
from baracuda import ops

torch = pytest.importorskip("torch")

SHAPE = (4, 37, 6)
DIMS = [None, 1, -1, (0, 2), (1, 2)]


def data(dtype, seed=0, shape=SHAPE, lo=-2.0, hi=2.0):
    g = torch.Generator().manual_seed(seed)
    if dtype.is_floating_point:
        return (torch.rand(shape, generator=g, dtype=torch.float64) * (hi - lo) + lo).to(dtype)
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=g).bool()
    low = 0 if dtype == torch.uint8 else -20
    return torch.randint(low, 20, shape, generator=g).to(dtype)


def torch_dim(dim):
    return list(range(len(SHAPE))) if dim is None else dim


def close(got, want, dtype):
    assert got.dtype == want.dtype and got.shape == want.shape
    # The f32 accumulator against an f64 reference rounded once: a few ulps of the kind, and the f32 sum's
    # rounding over up to 888 elements of magnitude ≤ 2.
    rtol, atol = {torch.float16: (2e-3, 2e-3), torch.bfloat16: (1.6e-2, 1.6e-2), torch.float32: (1e-5, 1e-4),
                  torch.float64: (1e-12, 1e-12)}[dtype]
    torch.testing.assert_close(got, want, rtol=rtol, atol=atol, equal_nan=True)


FLOATS = [torch.float32, torch.float64, torch.bfloat16, torch.float16]
INTS = [torch.int8, torch.uint8, torch.int32, torch.int64]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("dim", DIMS)
@pytest.mark.parametrize("keepdim", [False, True])
def test_float_reductions_match_torch(dtype, dim, keepdim, device):
    x = data(dtype, 1)
    xd = x.double()  # the reference in f64, rounded once to the kind
    td = torch_dim(dim)
    want = {
        "sum": torch.sum(xd, td, keepdim),
        "mean": torch.mean(xd, td, keepdim),
        "amax": torch.amax(xd, td, keepdim),
        "amin": torch.amin(xd, td, keepdim),
        "logsumexp": torch.logsumexp(xd, td, keepdim),
    }
    for name, w in want.items():
        close(getattr(ops, name)(x, dim, keepdim, device=device), w.to(dtype), dtype)
    p = data(dtype, 2, lo=0.9, hi=1.1)
    close(ops.prod(p, dim, keepdim, device=device), _prod_dims(p.double(), td, keepdim).to(dtype), dtype)
    for correction in (0, 1):
        unbiased = correction == 1
        close(ops.var(x, dim, correction=correction, keepdim=keepdim, device=device),
              torch.var(xd, td, unbiased, keepdim).to(dtype), dtype)
        close(ops.std(x, dim, correction=correction, keepdim=keepdim, device=device),
              torch.std(xd, td, unbiased, keepdim).to(dtype), dtype)
    for ord in (1, 2, 3, math.inf, 0):
        close(ops.vector_norm(x, ord, dim, keepdim, device=device),
              torch.linalg.vector_norm(xd, ord, td, keepdim).to(dtype), dtype)


def _prod_dims(x, dims, keepdim):
    dims = [dims] if isinstance(dims, int) else dims
    for d in sorted((d % x.dim() for d in dims), reverse=True):
        x = torch.prod(x, d, keepdim)
    return x


@pytest.mark.parametrize("dtype", FLOATS + INTS)
@pytest.mark.parametrize("dim", [None, 0, 1, -1])
def test_indices_and_extrema_are_exact(dtype, dim, device):
    x = data(dtype, 3, lo=-3, hi=3)
    if dtype.is_floating_point:
        x = x.to(torch.float64).round().to(dtype)  # ties on purpose: the first index wins
    for name in ("argmax", "argmin"):
        got = getattr(ops, name)(x, dim, device=device)
        want = getattr(torch, name)(x, dim)
        assert got.dtype == torch.int64 and torch.equal(got, want), name
    if dim is not None:
        for name in ("amax", "amin"):
            assert torch.equal(getattr(ops, name)(x, dim, device=device), getattr(torch, name)(x, dim)), name


@pytest.mark.parametrize("dtype", INTS + [torch.bool])
def test_integer_sums_are_int64(dtype, device):
    x = data(dtype, 4)
    for dim in (None, 1, (0, 2)):
        td = torch_dim(dim)
        got = ops.sum(x, dim, device=device)
        assert got.dtype == torch.int64 and torch.equal(got, torch.sum(x, td)), dim
        any_, all_ = ops.any(x, 1, device=device), ops.all(x, 1, device=device)
        assert any_.dtype == torch.bool and torch.equal(any_, torch.any(x, 1).bool())
        assert torch.equal(all_, torch.all(x, 1).bool())
    small = data(dtype, 5, shape=(3, 4))
    assert torch.equal(ops.prod(small, 1, device=device), torch.prod(small, 1))


def test_nan_inf_and_empty_rules(device):
    x = torch.tensor([[1.0, float("nan"), 3.0, float("nan")], [1.0, float("inf"), -float("inf"), 0.0]])
    for name in ("amax", "amin", "logsumexp", "sum"):
        close(getattr(ops, name)(x, 1, device=device), getattr(torch, name)(x, 1), torch.float32)
    assert torch.equal(ops.argmax(x, 1, device=device), torch.argmax(x, 1))  # the first NaN
    assert torch.equal(ops.argmin(x, 1, device=device), torch.argmin(x, 1))
    neg = torch.full((2, 3), -float("inf"))
    assert torch.equal(ops.logsumexp(neg, 1, device=device), torch.logsumexp(neg, 1))
    e = torch.zeros(3, 0)
    assert torch.equal(ops.sum(e, 1, device=device), torch.sum(e, 1))
    assert torch.equal(ops.prod(e, 1, device=device), torch.prod(e, 1))
    assert torch.isnan(ops.mean(e, 1, device=device)).all()
    assert torch.equal(ops.all(e, 1, device=device), torch.all(e, 1))
    with pytest.raises(baracuda.InvalidProblem, match="no identity"):
        ops.amax(e, 1, device=device)


def test_numpy_in_numpy_out(device):
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    np.testing.assert_array_equal(ops.sum(a, (0, 2), device=device), a.sum(axis=(0, 2)))
    got = ops.argmax(a, -1, keepdim=True, device=device)
    assert isinstance(got, np.ndarray) and got.dtype == np.int64 and got.shape == (2, 3, 1)


def test_errors(device):
    x = torch.zeros(2, 3, 4)
    with pytest.raises(baracuda.InvalidProblem, match="one dimension"):
        ops.argmax(x, (0, 1), device=device)
    with pytest.raises(baracuda.Unsupported, match="mean takes"):
        ops.mean(torch.zeros(4, dtype=torch.int32), device=device)
    with pytest.raises(ValueError, match="out of range"):
        ops.sum(x, 3, device=device)
    with pytest.raises(ValueError, match="appears twice"):
        ops.sum(x, (1, -2), device=device)
    with pytest.raises(ValueError, match="unknown reduce op"):
        ops.reduce("median", x, device=device)
    with pytest.raises(baracuda.InvalidProblem, match="correction"):
        ops.var(x, correction=-1, device=device)


def test_plan_api(device):
    stream = baracuda.Stream.sim() if device == "sim" else baracuda.Stream.host()
    plan = baracuda.ReducePlan.select(stream, baracuda.ReduceDescriptor("sum", "s32", (3, 5), dims=[1]))
    assert plan.output_shape == (3,) and plan.output_kind == "s64" and plan.workspace_size == 0
    x = torch.arange(15, dtype=torch.int32).reshape(3, 5)
    y = torch.empty(3, dtype=torch.int64)
    plan.run(stream, x=x, y=y)
    assert torch.equal(y, x.sum(1))
    assert "sum" in baracuda.reduce_ops() and len(baracuda.reduce_ops()) == 16
