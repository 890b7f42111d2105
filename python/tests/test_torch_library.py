"""With torch >= 2.4: baracuda's unary and gated activations as torch.library custom ops — opcheck (schema,
fake implementation, autograd registration) and torch.compile without graph breaks. Skipped with an older
torch (CI's Debian PyTorch is 1.13)."""

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
