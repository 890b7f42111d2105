"""The cuda device from Python (skipped without a usable GPU): every family on torch CUDA tensors against the
same call on the host reference, the framework's current stream, CUDA-graph capture of a plan run and of the
functional API, cupy arrays, and autograd through CUDA tensors."""

import numpy as np
import pytest

import baracuda
from baracuda import ops

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.skipif(not (torch.cuda.is_available() and baracuda.cuda_available()),
                                reason="needs a CUDA GPU")


def rand(*shape, seed=0, dtype=torch.float32, scale=1.0):
    return (torch.randn(*shape, generator=torch.Generator().manual_seed(seed)) * scale).to(dtype)


def ints(shape, lo, hi, seed, dtype):
    return torch.randint(lo, hi, shape, generator=torch.Generator().manual_seed(seed), dtype=torch.int32).to(dtype)


def on_cuda(value):
    return value.cuda() if isinstance(value, torch.Tensor) else value


def as_tuple(value):
    return tuple(value) if isinstance(value, (tuple, list)) else (value,)


def assert_same(got, want, exact, sums):
    """`got` (from cuda) against `want` (from host): integer and fp8 results bit for bit; float results within
    the last bits that a libm-style function may change, or, for sums (`sums`), that their order may change
    relative to the largest result."""
    if want is None:
        assert got is None
        return
    if isinstance(want, baracuda.Tensor):  # fp8 in a torch before 2.1: the bits in uint8
        assert isinstance(got, baracuda.Tensor) and got.kind == want.kind
        got, want = got.array, want.array
    assert got.is_cuda and got.dtype == want.dtype and got.shape == want.shape
    got = got.cpu()
    if exact or not want.is_floating_point() or want.element_size() == 1:
        assert torch.equal(got.view(torch.uint8) if want.element_size() == 1 else got, want.view(torch.uint8)
                           if want.element_size() == 1 else want)
        return
    tol = {torch.float16: 2e-3, torch.bfloat16: 1.6e-2}.get(want.dtype, 2e-6)
    atol = tol * float(want.abs().max()) if sums else tol * 0.05
    torch.testing.assert_close(got, want, rtol=tol, atol=atol, equal_nan=True)


def same_on_cuda_and_host(call, *inputs, exact=False, sums=False):
    """`call(*inputs, device)` on CPU tensors (the host reference) and on their CUDA copies."""
    want = as_tuple(call(*inputs, device="host"))
    got = as_tuple(call(*[on_cuda(v) for v in inputs], device=None))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert_same(g, w, exact, sums)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("op", ["relu", "silu", "gelu", "exp", "tanh", "sigmoid"])
def test_unary(op, dtype):
    x = rand(3, 1000, seed=1, dtype=dtype, scale=3)
    same_on_cuda_and_host(lambda t, device: getattr(ops, op)(t, device=device), x, exact=op == "relu")
    dy = rand(3, 1000, seed=2, dtype=dtype)
    same_on_cuda_and_host(lambda d, t, device: ops.unary_backward(op, d, t, device=device), dy, x)


@pytest.mark.parametrize("kind", baracuda.gated_activation_kinds())
def test_gated_activation_forward_and_backward(kind):
    x = rand(5, 2 * 384, seed=3, dtype=torch.bfloat16, scale=2)
    same_on_cuda_and_host(lambda t, device: ops.gated_activation(kind, t, device=device), x)
    dy = rand(5, 384, seed=4, dtype=torch.bfloat16)
    same_on_cuda_and_host(lambda d, t, device: ops.gated_activation_backward(kind, d, t, device=device), dy, x)


def test_binary_ternary_where_and_their_backward():
    a, b, c = rand(4, 1, 33, seed=5), rand(1, 7, 33, seed=6), rand(4, 7, 1, seed=7)
    same_on_cuda_and_host(lambda x, y, device: ops.add(x, y, device=device), a, b, exact=True)
    same_on_cuda_and_host(lambda x, y, device: ops.pow(x.abs(), y, device=device), a, b)
    same_on_cuda_and_host(lambda x, y, z, device: ops.lerp(x, y, z, device=device), a, b, c)
    same_on_cuda_and_host(lambda x, y, device: ops.compare("lt", x, y, device=device), a, b, exact=True)
    cond = rand(4, 7, 33, seed=8) > 0
    same_on_cuda_and_host(lambda k, x, y, device: ops.where(k, x, y, device=device), cond, a, b, exact=True)
    dy = rand(4, 7, 33, seed=9)
    same_on_cuda_and_host(lambda d, x, y, device: ops.binary_backward("mul", d, x, y, device=device), dy, a, b,
                          sums=True)


