"""The FP8 GEMM (Fp8GemmPlan, ops.fp8_gemm) from Python, on host and sim, against a float64 evaluation of
fp8_gemm.hpp's contract written here: the FP8 codes are decoded by this file's own decoder (the OCP E4M3FN and
E5M2 formats, from their definitions: PyTorch 1.13 has no FP8 dtype and no _scaled_mm), the products and sums
in float64 with the per-tensor or Block128 scales, then alpha, the bias, the activation and, for an FP8
output, d_scale with saturation. The bound is the header's: the kernel's f32 promotions, (K + 136)·u·Σ|terms|
(u = 2^-24 on sim, 2^-53 on the host, doubled for this evaluation), plus one rounding of the output kind."""

import numpy as np
import pytest

import baracuda
from baracuda import ops

torch = pytest.importorskip("torch")
F = torch.nn.functional

FP8_MAX = {"fp8e4m3": 448.0, "fp8e5m2": 57344.0}
UNIT = {"f16": 2.0 ** -11, "bf16": 2.0 ** -8, "f32": 2.0 ** -24, "fp8e4m3": 2.0 ** -4, "fp8e5m2": 2.0 ** -3}
TINY = {"f16": 2.0 ** -25, "bf16": 2.0 ** -134, "f32": 2.0 ** -150, "fp8e4m3": 2.0 ** -10, "fp8e5m2": 2.0 ** -17}
DTYPE = {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32}
ACT = {"none": lambda v: v, "relu": F.relu, "silu": F.silu, "gelu_erf": F.gelu,
       "gelu_tanh": lambda v: F.gelu(v, approximate="tanh")}


# ---- the formats, from their definitions -------------------------------------------------------------------

def decode(codes, kind):
    """float64 values of FP8 codes (uint8). E4M3FN: 1 sign, 4 exponent bits (bias 7), 3 mantissa bits, no
    infinities, S.1111.111 NaN. E5M2: 1 sign, 5 exponent bits (bias 15), 2 mantissa bits, IEEE-like (exponent
    31: infinity with mantissa 0, else NaN). Exponent field 0: subnormal, 2^(1 − bias) · m / 2^mbits."""
    c = np.asarray(codes).astype(np.int64)
    ebits, mbits = (4, 3) if kind == "fp8e4m3" else (5, 2)
    bias = (1 << (ebits - 1)) - 1
    e = (c >> mbits) & ((1 << ebits) - 1)
    m = (c & ((1 << mbits) - 1)).astype(np.float64)
    mag = np.where(e == 0, np.ldexp(m / (1 << mbits), 1 - bias), np.ldexp(1.0 + m / (1 << mbits), e - bias))
    if kind == "fp8e4m3":
        mag = np.where((c & 0x7F) == 0x7F, np.nan, mag)
    else:
        top = (1 << ebits) - 1
        mag = np.where(e == top, np.where(m == 0, np.inf, np.nan), mag)
    return np.where(c & 0x80, -mag, mag)


def test_decoder_knows_the_formats():
    """The decoder itself, on values the OCP specification lists."""
    e4 = decode(np.array([0x00, 0x01, 0x08, 0x38, 0x7E, 0xFE, 0x7F, 0xB8], dtype=np.uint8), "fp8e4m3")
    np.testing.assert_array_equal(e4[[0, 1, 2, 3, 4, 5, 7]], [0.0, 2.0 ** -9, 2.0 ** -6, 1.0, 448.0, -448.0, -1.0])
    assert np.isnan(e4[6])
    e5 = decode(np.array([0x01, 0x04, 0x3C, 0x7B, 0x7C, 0xFC, 0x7D], dtype=np.uint8), "fp8e5m2")
    np.testing.assert_array_equal(e5[:6], [2.0 ** -16, 2.0 ** -14, 1.0, 57344.0, np.inf, -np.inf])
    assert np.isnan(e5[6])


def codes(shape, kind, seed):
    """Random finite FP8 codes of moderate magnitude (about 2^-3 .. 2^3), with zeros and subnormals mixed in."""
    rng = np.random.default_rng(seed)
    ebits, mbits = (4, 3) if kind == "fp8e4m3" else (5, 2)
    bias = (1 << (ebits - 1)) - 1
    e = rng.integers(bias - 3, bias + 3, size=shape)
    e = np.where(rng.random(shape) < 0.05, 0, e)  # subnormals (and zeros)
    c = (rng.integers(0, 2, size=shape) << 7) | (e << mbits) | rng.integers(0, 1 << mbits, size=shape)
    return torch.from_numpy(c.astype(np.uint8))


