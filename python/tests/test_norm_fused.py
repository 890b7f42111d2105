"""The norm family's fused forms from Python, on host (the composed path) and sim (the row kernel; rows past
48 KiB the composed path): the residual add's h is x + residual rounded to the dtype and y the plain norm of h
bit for bit; the in-place forms equal the out-of-place ones; the quantized outputs equal baracuda's own
unfused chain (ops.rms_norm / layer_norm, then quantize, dynamic_range_quantize or fp8_quantize) bit for bit
and a PyTorch (or ml_dtypes) reference of the f64 norm within one quantization step; the rejections."""

import numpy as np
import pytest

import baracuda
from baracuda import ops

torch = pytest.importorskip("torch")

DTYPES = [torch.float32, torch.float16, torch.bfloat16, torch.float64]
SHAPES = [(6, 200), (2, 3, 96), (64,), (2, 13000)]  # (2, 13000) f32/f64: rows past the row kernel's 48 KiB
OPS = ["rms_norm", "layer_norm"]


def data(shape, dtype, seed, lo=-2.0, hi=3.0):
    g = torch.Generator().manual_seed(seed)
    return (torch.rand(shape, generator=g, dtype=torch.float64) * (hi - lo) + lo).to(dtype)


def operands(op, shape, dtype):
    x, r = data(shape, dtype, 1), data(shape, dtype, 2, -1.5, 1.5)
    w, b = data(shape[-1:], dtype, 3, 0.5, 1.5), data(shape[-1:], dtype, 4, -1, 1)
    return x, r, w, (b if op == "layer_norm" else None)


def plain(op, h, w, b, device):
    return ops.norm(op, h, w, b, eps=1e-5, device=device)


def reference(op, h, w, b):
    """The f64 norm of h (already rounded) · w + b."""
    h, w = h.double(), w.double()
    if op == "layer_norm":
        return torch.nn.functional.layer_norm(h, h.shape[-1:], w, b.double(), 1e-5)
    return h * torch.rsqrt((h * h).mean(-1, keepdim=True) + 1e-5) * w


def bits(t):
    """An fp8 result's bytes (a baracuda.Tensor over uint8 where torch has no fp8 dtype)."""
    return t.array if isinstance(t, baracuda.Tensor) else t.view(torch.uint8)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("op", OPS)
def test_residual_add_then_norm(op, shape, dtype, device):
    x, r, w, b = operands(op, shape, dtype)
    got = ops.fused_norm(op, x, w, b, eps=1e-5, residual=r, stats=True, device=device)
    assert torch.equal(got.h, x + r)  # one rounding to the dtype, as torch's add
    y, mean, rstd = plain(op, x + r, w, b, device)
    assert torch.equal(got.y, y) and torch.equal(got.rstd, rstd)
    assert (got.mean is None) == (op == "rms_norm") and (mean is None or torch.equal(got.mean, mean))
    assert got.q is None and got.scale is None and got.amax is None
    fused = ops.fused_add_rms_norm if op == "rms_norm" else ops.fused_add_layer_norm
    y2, h2 = fused(x, r, w, *([b] if b is not None else []), eps=1e-5, device=device)
    assert torch.equal(y2, y) and torch.equal(h2, got.h)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("shape", [(5, 300), (2, 13000)])