def test_cast_affine_fill_and_sequences():
    x = rand(1000, seed=10, scale=50)
    for kind in ("bf16", "f16", "s32", "fp8e4m3"):
        same_on_cuda_and_host(lambda t, device: ops.cast(t, kind, device=device), x, exact=True)
    same_on_cuda_and_host(lambda t, device: ops.affine(t, 0.5, -2.0, device=device), x)
    y = torch.empty(77, device="cuda")
    ops.fill_(y, 3.25)
    assert bool((y == 3.25).all())
    r = ops.arange(0, 100, 3, like=y)
    assert r.is_cuda and torch.equal(r.cpu(), ops.arange(0, 100, 3, like=torch.zeros(1)))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_gemm_linear_backward_products_and_epilogues(dtype):
    """GemmPlan on cuda (cuBLASLt where it serves, the bespoke kernels elsewhere) against the host reference:
    y = x·Wᵀ + b, dX = dY·W with GELU, dW = dYᵀ·X with db, a SiLU epilogue (bespoke only) and D over C."""
    x, w, b = rand(33, 64, seed=40, dtype=dtype), rand(48, 64, seed=41, dtype=dtype), rand(48, seed=42, dtype=dtype)
    dy = rand(33, 48, seed=43, dtype=dtype)
    same_on_cuda_and_host(lambda t, v, c, device: ops.gemm(t, v.t(), bias=c, device=device), x, w, b, sums=True)
    same_on_cuda_and_host(lambda d, v, device: ops.gemm(d, v, activation="gelu_tanh", aux=True, device=device)[:2],
                          dy, w, sums=True)
    same_on_cuda_and_host(lambda d, t, device: ops.gemm(d.t(), t, bias_grad=True, device=device), dy, x, sums=True)
    same_on_cuda_and_host(lambda t, v, c, device: ops.gemm(t, v.t(), bias=c, activation="silu", device=device),
                          x, w, b, sums=True)
    c = rand(33, 48, seed=44, dtype=dtype)
    def in_place(t, v, z, device):
        z = z.clone()  # the host call must leave the input for the cuda call
        return ops.gemm(t, v.t(), z, beta=0.5, out=z, device=device)

    same_on_cuda_and_host(in_place, x, w, c, sums=True)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_grouped_gemm(dtype):
    """GroupedGemmPlan on cuda (the offsets read by the kernel only) against the host reference."""
    x, w, b = rand(150, 64, seed=45, dtype=dtype), rand(4, 72, 64, seed=46, dtype=dtype), rand(4, 72, seed=47)
    offsets = torch.tensor([0, 100, 100, 120, 150], dtype=torch.int32)
    same_on_cuda_and_host(lambda t, v, o, c, device: ops.grouped_gemm(t, v, o, c, output="f32", device=device)
                          if dtype != torch.float32 else ops.grouped_gemm(t, v, o, c, device=device),
                          x, w, offsets, b, sums=True)


@pytest.mark.parametrize("kind,zp", [("s8", -3), ("u8", 120)])
def test_quantize_family(kind, zp):
    x = rand(6, 40, seed=11, scale=3)
    s, z = torch.tensor([0.037]), torch.tensor([zp], dtype=torch.int32)
    same_on_cuda_and_host(lambda t, a, b, device: ops.quantize(t, a, b, quantized=kind, device=device), x, s, z,
                          exact=True)
    q = ops.quantize(x, s, z, quantized=kind, device="host")
    same_on_cuda_and_host(lambda t, a, b, device: ops.dequantize(t, a, b, quantized=kind, device=device), q, s, z,
                          exact=True)
    same_on_cuda_and_host(lambda t, a, b, device: ops.fake_quantize(t, a, b, device=device), x, s, z, exact=True)
    dy = rand(6, 40, seed=12)
    ls, lz = torch.tensor([0.07]), torch.tensor([1.6])
    same_on_cuda_and_host(
        lambda d, t, a, b, device: ops.fake_quantize_learnable_backward(d, t, a, b, grad_factor=0.5, device=device),
        dy, x, ls, lz, sums=True)
    same_on_cuda_and_host(lambda t, device: ops.dynamic_range_quantize(t, device=device), x, exact=True)
    same_on_cuda_and_host(lambda t, device: ops.dynamic_range_quantize(t, mode="asymmetric", device=device), x,
                          exact=True)


