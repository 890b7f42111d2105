"""baracuda.torch: gradcheck in f64 through every autograd Function, and a training step through them."""

import pytest

torch = pytest.importorskip("torch")
import baracuda  # noqa: E402
import baracuda.torch as bt  # noqa: E402

CATALOG = {op["name"]: op for op in baracuda.unary_ops()}
# Inputs inside every op's domain and away from its kinks: (0.2, 0.8), shifted where the domain starts at 1.
SHIFT = {"acosh": 1.0}


def required_params(entry):
    return {t: 0.35 for t in entry["params"].split() if not t.startswith("...") and "=" not in t}


@pytest.mark.parametrize("name", sorted(CATALOG))
def test_gradcheck_unary(name, device):
    g = torch.Generator().manual_seed(5)
    x = (torch.rand(3, 7, generator=g, dtype=torch.float64) * 0.6 + 0.2 + SHIFT.get(name, 0.0)).requires_grad_()
    params = required_params(CATALOG[name])
    assert torch.autograd.gradcheck(lambda t: bt.unary(name, t, device=device, **params), (x,), eps=1e-6,
                                    atol=1e-7, rtol=1e-5)


@pytest.mark.parametrize("layout", ["second_half", "first_half", "interleaved"])
@pytest.mark.parametrize("kind", baracuda.gated_activation_kinds())
def test_gradcheck_gated(kind, layout, device):
    g = torch.Generator().manual_seed(9)
    x = (torch.randn(4, 10, generator=g, dtype=torch.float64) * 2).requires_grad_()
    assert torch.autograd.gradcheck(lambda t: bt.gated_activation(kind, t, layout=layout, device=device), (x,),
                                    eps=1e-6, atol=1e-7, rtol=1e-5)


def test_a_swiglu_mlp_trains(device):
    torch.manual_seed(0)
    w_in = torch.nn.Linear(16, 2 * 32, dtype=torch.float64)
    w_out = torch.nn.Linear(32, 16, dtype=torch.float64)
    opt = torch.optim.SGD(list(w_in.parameters()) + list(w_out.parameters()), lr=0.05)
    x, target = torch.randn(64, 16, dtype=torch.float64), torch.randn(64, 16, dtype=torch.float64)

    def loss(act):
        return torch.nn.functional.mse_loss(w_out(act(w_in(x))), target)

    reference = loss(lambda h: torch.nn.functional.silu(h[:, :32]) * h[:, 32:])  # first_half: the gate first
    mine = loss(lambda h: bt.swiglu(h, layout="first_half", device=device))
    torch.testing.assert_close(mine, reference)
    before = mine.item()
    for _ in range(5):
        opt.zero_grad()
        step = loss(lambda h: bt.swiglu(h, layout="first_half", device=device))
        step.backward()
        opt.step()
    assert loss(lambda h: bt.swiglu(h, layout="first_half", device=device)).item() < before


# Inputs away from each op's kinks and discontinuities: a in (0.2, 0.8) broadcast against b in (1.2, 1.8).
@pytest.mark.parametrize("op", baracuda.binary_ops())
def test_gradcheck_binary(op, device):
    g = torch.Generator().manual_seed(13)
    a = (torch.rand(3, 1, 4, generator=g, dtype=torch.float64) * 0.6 + 0.2).requires_grad_()
    b = (torch.rand(5, 1, generator=g, dtype=torch.float64) * 0.6 + 1.2).requires_grad_()
    fn = getattr(bt, op)
    assert torch.autograd.gradcheck(lambda x, y: fn(x, y, device=device), (a, b), eps=1e-6, atol=1e-7, rtol=1e-5)


@pytest.mark.parametrize("op", baracuda.ternary_ops())
def test_gradcheck_ternary(op, device):
    g = torch.Generator().manual_seed(17)
    a = (torch.rand(2, 6, generator=g, dtype=torch.float64) * 0.6 + 0.2).requires_grad_()
    b = torch.full((1, 6), 0.1, dtype=torch.float64).requires_grad_()  # clamp: below every a
    c = (torch.rand(2, 1, generator=g, dtype=torch.float64) * 0.4 + 1.1).requires_grad_()  # above every a
    fn = getattr(bt, op)
    assert torch.autograd.gradcheck(lambda x, y, z: fn(x, y, z, device=device), (a, b, c), eps=1e-6, atol=1e-7,
                                    rtol=1e-5)


def test_gradcheck_where(device):
    g = torch.Generator().manual_seed(19)
    cond = torch.rand(3, 4, generator=g) > 0.5
    a = torch.randn(3, 4, generator=g, dtype=torch.float64).requires_grad_()
    b = torch.randn(1, 4, generator=g, dtype=torch.float64).requires_grad_()
    assert torch.autograd.gradcheck(lambda x, y: bt.where(cond, x, y, device=device), (a, b))