def test_in_place_equals_out_of_place(op, shape, device):
    x, r, w, b = operands(op, shape, torch.float16)
    fused = ops.fused_add_rms_norm if op == "rms_norm" else ops.fused_add_layer_norm
    extra = [b] if b is not None else []
    y, h = fused(x, r, w, *extra, eps=1e-5, device=device)
    xi, ri = x.clone(), r.clone()
    yi, hi = fused(xi, ri, w, *extra, eps=1e-5, inplace=True, device=device)  # vLLM: y over x, h over residual
    assert yi is xi and hi is ri and torch.equal(xi, y) and torch.equal(ri, h)
    xh = x.clone()  # h over x, y over residual
    got = ops.fused_norm(op, xh, w, b, eps=1e-5, residual=r.clone(), h=xh, device=device)
    assert got.h is xh and torch.equal(xh, h) and torch.equal(got.y, y)
    rq = r.clone()  # a quantized output with h in place
    q = ops.rms_norm_quant(x, w, quant="dynamic", residual=rq, inplace=True, device=device) if op == "rms_norm" \
        else ops.layer_norm_quant(x, w, b, quant="dynamic", eps=1e-5, residual=rq, inplace=True, device=device)
    assert q.h is rq and torch.equal(rq, h) and q.y is None


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(6, 200), (64,), (2, 13000)])
@pytest.mark.parametrize("convention", ["pytorch", "exact", "vllm"])
@pytest.mark.parametrize("op", OPS)
def test_static_quantize_equals_the_chain_and_torch(op, convention, shape, dtype, device):
    if convention == "vllm" and dtype == torch.float64:
        pytest.skip("vllm's convention computes in f32: no f64 x")
    x, r, w, b = operands(op, shape, dtype)
    skind = torch.float64 if dtype == torch.float64 else torch.float32
    scale, zp = torch.tensor([0.021], dtype=skind), torch.tensor([-3], dtype=torch.int32)
    kw = dict(quant="static", scale=scale, zero_point=zp, convention=convention, device=device)
    got = ops.rms_norm_quant(x, w, eps=1e-5, residual=r, **kw) if op == "rms_norm" else \
        ops.layer_norm_quant(x, w, b, eps=1e-5, residual=r, **kw)
    h = x + r
    y = plain(op, h, w, b, device)[0]
    chain = ops.quantize(y, scale, zp, convention=convention, device=device)
    assert got.q.dtype == torch.int8 and torch.equal(got.q, chain) and torch.equal(got.h, h)
    assert got.scale is scale and got.zero_point is zp and got.y is None
    want = torch.quantize_per_tensor(reference(op, h, w, b).float(), 0.021, -3, torch.qint8).int_repr()
    assert (got.q.int() - want.int()).abs().max() <= 1
    # Python numbers for the scale and zero point; without a zero point, 0.
    nums = ops.fused_norm(op, x, w, b, eps=1e-5, quant="static", scale=0.021, convention=convention, device=device)
    zero = ops.quantize(plain(op, x, w, b, device)[0], scale, torch.zeros(1, dtype=torch.int32),
                        convention=convention, device=device)
    assert torch.equal(nums.q, zero) and nums.zero_point is None and nums.scale.dtype == skind


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(6, 200), (2, 3, 96), (64,), (2, 13000)])
@pytest.mark.parametrize("mode", ["symmetric", "asymmetric"])
@pytest.mark.parametrize("op", OPS)
def test_dynamic_quantize_equals_the_chain_and_torch(op, mode, shape, dtype, device):
    x, r, w, b = operands(op, shape, dtype)
    conventions = ["pytorch", "exact"] + ([] if dtype == torch.float64 else ["vllm"])
    h = x + r
    y = plain(op, h, w, b, device)[0]
    for convention in conventions:
        got = ops.fused_norm(op, x, w, b, eps=1e-5, residual=r, quant="dynamic", mode=mode, convention=convention,
                             y=True, device=device)
        q, scale, zp = ops.dynamic_range_quantize(y, mode=mode, convention=convention,
                                                  granularity="per_token" if len(shape) > 1 else "per_tensor",
                                                  device=device)
        assert torch.equal(got.y, y) and torch.equal(got.h, h) and torch.equal(got.q, q)
        assert got.scale.shape == shape[:-1] and torch.equal(got.scale.reshape(scale.shape), scale)
        assert (got.zero_point is None) == (mode == "symmetric")
        if zp is not None:
            assert got.zero_point.dtype == torch.int32 and torch.equal(got.zero_point.reshape(zp.shape), zp)
    if mode == "symmetric":  # per row: scale = amax / 127, q = round(y / scale)
        ref = reference(op, h, w, b)
        amax = ref.abs().amax(-1, keepdim=True)
        rtol = {torch.float16: 2e-3, torch.bfloat16: 1.6e-2}.get(dtype, 1e-5)
        torch.testing.assert_close(got.scale.double(), (amax / 127).reshape(shape[:-1]), rtol=rtol, atol=0)
        assert (got.q.double() - torch.round(ref / (amax / 127))).abs().max() <= 1


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(6, 200), (64,), (2, 13000)])
@pytest.mark.parametrize("convention", ["pytorch", "exact", "transformer_engine"])
@pytest.mark.parametrize("op", OPS)
def test_fp8_quantize_equals_the_chain(op, convention, shape, dtype, device):
    ml_dtypes = pytest.importorskip("ml_dtypes")
    if convention == "transformer_engine" and dtype == torch.float64:
        pytest.skip("TransformerEngine's cast has no f64 input")
    x, r, w, b = operands(op, shape, dtype)
    scale = torch.tensor([37.5])
    got = ops.fused_norm(op, x, w, b, eps=1e-5, residual=r, quant="fp8", scale=scale, convention=convention,
                         device=device)
    h = x + r
    y = plain(op, h, w, b, device)[0]
    q, amax = ops.fp8_quantize(y, scale, convention=convention, device=device)
    assert torch.equal(bits(got.q), bits(q)) and torch.equal(got.amax, amax) and got.y is None
    assert got.amax.item() == y.abs().max().float().item() and got.scale is scale
    # Within one E4M3 step (3 mantissa bits) of the f64 norm's saturating cast.
    ref = np.clip(reference(op, h, w, b).numpy() * 37.5, -448, 448)
    values = bits(got.q).numpy().view(ml_dtypes.float8_e4m3fn).astype(np.float64)
    step = np.exp2(np.floor(np.log2(np.maximum(np.abs(ref), 2.0**-6))) - 3)
    assert (np.abs(values - ref) <= step).all()