def test_fp8_family():
    x = rand(7, 129, seed=13, scale=100)
    scale = torch.tensor([1.7])
    same_on_cuda_and_host(lambda t, s, device: ops.fp8_quantize(t, s, kind="fp8e5m2", device=device), x, scale,
                          exact=True)
    y, _ = ops.fp8_quantize(x, scale, device="host")
    same_on_cuda_and_host(lambda t, s, device: ops.fp8_dequantize(t, s, device=device), y, 1 / scale, exact=True)

    def update(h, device):
        h = h.clone()
        s, si = torch.ones(1, device=h.device), torch.ones(1, device=h.device)
        ops.fp8_scaling_update(h, s, si, margin=1, device=device)
        return h, s, si

    same_on_cuda_and_host(update, rand(16, seed=14).abs() * 10, exact=True)


@pytest.mark.parametrize("scaling", ["tensor", "block128", "block128_m_major"])
@pytest.mark.parametrize("fast_accum", [False, True])
def test_fp8_gemm(scaling, fast_accum):
    """Fp8GemmPlan on cuda (cuBLASLt where it serves the problem, else the bespoke kernel) against the host
    reference: bf16 D within bf16's tolerance of the largest value (no summation order is promised), and an
    FP8 D with amax within one E4M3 step."""
    m, n, k = 40, 136, 272
    codes = [torch.randint(0, 256, shape, generator=torch.Generator().manual_seed(seed), dtype=torch.uint8)
             for shape, seed in (((m, k), 48), ((n, k), 49))]
    codes = [c & 0xBF for c in codes]  # E4M3 exponent fields 0..7: |values| < 2, no NaN
    if scaling == "tensor":
        sa, sb = torch.tensor([0.25]), torch.tensor([0.5])
    else:
        sa = rand(3, m, seed=50).abs().t() + 0.1 if scaling.endswith("m_major") else rand(m, 3, seed=50).abs() + 0.1
        sb = rand(2, 3, seed=51).abs() + 0.1

    def gemm(a, b, x, y, device, **kw):
        return ops.fp8_gemm(baracuda.Tensor(a, "fp8e4m3"), baracuda.Tensor(b, "fp8e4m3"), x, y, device=device,
                            fast_accum=fast_accum, **kw)

    same_on_cuda_and_host(lambda a, b, x, y, device: gemm(a, b, x, y, device), *codes, sa, sb, sums=True)
    want, want_amax = gemm(*codes, sa, sb, "host", output="fp8e4m3", d_scale=0.5, amax=True)
    got, got_amax = gemm(*[on_cuda(v) for v in (*codes, sa, sb)], None, output="fp8e4m3", d_scale=0.5, amax=True)

    def values(d):  # an fp8 tensor (torch >= 2.1) or a baracuda.Tensor over uint8, decoded on the host
        bits = d.array if isinstance(d, baracuda.Tensor) else d.view(torch.uint8)
        return ops.fp8_dequantize(baracuda.Tensor(bits.cpu(), "fp8e4m3"), torch.ones(1), device="host")

    v, w = values(got), values(want)
    assert bool(((v - w).abs() <= w.abs() * 2.0 ** -3 + 2.0 ** -9).all())  # within one E4M3 step
    torch.testing.assert_close(got_amax.cpu(), want_amax, rtol=1.6e-2 if fast_accum else 1e-4, atol=0)


@pytest.mark.parametrize("m", [1, 16, 300])
def test_int8_gemm_and_linears(m):
    """M = 1 takes the split-K decode kernel (a workspace), 300 the tiled or wgmma kernels; integer results are
    exact whatever the kernel, and the linears' epilogues are one f32 expression of them."""
    a, b = ints((m, 512), -128, 128, 15, torch.int8), ints((384, 512), -128, 128, 16, torch.int8)
    same_on_cuda_and_host(lambda x, w, device: ops.int_gemm(x, w, device=device), a, b, exact=True)
    w_scale, bias = torch.rand(384) * 0.01 + 0.001, rand(384, seed=17)
    same_on_cuda_and_host(lambda x, w, s, c, device: ops.smooth_quant_linear(x, w, s, c, x_scale=0.02,
                                                                             output="bf16", device=device),
                          a, b, w_scale, bias.bfloat16(), sums=True)
    x = rand(m, 512, seed=18)
    same_on_cuda_and_host(lambda t, w, s, c, device: ops.quantized_linear(t, w, s, c, activation="silu",
                                                                          device=device), x, b, w_scale, bias, sums=True)


