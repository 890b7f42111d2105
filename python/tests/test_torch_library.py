"""With torch >= 2.4: baracuda's ops as torch.library custom ops (unary, gated activations, fake-quantize,
binary, ternary, softmax and the norms) — opcheck (schema, fake implementation, autograd registration) and
torch.compile without graph breaks. Skipped with an older torch (CI's Debian PyTorch is 1.13)."""

import pytest

torch = pytest.importorskip("torch")
import baracuda.torch as bt  # noqa: E402

pytestmark = pytest.mark.skipif(not bt.LIBRARY_OPS, reason="torch.library.custom_op needs torch >= 2.4")


@pytest.mark.parametrize("name,params", [("silu", {}), ("leaky_relu", {"negative_slope": 0.2}), ("exp", {})])
def test_opcheck_unary(name, params, device):
    x = torch.randn(4, 8, dtype=torch.float64, requires_grad=True)
    keys = sorted(params)
    args = (x, name, ",".join(keys), [float(params[k]) for k in keys], device)
    torch.library.opcheck(torch.ops.baracuda.unary.default, args)


@pytest.mark.parametrize("layout", ["second_half", "first_half", "interleaved"])
def test_opcheck_gated(layout, device):
    x = torch.randn(3, 16, dtype=torch.float64, requires_grad=True)
    torch.library.opcheck(torch.ops.baracuda.gated_activation.default,
                          (x, "swiglu", -1, layout, 1.702, 7.0, device))


def test_compile_traces_without_graph_breaks(device):
    def mlp(h):
        return bt.gelu(bt.swiglu(h, layout="first_half", device=device), device=device)

    compiled = torch.compile(mlp, backend="eager", fullgraph=True)  # fullgraph: a graph break is an error
    h = torch.randn(4, 32, requires_grad=True)
    y = compiled(h)
    torch.testing.assert_close(y, mlp(h))
    y.sum().backward()
    g = torch.autograd.grad(mlp(h).sum(), h)[0]
    torch.testing.assert_close(h.grad, g)


def test_opcheck_fake_quantize(device):
    x = torch.randn(4, 6, requires_grad=True)
    scale, zp = torch.tensor([0.05, 0.1, 0.2, 0.02]), torch.tensor([0, 3, -2, 1], dtype=torch.int32)
    args = (x, scale, zp, "s8", "per_channel", 0, 0, None, None, "pytorch", device)
    torch.library.opcheck(torch.ops.baracuda.fake_quantize.default, args)
    compiled = torch.compile(lambda t: bt.fake_quantize(t, scale, zp, granularity="per_channel", axis=0,
                                                        device=device), backend="eager", fullgraph=True)
    torch.testing.assert_close(compiled(x), torch.fake_quantize_per_channel_affine(x, scale, zp, 0, -128, 127))


def test_opcheck_learnable_quantize_ste_binary_ternary(device):
    g = torch.Generator().manual_seed(3)
    x = torch.randn(4, 6, generator=g, requires_grad=True)
    scale = torch.tensor([0.07], requires_grad=True)
    zp = torch.tensor([1.4], requires_grad=True)
    opts = ("s8", "per_tensor", 0, 0, None, None, "pytorch", device)
    torch.library.opcheck(torch.ops.baracuda.fake_quantize_learnable.default, (x, scale, zp, 0.5) + opts)
    torch.library.opcheck(torch.ops.baracuda.quantize_ste.default,
                          (x, torch.tensor([0.05]), torch.tensor([0], dtype=torch.int32)) + opts)
    a = torch.rand(3, 1, 4, generator=g, dtype=torch.float64, requires_grad=True)
    b = torch.rand(5, 1, generator=g, dtype=torch.float64, requires_grad=True) + 1
    torch.library.opcheck(torch.ops.baracuda.binary.default, (a, b, "mul", device))
    c = torch.rand(4, generator=g, dtype=torch.float64, requires_grad=True)
    torch.library.opcheck(torch.ops.baracuda.ternary.default, (a, b, c, "lerp", 1.0, device))

    def block(t):
        return bt.mul(bt.lerp(t, b, c, device=device), b, device=device)

    compiled = torch.compile(block, backend="eager", fullgraph=True)
    torch.testing.assert_close(compiled(a), block(a))


@pytest.mark.parametrize("log", [False, True])
def test_opcheck_softmax(log, device):
    g = torch.Generator().manual_seed(5)
    x = torch.randn(3, 7, generator=g, dtype=torch.float64, requires_grad=True)
    mask = torch.randn(7, generator=g, dtype=torch.float64)
    torch.library.opcheck(torch.ops.baracuda.softmax.default, (x, mask, -1, 1.3, log, device))
    torch.library.opcheck(torch.ops.baracuda.softmax.default, (x, None, 0, 1.0, log, device))
    y = bt.log_softmax(x.detach(), device=device) if log else bt.softmax(x.detach(), device=device)
    dy = torch.randn(3, 7, generator=g, dtype=torch.float64)
    torch.library.opcheck(torch.ops.baracuda.softmax_backward.default, (dy, y, -1, 1.0, log, device))


@pytest.mark.parametrize("op,weight,bias", [("rms_norm", True, False), ("rms_norm", False, False),
                                            ("layer_norm", True, True), ("layer_norm", True, False)])
def test_opcheck_norm(op, weight, bias, device):
    g = torch.Generator().manual_seed(6)
    x = torch.randn(2, 3, 16, generator=g, dtype=torch.float64, requires_grad=True)
    w = (torch.rand(16, generator=g, dtype=torch.float64) + 0.5).requires_grad_() if weight else None
    b = torch.randn(16, generator=g, dtype=torch.float64, requires_grad=True) if bias else None
    torch.library.opcheck(torch.ops.baracuda.norm.default, (x, w, b, op, 1e-5, device))
    with torch.no_grad():  # the backward op has no autograd of its own: its inputs need no gradient
        _, mean, rstd = torch.ops.baracuda.norm(x, w, b, op, 1e-5, device)
    dy = torch.randn(2, 3, 16, generator=g, dtype=torch.float64)
    wd = None if w is None else w.detach()
    torch.library.opcheck(torch.ops.baracuda.norm_backward.default, (dy, x.detach(), wd, mean, rstd, op, 1e-5,
                                                                     bias, device))


def test_compile_softmax_and_norms_without_graph_breaks(device):
    g = torch.Generator().manual_seed(7)
    w = (torch.rand(32, generator=g) + 0.5).requires_grad_()
    b = torch.randn(32, generator=g, requires_grad=True)
    mask = torch.zeros(32)
    mask[3] = -float("inf")

    def block(h):
        n = bt.layer_norm(bt.rms_norm(h, w, device=device), w, b, device=device)
        return bt.log_softmax(bt.softmax(n, mask=mask, device=device), 0, temperature=0.5, device=device)

    compiled = torch.compile(block, backend="eager", fullgraph=True)
    h = torch.randn(4, 32, generator=g, requires_grad=True)
    y = compiled(h)
    torch.testing.assert_close(y, block(h))
    y.sum().backward()
    grads = torch.autograd.grad(block(h).sum(), (h, w, b))
    for got, want in zip((h.grad, w.grad, b.grad), grads):
        torch.testing.assert_close(got, want)