def test_numpy_arrays(device):
    rng = np.random.default_rng(4)
    x, r = rng.standard_normal((3, 40)).astype(np.float32), rng.standard_normal((3, 40)).astype(np.float32)
    w = rng.uniform(0.5, 1.5, 40).astype(np.float32)
    y, h = ops.fused_add_rms_norm(x, r, w, device=device)
    assert isinstance(y, np.ndarray) and np.array_equal(h, x + r)
    np.testing.assert_array_equal(y, ops.rms_norm(x + r, w, device=device))
    got = ops.rms_norm_quant(x, w, quant="fp8", scale=np.array([2.0], dtype=np.float32), device=device)
    want, amax = ops.fp8_quantize(ops.rms_norm(x, w, device=device), np.array([2.0], dtype=np.float32),
                                  device=device)
    np.testing.assert_array_equal(np.asarray(got.q).view(np.uint8), np.asarray(want).view(np.uint8))
    assert got.amax[0] == amax[0]


def test_plan_api(device):
    stream = baracuda.Stream.sim() if device == "sim" else baracuda.Stream.host()
    desc = baracuda.NormDescriptor("rms_norm", "f32", (2, 8), residual=True, quant="dynamic",
                                   dynamic_mode="asymmetric", convention="exact")
    assert (desc.residual, desc.quant, desc.dynamic_mode, desc.convention) == (True, "dynamic", "asymmetric",
                                                                               "exact")
    plan = baracuda.NormPlan.select(stream, desc)
    assert plan.quant_kind == "s8"
    assert baracuda.NormPlan.select(stream, baracuda.NormDescriptor("rms_norm", "f32", (2, 8))).quant_kind is None
    fp8 = baracuda.NormPlan.select(stream, baracuda.NormDescriptor("layer_norm", "f16", (2, 8), quant="fp8"))
    assert fp8.quant_kind == "fp8e4m3"
    x, r = torch.randn(2, 8), torch.randn(2, 8)
    q, h = torch.empty(2, 8, dtype=torch.int8), torch.empty(2, 8)
    s, z = torch.empty(2), torch.empty(2, dtype=torch.int32)
    ws = baracuda._arrays.workspace(x, plan.workspace_size) if plan.workspace_size else None
    plan.run(stream, ws, x=x, weight=torch.ones(8), residual=r, h=h, q=q, q_scale=s, q_zero_point=z)
    want = ops.fused_norm("rms_norm", x, torch.ones(8), residual=r, quant="dynamic", mode="asymmetric",
                          convention="exact", device=device)
    assert torch.equal(q, want.q) and torch.equal(h, want.h) and torch.equal(s, want.scale)
    assert torch.equal(z, want.zero_point)