@pytest.mark.parametrize("act_order", [False, True])
def test_w4a16_repack_and_gemm(act_order):
    rng = np.random.default_rng(19)
    k, n, group = 256, 128, 64
    sym = baracuda.quantize_int4(rng.standard_normal((k, n)).astype(np.float32), group, "symmetric",
                                 rng.permutation(np.repeat(np.arange(k // group, dtype=np.int32), group))
                                 if act_order else None)
    qweight, _, scales, g_idx = (torch.from_numpy(v) for v in baracuda.gptq_pack(sym))

    def repack(q, s, g, device):
        return ops.marlin_repack(q, s, g_idx=g if act_order else None, group=group, device=device)

    same_on_cuda_and_host(repack, qweight, scales, g_idx, exact=True)
    b_q, m_scales, _, perm = repack(qweight, scales, g_idx, "host")
    for m in (1, 40):
        a = rand(m, k, seed=20, dtype=torch.float16)
        same_on_cuda_and_host(lambda x, q, s, p, device: ops.int4_gemm(x, q, s, perm=p, group=group, device=device),
                              a, b_q, m_scales, perm, sums=True)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_reductions_softmax_and_norms(dtype):
    x = rand(6, 700, seed=30, dtype=dtype)
    for name in ("sum", "mean", "amax", "argmax", "logsumexp", "var"):
        same_on_cuda_and_host(lambda t, device: getattr(ops, name)(t, -1, device=device), x, sums=True)
    same_on_cuda_and_host(lambda t, device: ops.vector_norm(t, 2, (0, 1), device=device), x, sums=True)
    same_on_cuda_and_host(lambda t, device: ops.softmax(t, -1, temperature=0.7, device=device), x, sums=True)
    y = ops.softmax(x, -1, device="host")
    dy = rand(6, 700, seed=31, dtype=dtype)
    same_on_cuda_and_host(lambda d, t, device: ops.softmax_backward(d, t, -1, device=device), dy, y, sums=True)
    w, b = rand(700, seed=32, dtype=dtype), rand(700, seed=33, dtype=dtype)
    for op in ("rms_norm", "layer_norm"):
        bias = b if op == "layer_norm" else None
        same_on_cuda_and_host(lambda t, ww, device: ops.norm(op, t, ww, bias if device == "host" else on_cuda(bias),
                                                             device=device), x, w, sums=True)
        _, mean, rstd = ops.norm(op, x, w, bias, device="host")
        same_on_cuda_and_host(lambda d, t, ww, m, r, device: ops.norm_backward(op, d, t, ww, m, r, bias=bias is not None,
                                                                               device=device), dy, x, w, mean, rstd,
                              sums=True)


@pytest.mark.parametrize("quant", ["static", "dynamic", "fp8"])
def test_fused_norms_equal_the_chain_on_cuda(quant):
    def same_bits(got, want):  # fp8 compared as bytes (a baracuda.Tensor over uint8 before torch 2.1)
        got, want = (t.array if isinstance(t, baracuda.Tensor) else t for t in (got, want))
        assert got.is_cuda and got.dtype == want.dtype and got.shape == want.shape
        assert torch.equal(*(t.view(torch.uint8) if t.element_size() == 1 else t for t in (got, want)))

    x, r = rand(6, 700, seed=34, dtype=torch.bfloat16).cuda(), rand(6, 700, seed=35, dtype=torch.bfloat16).cuda()
    w = rand(700, seed=36, dtype=torch.bfloat16).cuda()
    h = x + r
    y = ops.rms_norm(h, w)
    got_y, got_h = ops.fused_add_rms_norm(x, r, w)
    same_bits(got_h, h)
    same_bits(got_y, y)
    scale = on_cuda({"static": torch.tensor([0.03]), "fp8": torch.tensor([40.0])}.get(quant))
    got = ops.rms_norm_quant(x, w, quant=quant, residual=r, scale=scale)
    same_bits(got.h, h)
    if quant == "static":
        pairs = [(got.q, ops.quantize(y, scale, torch.zeros(1, dtype=torch.int32, device="cuda")))]
    elif quant == "dynamic":
        pairs = zip((got.q, got.scale), ops.dynamic_range_quantize(y)[:2])
    else:
        pairs = zip((got.q, got.amax), ops.fp8_quantize(y, scale))
    for g, want in pairs:
        same_bits(g, want)


def test_runs_on_the_current_stream():
    """The op is ordered after the side stream's earlier work: run on another stream, it would read x before
    the fill that a long sleep delays."""
    side = torch.cuda.Stream()
    x = torch.zeros(1 << 20, device="cuda")
    torch.cuda.synchronize()
    with torch.cuda.stream(side):
        assert baracuda._arrays.stream_for(x).handle == side.cuda_stream
        torch.cuda._sleep(100_000_000)
        x.fill_(-2.0)
        y = ops.abs(x)
    side.synchronize()
    assert bool((y == 2.0).all())


def test_plan_run_is_captured_in_a_cuda_graph():
    """select outside the capture, run inside it (the int8 decode GEMM with its split-K workspace): the graph
    replays on new inputs."""
    side = torch.cuda.Stream()
    stream = baracuda.Stream.cuda(0, side.cuda_stream)
    plan = baracuda.IntGemmPlan.select(stream, baracuda.IntGemmDescriptor(1, 4096, 4096, "s8", "s8"))
    assert "sim" not in plan.sku and plan.workspace_size > 0  # the cuda kernel, split K
    a = torch.zeros(1, 4096, dtype=torch.int8, device="cuda")
    b = ints((4096, 4096), -128, 128, 21, torch.int8).cuda()
    c = torch.empty(1, 4096, dtype=torch.int32, device="cuda")
    ws = torch.empty(plan.workspace_size, dtype=torch.uint8, device="cuda")
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=side):
        plan.run(stream, ws, a=a, b=b, c=c)
    for seed in (22, 23):
        a.copy_(ints((1, 4096), -128, 128, seed, torch.int8).cuda())
        c.fill_(0)
        graph.replay()
        torch.cuda.synchronize()
        assert torch.equal(c.cpu(), a.cpu().int() @ b.cpu().int().t())


def test_functional_api_is_captured_in_a_cuda_graph():
    x = rand(64, 512, seed=24).cuda()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        ops.silu(x)  # warm-up: selects and caches the plan outside the capture
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        y = ops.silu(x)
    x.copy_(rand(64, 512, seed=25).cuda())
    graph.replay()
    torch.cuda.synchronize()
    torch.testing.assert_close(y, torch.nn.functional.silu(x), rtol=2e-6, atol=1e-7)


def test_cupy_in_cupy_out():
    cupy = pytest.importorskip("cupy")
    x = cupy.linspace(-3, 3, 1000, dtype=cupy.float32)
    y = ops.silu(x)
    assert isinstance(y, cupy.ndarray) and y.dtype == cupy.float32
    np.testing.assert_allclose(cupy.asnumpy(y), cupy.asnumpy(x / (1 + cupy.exp(-x))), rtol=2e-6, atol=1e-7)
    before = x.data.ptr
    assert ops.relu(x, out=x) is x and x.data.ptr == before and bool((x >= 0).all())
    q, scale, _ = ops.dynamic_range_quantize(x.reshape(10, 100))
    assert isinstance(q, cupy.ndarray) and q.dtype == cupy.int8 and scale.shape == (10,)


def test_autograd_on_cuda_tensors():
    import baracuda.torch as bt

    x = rand(4, 64, seed=26, dtype=torch.float64).cuda().requires_grad_()
    assert torch.autograd.gradcheck(lambda t: bt.swiglu(t), (x,), eps=1e-6, atol=1e-7, rtol=1e-5)
    assert torch.autograd.gradcheck(lambda t: bt.silu(t), (x,), eps=1e-6, atol=1e-7, rtol=1e-5)
    g = rand(64, seed=28, dtype=torch.float64).cuda().requires_grad_()
    assert torch.autograd.gradcheck(lambda t, ww: bt.rms_norm(t, ww), (x, g), eps=1e-6, atol=1e-7, rtol=1e-5)
    assert torch.autograd.gradcheck(lambda t: bt.log_softmax(t, 0), (x,), eps=1e-6, atol=1e-7, rtol=1e-5)
    w = rand(8, 16, seed=27).cuda().requires_grad_()
    scale = torch.tensor([0.05], device="cuda", requires_grad=True)
    zp = torch.tensor([0.4], device="cuda", requires_grad=True)
    bt.fake_quantize_learnable(w, scale, zp).sum().backward()
    assert w.grad.is_cuda and scale.grad.is_cuda and zp.grad.is_cuda


def test_errors_on_cuda():
    x = torch.zeros(8, device="cuda")
    with pytest.raises(baracuda.InvalidProblem, match="CUDA array cannot run on the sim device"):
        ops.relu(x, device="sim")
    stream = baracuda.Stream.cuda(0, torch.cuda.current_stream().cuda_stream)
    plan = baracuda.UnaryPlan.select(stream, baracuda.UnaryDescriptor("relu", "f32", (8,)))
    with pytest.raises(baracuda.InvalidProblem, match="cuda device 0"):
        plan.run(stream, input=torch.zeros(8), out=x)  # a CPU input to a cuda plan