def fp8(t, kind):
    """A torch uint8 tensor of codes as the FP8 operand baracuda takes (PyTorch 1.13 has no FP8 dtype)."""
    return baracuda.Tensor(t, kind)


def blocks(x):
    return (x + 127) // 128


def scales(shape, seed):
    """f32 scales log-uniform in [2^-3, 2^1]."""
    g = torch.Generator().manual_seed(seed)
    return torch.exp2(torch.rand(shape, generator=g, dtype=torch.float64) * 4 - 3).float()


# ---- the reference ------------------------------------------------------------------------------------------

def reference(a, ak, b, bk, sa, sb, scaling, *, alpha=1.0, bias=None, activation="none"):
    """(v, tol_v): v = act(alpha · acc + bias) in float64, acc per fp8_gemm.hpp's scaling, and the bound before
    the output's rounding, for u the backend's unit (returned as a function of u)."""
    x, y = decode(a.numpy(), ak), decode(b.numpy(), bk)
    m, k = x.shape
    n = y.shape[0]
    acc, mag = np.zeros((m, n)), np.zeros((m, n))
    for kb in range(blocks(k)):
        part = slice(128 * kb, min(k, 128 * kb + 128))
        p, pm = x[:, part] @ y[:, part].T, np.abs(x[:, part]) @ np.abs(y[:, part]).T
        if scaling == "tensor":
            s = np.full((m, n), float(sa.reshape(-1)[0]) * float(sb.reshape(-1)[0]))
        else:
            sad, sbd = sa.double().numpy(), sb.double().numpy()
            s = sad[:, kb][:, None] * sbd[np.arange(n) // 128, kb][None, :]
        acc += s * p
        mag += np.abs(s) * pm
    v = alpha * acc
    mag *= abs(alpha)
    if bias is not None:
        bv = bias.double().numpy()
        v, mag = v + bv[None, :], mag + np.abs(bv)[None, :]
    out = ACT[activation](torch.from_numpy(v)).numpy()

    def tol(u):
        err = 2.0 * (k + 136) * u * mag + 4.0 * u * np.abs(v)
        if activation == "none":
            return err
        return 1.2 * err + 16.0 * u * (np.abs(out) + np.abs(v))

    return out, tol


def unit_of(device):
    return 2.0 ** -53 if device == "host" else 2.0 ** -24


def check(got, output, want_v, tol, device, d_scale=None):
    """got (D as returned) against v (and d_scale for an FP8 D: saturated, within one FP8 rounding)."""
    if output in FP8_MAX:  # torch 1.13: a baracuda.Tensor over uint8; torch >= 2.1: an fp8 tensor
        bits = got.array if isinstance(got, baracuda.Tensor) else got.view(torch.uint8)
        assert bits.dtype == torch.uint8 and (not isinstance(got, baracuda.Tensor) or got.kind == output)
        g = decode(bits.numpy(), output)
        want = np.clip(want_v * d_scale, -FP8_MAX[output], FP8_MAX[output])
        t = tol(unit_of(device)) * d_scale + 2.0 * UNIT[output] * np.abs(want) + 2.0 * TINY[output]
    else:
        assert got.dtype == DTYPE[output]
        g = got.double().numpy()
        want = want_v
        t = tol(unit_of(device)) + UNIT[output] * np.abs(want) + 2.0 * TINY[output]
    assert np.isfinite(want).all() and np.isfinite(g).all()
    err = np.abs(g - want)
    assert (err <= t).all(), f"max error {err.max()} (at {np.unravel_index(err.argmax(), err.shape)}) over its bound"
    return g


# ---- per-tensor scaling -------------------------------------------------------------------------------------

@pytest.mark.parametrize("ak,bk", [("fp8e4m3", "fp8e4m3"), ("fp8e4m3", "fp8e5m2"), ("fp8e5m2", "fp8e4m3")])
@pytest.mark.parametrize("output", ["bf16", "f16", "f32"])
def test_tensor_scaling(ak, bk, output, device):
    m, n, k = 19, 40, 160  # two K blocks, the second partial; M and N not multiples of a tile
    a, b = codes((m, k), ak, 1), codes((n, k), bk, 2)
    sa, sb = torch.tensor([0.75]), torch.tensor([1.5])
    d = ops.fp8_gemm(fp8(a, ak), fp8(b, bk), sa, sb, output=output, device=device)
    v, tol = reference(a, ak, b, bk, sa, sb, "tensor")
    check(d, output, v, tol, device)


def test_tensor_scales_as_numbers_and_alpha(device):
    m, n, k = 5, 24, 64
    a, b = codes((m, k), "fp8e4m3", 3), codes((n, k), "fp8e4m3", 4)
    d = ops.fp8_gemm(fp8(a, "fp8e4m3"), fp8(b, "fp8e4m3"), 0.5, 2.0 ** -3, alpha=-3.0, output="f32", device=device)
    v, tol = reference(a, "fp8e4m3", b, "fp8e4m3", torch.tensor([0.5]), torch.tensor([2.0 ** -3]), "tensor",
                       alpha=-3.0)
    check(d, "f32", v, tol, device)


# ---- Block128 -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("m_major", [False, True])
@pytest.mark.parametrize("bk", ["fp8e4m3", "fp8e5m2"])
def test_block128_scaling(m_major, bk, device):
    """DeepSeek-V3's scales: a_scale [M, ⌈K/128⌉] (or its M-major transpose, strides (1, M)), b_scale
    [⌈N/128⌉, ⌈K/128⌉]; N and K with a partial last block."""
    m, n, k = 9, 136, 272
    a, b = codes((m, k), "fp8e4m3", 5), codes((n, k), bk, 6)
    sa = scales((blocks(k), m), 7).t() if m_major else scales((m, blocks(k)), 7)
    sb = scales((blocks(n), blocks(k)), 8)
    assert sa.stride() == ((1, m) if m_major else (blocks(k), 1))
    d = ops.fp8_gemm(fp8(a, "fp8e4m3"), fp8(b, bk), sa, sb, output="bf16", device=device)
    v, tol = reference(a, "fp8e4m3", b, bk, sa, sb, "block128")
    check(d, "bf16", v, tol, device)
    # Each scale matters: another block scale of B's second row block changes only the columns 128..135.
    sb2 = sb.clone()
    sb2[1, 1] *= 2
    d2 = ops.fp8_gemm(fp8(a, "fp8e4m3"), fp8(b, bk), sa, sb2, output="bf16", device=device)
    assert torch.equal(d2[:, :128], d[:, :128]) and not torch.equal(d2[:, 128:], d[:, 128:])


def test_single_scales_pick_tensor_scaling_unless_told(device):
    """Both scales of one element: 'tensor' by default; the same problem as 'block128' (M = 1, one K and one N
    block: the shapes coincide) gives the same values."""
    a, b = codes((1, 64), "fp8e4m3", 9), codes((32, 64), "fp8e4m3", 10)
    sa, sb = torch.tensor([[0.25]]), torch.tensor([[2.0]])
    d1 = ops.fp8_gemm(fp8(a, "fp8e4m3"), fp8(b, "fp8e4m3"), sa, sb, output="f32", device=device)
    d2 = ops.fp8_gemm(fp8(a, "fp8e4m3"), fp8(b, "fp8e4m3"), sa, sb, output="f32", scaling="block128",
                      device=device)
    v, tol = reference(a, "fp8e4m3", b, "fp8e4m3", sa, sb, "tensor")
    check(d1, "f32", v, tol, device)
    check(d2, "f32", v, tol, device)


# ---- FP8 output, amax, bias, activations --------------------------------------------------------------------

@pytest.mark.parametrize("output,activation,bias_dtype,scaling", [
    ("fp8e4m3", "gelu_erf", torch.float32, "tensor"),
    ("fp8e5m2", "relu", torch.bfloat16, "tensor"),
    ("fp8e4m3", "silu", torch.float16, "block128"),
    ("fp8e4m3", "gelu_tanh", torch.bfloat16, "block128"),
])
def test_fp8_output_with_amax_bias_and_activation(output, activation, bias_dtype, scaling, device):
    m, n, k = 13, 48, 144
    a, b = codes((m, k), "fp8e4m3", 11), codes((n, k), "fp8e4m3", 12)
    if scaling == "tensor":
        sa, sb = torch.tensor([0.5]), torch.tensor([0.25])
    else:
        sa, sb = scales((m, blocks(k)), 13) * 0.25, scales((blocks(n), blocks(k)), 14) * 0.25
    bias = (torch.rand(n, generator=torch.Generator().manual_seed(15), dtype=torch.float64) * 8 - 4).to(bias_dtype)
    d_scale = torch.tensor([3.0])
    d, amax = ops.fp8_gemm(fp8(a, "fp8e4m3"), fp8(b, "fp8e4m3"), sa, sb, bias, output=output, d_scale=d_scale,
                           amax=True, activation=activation, device=device)
    v, tol = reference(a, "fp8e4m3", b, "fp8e4m3", sa, sb, scaling, bias=bias, activation=activation)
    check(d, output, v, tol, device, d_scale=3.0)
    # amax: max |v| over D after the activation, before d_scale.
    assert amax.dtype == torch.float32 and amax.shape == (1,)
    want = np.abs(v).max()
    assert abs(float(amax[0]) - want) <= tol(unit_of(device)).max() + want * 2.0 ** -24


def test_fp8_output_saturates(device):
    """round_sat(v · d_scale): beyond ±448 the E4M3 D is ±448 (not NaN); the amax is unscaled and written into
    the caller's array."""
    m, n, k = 7, 32, 48
    a, b = codes((m, k), "fp8e4m3", 16), codes((n, k), "fp8e4m3", 17)
    sa, sb = torch.tensor([1.0]), torch.tensor([1.0])
    amax = torch.full((1,), -1.0)
    d, r = ops.fp8_gemm(fp8(a, "fp8e4m3"), fp8(b, "fp8e4m3"), sa, sb, output="fp8e4m3", d_scale=1000.0,
                        amax=amax, device=device)
    assert r is amax
    v, tol = reference(a, "fp8e4m3", b, "fp8e4m3", sa, sb, "tensor")
    g = check(d, "fp8e4m3", v, tol, device, d_scale=1000.0)
    big = np.abs(v) * 1000.0 > 449.0
    assert big.sum() > m * n // 2  # most saturate
    np.testing.assert_array_equal(g[big], np.sign(v[big]) * 448.0)
    assert abs(float(amax[0]) - np.abs(v).max()) <= tol(unit_of(device)).max() + np.abs(v).max() * 2.0 ** -24


# ---- layouts, frameworks, edge problems -----------------------------------------------------------------------

def test_row_strides_and_out(device):
    """lda, ldb and ldd from the views' row strides (multiples of 16 for A and B); D written into a view of a
    wider buffer, whose padding stays as it was."""
    m, n, k = 6, 20, 48
    abuf, bbuf = codes((m, 80), "fp8e4m3", 18), codes((n, 64), "fp8e5m2", 19)
    a, b = abuf[:, :k], bbuf[:, :k]
    dbuf = torch.full((m, 29), 7.0)
    out = dbuf[:, :n]
    sa, sb = torch.tensor([2.0]), torch.tensor([0.5])
    r = ops.fp8_gemm(fp8(a, "fp8e4m3"), fp8(b, "fp8e5m2"), sa, sb, output="f32", out=out, device=device)
    assert r is out
    v, tol = reference(a.contiguous(), "fp8e4m3", b.contiguous(), "fp8e5m2", sa, sb, "tensor")
    check(out, "f32", v, tol, device)
    assert bool((dbuf[:, n:] == 7.0).all())


def test_numpy_operands(device):
    """numpy in, numpy out: uint8 codes in a baracuda.Tensor, and ml_dtypes' FP8 arrays where ml_dtypes is
    installed (the same bits, the same result)."""
    m, n, k = 4, 16, 32
    a, b = codes((m, k), "fp8e4m3", 20), codes((n, k), "fp8e4m3", 21)
    sa, sb = np.array([0.5], dtype=np.float32), np.array([4.0], dtype=np.float32)
    d = ops.fp8_gemm(baracuda.Tensor(a.numpy(), "fp8e4m3"), baracuda.Tensor(b.numpy(), "fp8e4m3"), sa, sb,
                     output="f32", device=device)
    assert isinstance(d, np.ndarray) and d.dtype == np.float32
    v, tol = reference(a, "fp8e4m3", b, "fp8e4m3", torch.from_numpy(sa), torch.from_numpy(sb), "tensor")
    check(torch.from_numpy(d), "f32", v, tol, device)
    ml_dtypes = pytest.importorskip("ml_dtypes")
    e4m3 = ml_dtypes.float8_e4m3fn
    d2 = ops.fp8_gemm(a.numpy().view(e4m3), b.numpy().view(e4m3), sa, sb, output="f32", device=device)
    np.testing.assert_array_equal(d2, d)
    # ml_dtypes' own decoding agrees with this file's.
    np.testing.assert_array_equal(a.numpy().view(e4m3).astype(np.float64), decode(a.numpy(), "fp8e4m3"))


def test_empty_d_writes_only_the_amax(device):
    a, b = torch.zeros((0, 32), dtype=torch.uint8), codes((16, 32), "fp8e4m3", 22)
    amax = torch.full((1,), -1.0)
    d, _ = ops.fp8_gemm(fp8(a, "fp8e4m3"), fp8(b, "fp8e4m3"), 1.0, 1.0, output="fp8e4m3", d_scale=1.0, amax=amax,
                        device=device)
    assert tuple((d.array if isinstance(d, baracuda.Tensor) else d).shape) == (0, 16) and float(amax[0]) == 0.0


def test_k_zero_runs_the_epilogue(device):
    """K = 0: acc = 0, so D = act(alpha · 0 + bias)."""
    a, b = torch.zeros((3, 0), dtype=torch.uint8), torch.zeros((8, 0), dtype=torch.uint8)
    bias = torch.linspace(-2, 2, 8)
    d = ops.fp8_gemm(fp8(a, "fp8e4m3"), fp8(b, "fp8e4m3"), 1.0, 1.0, bias, output="f32", activation="relu",
                     device=device)
    assert torch.equal(d, F.relu(bias).expand(3, 8))


# ---- the plan API -----------------------------------------------------------------------------------------

def test_plan_api(device):
    stream = baracuda.Stream.sim() if device == "sim" else baracuda.Stream.host()
    desc = baracuda.Fp8GemmDescriptor(8, 24, 32, b_kind="fp8e5m2", output="f16", scaling="block128",
                                      has_bias=True, bias_kind="f32", activation="silu", alpha=0.5)
    assert (desc.m, desc.n, desc.k, desc.a_kind, desc.b_kind, desc.output) == (8, 24, 32, "fp8e4m3", "fp8e5m2", "f16")
    assert (desc.scaling, desc.bias_kind, desc.activation, desc.alpha) == ("block128", "f32", "silu", 0.5)
    assert not desc.has_amax and not desc.fast_accum and not desc.a_scale_m_major and desc.has_bias
    assert desc == baracuda.Fp8GemmDescriptor(8, 24, 32, b_kind="fp8e5m2", output="f16", scaling="block128",
                                              has_bias=True, bias_kind="f32", activation="silu", alpha=0.5)
    assert baracuda.fp8_gemm_scalings() == ["tensor", "block128"]
    plan = baracuda.Fp8GemmPlan.select(stream, desc)
    assert plan.sku.startswith("fp8_gemm/") and ("sim" in plan.sku) == (device == "sim")
    assert plan.workspace_size == 0 and plan.descriptor == desc
    a, b = codes((8, 32), "fp8e4m3", 23), codes((24, 32), "fp8e5m2", 24)
    sa, sb, bias = scales((8, 1), 25), scales((1, 1), 26), torch.linspace(-1, 1, 24)
    d = torch.empty((8, 24), dtype=torch.float16)
    args = dict(a=fp8(a, "fp8e4m3"), b=fp8(b, "fp8e5m2"), a_scale=sa, b_scale=sb, bias=bias, d=d)
    plan.can_implement(stream, **args)
    plan.run(stream, **args)
    v, tol = reference(a, "fp8e4m3", b, "fp8e5m2", sa, sb, "block128", alpha=0.5, bias=bias, activation="silu")
    check(d, "f16", v, tol, device)
    with pytest.raises(TypeError, match="this plan takes: a, b, a_scale, b_scale, bias, d_scale, d, amax"):
        plan.run(stream, x=d, **args)


# ---- rejections -----------------------------------------------------------------------------------------

def test_rejections(device):
    e4, e5 = "fp8e4m3", "fp8e5m2"
    a, b = codes((4, 32), e4, 27), codes((8, 32), e4, 28)
    one = torch.ones(1)
    with pytest.raises(baracuda.InvalidProblem, match="multiple of 16"):  # K = 24
        ops.fp8_gemm(fp8(a[:, :24].contiguous(), e4), fp8(b[:, :24].contiguous(), e4), one, one, device=device)
    with pytest.raises(baracuda.Unsupported, match="e5m2"):  # both E5M2
        ops.fp8_gemm(fp8(a, e5), fp8(b, e5), one, one, device=device)
    assert issubclass(baracuda.Unsupported, NotImplementedError)
    with pytest.raises(baracuda.Unsupported, match="amax"):  # an amax needs an FP8 D
        ops.fp8_gemm(fp8(a, e4), fp8(b, e4), one, one, output="bf16", amax=True, device=device)
    with pytest.raises(baracuda.Unsupported):  # an FP8 bias kind
        ops.fp8_gemm(fp8(a, e4), fp8(b, e4), one, one, fp8(torch.zeros(8, dtype=torch.uint8), e4), device=device)
    with pytest.raises(baracuda.InvalidProblem, match="d_scale"):  # an FP8 D needs its scale
        ops.fp8_gemm(fp8(a, e4), fp8(b, e4), one, one, output=e4, device=device)
    with pytest.raises(baracuda.InvalidProblem, match="d_scale"):  # and only an FP8 D takes one
        ops.fp8_gemm(fp8(a, e4), fp8(b, e4), one, one, output="f32", d_scale=1.0, device=device)
    with pytest.raises(baracuda.InvalidProblem, match="a_scale"):  # scales are f32
        ops.fp8_gemm(fp8(a, e4), fp8(b, e4), torch.ones(1, dtype=torch.float64), one, device=device)
    with pytest.raises(baracuda.InvalidProblem, match="a_scale"):  # Block128's a_scale is [M, ⌈K/128⌉]
        ops.fp8_gemm(fp8(a, e4), fp8(b, e4), torch.ones(3, 1), torch.ones(1, 1), scaling="block128", device=device)
    with pytest.raises(baracuda.InvalidProblem, match="b_scale"):
        ops.fp8_gemm(fp8(a, e4), fp8(b, e4), torch.ones(4, 1), torch.ones(2, 1), device=device)
    with pytest.raises(baracuda.InvalidProblem, match="a_scale's strides"):  # neither row-major nor M-major
        ops.fp8_gemm(fp8(codes((4, 256), e4, 33), e4), fp8(codes((8, 256), e4, 34), e4), torch.ones(4, 4)[:, ::2],
                     torch.ones(1, 2), device=device)
    with pytest.raises(baracuda.InvalidProblem, match="multiple of 16"):  # lda = 40
        ops.fp8_gemm(fp8(codes((4, 40), e4, 29)[:, :32], e4), fp8(b, e4), one, one, device=device)
    with pytest.raises(baracuda.InvalidProblem, match="row-major"):  # A transposed: not the TN layout
        ops.fp8_gemm(fp8(codes((32, 4), e4, 30).t(), e4), fp8(b, e4), one, one, device=device)
    flat = codes((4 * 32 + 32,), e4, 31)
    off = (1 - flat.data_ptr()) % 16
    misaligned = flat[off:off + 4 * 32].view(4, 32)  # one byte past a 16-byte boundary
    assert misaligned.data_ptr() % 16 == 1
    with pytest.raises(baracuda.MisalignedOperand, match="16-byte aligned"):
        ops.fp8_gemm(fp8(misaligned, e4), fp8(b, e4), one, one, device=device)
    with pytest.raises(ValueError, match="unknown fp8 gemm scaling 'rowwise'"):
        ops.fp8_gemm(fp8(a, e4), fp8(b, e4), one, one, scaling="rowwise", device=device)
    with pytest.raises(baracuda.InvalidProblem, match="share K"):
        ops.fp8_gemm(fp8(a, e4), fp8(codes((8, 48), e4, 32), e4), one, one, device=device)