def test_rejections(device):
    x, r, w = torch.randn(4, 64), torch.randn(4, 64), torch.rand(64) + 0.5
    kw = dict(device=device)
    with pytest.raises(baracuda.InvalidProblem, match="scale is missing"):
        ops.rms_norm_quant(x, w, quant="static", **kw)
    with pytest.raises(baracuda.InvalidProblem, match="scale has element kind f64"):
        ops.rms_norm_quant(x, w, quant="static", scale=torch.ones(1, dtype=torch.float64), **kw)
    with pytest.raises(baracuda.InvalidProblem, match="the zero point is an integer"):
        ops.rms_norm_quant(x, w, quant="static", scale=0.1, zero_point=0.5, **kw)
    with pytest.raises(baracuda.Unsupported, match="vllm convention is not modelled for FP8"):
        ops.rms_norm_quant(x, w, quant="fp8", scale=1.0, convention="vllm", **kw)
    with pytest.raises(baracuda.Unsupported, match="transformer_engine convention applies to FP8"):
        ops.rms_norm_quant(x, w, quant="static", scale=1.0, convention="transformer_engine", **kw)
    with pytest.raises(baracuda.Unsupported, match="vllm convention takes f16, bf16 or f32"):
        ops.rms_norm_quant(x.double(), w.double(), quant="dynamic", convention="vllm", **kw)
    with pytest.raises(ValueError, match="unknown dynamic range mode 'foo'"):
        ops.rms_norm_quant(x, w, quant="dynamic", mode="foo", **kw)
    with pytest.raises(ValueError, match="unknown norm quantized output 'int4'"):
        ops.fused_norm("rms_norm", x, w, quant="int4", **kw)
    with pytest.raises(ValueError, match="quant is 'static', 'dynamic' or 'fp8'"):
        ops.rms_norm_quant(x, w, quant="none", **kw)
    with pytest.raises(baracuda.InvalidProblem, match="residual has shape"):
        ops.fused_add_rms_norm(x, r[:, :32], w, **kw)
    with pytest.raises(baracuda.InvalidProblem, match="h is written only with a residual"):
        ops.fused_norm("rms_norm", x, w, h=r, **kw)
    with pytest.raises(baracuda.InvalidProblem, match="y=False leaves nothing to write"):
        ops.fused_norm("rms_norm", x, w, y=False, **kw)
    with pytest.raises(baracuda.InvalidProblem, match="inplace writes h over the residual"):
        ops.rms_norm_quant(x, w, quant="dynamic", inplace=True, **kw)
    buf = torch.randn(4, 65)  # h overlapping x other than exactly
    with pytest.raises(baracuda.InvalidProblem, match="h overlaps x"):
        ops.fused_norm("rms_norm", buf[:, :64], w, residual=r, h=buf[:, 1:], **kw)
    with pytest.raises(baracuda.InvalidProblem, match="y: shape"):
        ops.fused_norm("rms_norm", x, w, residual=r, y=torch.empty(4, 63), **kw)
    with pytest.raises(baracuda.InvalidProblem, match="the backward of the fused norm is the backward on h"):
        baracuda.NormBackwardPlan.select(baracuda.Stream.host(),
                                         baracuda.NormDescriptor("rms_norm", "f32", (4, 64), residual=True))
