"""The unary family from Python against PyTorch's own ops, forward and backward, on host and sim."""

import numpy as np
import pytest

import baracuda
from baracuda import ops

torch = pytest.importorskip("torch")
F = torch.nn.functional

CATALOG = {op["name"]: op for op in baracuda.unary_ops()}


# Catalog names that PyTorch spells otherwise.
TORCH_ALIASES = {"gelu_tanh": lambda x: F.gelu(x, approximate="tanh")}
# Ops PyTorch 1.13 does not have: NumPy's.
NUMPY_REFS = {"cbrt": np.cbrt}


def torch_op(name):
    if name in TORCH_ALIASES:
        return TORCH_ALIASES[name]
    for module in (torch, F, torch.special):
        if hasattr(module, name):
            return getattr(module, name)
    return None


def example_params(entry):
    """Keyword arguments that exercise the op: its required parameters get 0.5; defaults stay PyTorch's."""
    params = {}
    for token in entry["params"].split():
        if token.startswith("...") or "=" in token:
            continue
        params[token] = 0.5
    return params


def inputs(dtype):
    g = torch.Generator().manual_seed(7)
    x = (torch.rand(3, 257, generator=g, dtype=torch.float64) * 6 - 3).to(dtype)
    x[0, :4] = torch.tensor([0.0, -0.0, 1.0, -1.0], dtype=dtype)
    return x


TOL = {torch.float32: dict(rtol=2e-5, atol=1e-6), torch.float64: dict(rtol=1e-12, atol=1e-13)}
# PyTorch 1.13's hardsigmoid backward multiplies by a float 1/6 in every dtype (a relative error of 3e-8 in
# f64); baracuda's is exact.
BACKWARD_TOL = {"hardsigmoid": dict(rtol=5e-8, atol=1e-13)}
WITH_TORCH = [name for name in CATALOG if torch_op(name) is not None]


def test_every_op_has_a_torch_reference_or_is_listed():
    # Ops PyTorch 1.13 lacks under the catalog's name are checked against NumPy in test_numpy_references.
    assert set(CATALOG) - set(WITH_TORCH) <= set(NUMPY_REFS), sorted(set(CATALOG) - set(WITH_TORCH) - set(NUMPY_REFS))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("name", WITH_TORCH)
def test_forward_matches_torch(name, dtype, device):
    params = example_params(CATALOG[name])
    x = inputs(dtype)
    expected = torch_op(name)(x, **params)
    y = getattr(ops, name)(x, device=device, **params)
    assert isinstance(y, torch.Tensor) and y.dtype == dtype and y.shape == x.shape
    torch.testing.assert_close(y, expected, equal_nan=True, **TOL[dtype])


@pytest.mark.parametrize("name", WITH_TORCH)
def test_backward_matches_autograd(name, device):
    entry = CATALOG[name]
    params = example_params(entry)
    x = inputs(torch.float64).requires_grad_()
    y = torch_op(name)(x, **params)
    dy = torch.linspace(-1, 1, x.numel(), dtype=torch.float64).reshape(x.shape)
    if not y.requires_grad:
        pytest.skip(f"torch gives {name} no gradient")
    (expected,) = torch.autograd.grad(y, x, dy)
    saved = {"input": x.detach(), "output": y.detach(), "none": None}[entry["saved"]]
    dx = ops.unary_backward(name, dy, saved, device=device, **params)
    if name == "logit":
        # At x = -0 PyTorch 1.13 disagrees with itself: its scalar path gives dy·inf (as baracuda), its
        # vectorised path dy/(x(1-x)) = -dy·inf. Compared everywhere else.
        keep = ~((x.detach() == 0) & torch.signbit(x.detach()))
        dx, expected = dx[keep], expected[keep]
    torch.testing.assert_close(dx, expected, equal_nan=True, **BACKWARD_TOL.get(name, TOL[torch.float64]))


@pytest.mark.parametrize("name", sorted(NUMPY_REFS))
def test_numpy_references(name, device):
    x = inputs(torch.float64).numpy()
    np.testing.assert_allclose(getattr(ops, name)(x, device=device), NUMPY_REFS[name](x), rtol=1e-12)


def test_numpy_in_numpy_out(device):
    x = np.linspace(-2, 2, 50, dtype=np.float32).reshape(5, 10)
    y = ops.relu(x, device=device)
    assert type(y) is np.ndarray and y.dtype == np.float32
    np.testing.assert_array_equal(y, np.maximum(x, 0))


def test_parameters_take_pytorchs_names(device):
    x = inputs(torch.float32)
    torch.testing.assert_close(ops.leaky_relu(x, negative_slope=0.2, device=device), F.leaky_relu(x, 0.2))
    with pytest.raises(baracuda.InvalidProblem, match="alpha"):
        ops.leaky_relu(x, alpha=0.2, device=device)  # not a parameter of leaky_relu


def test_strided_and_broadcast_inputs(device):
    x = inputs(torch.float32)
    t = x.t()  # not contiguous
    torch.testing.assert_close(ops.exp(t, device=device), torch.exp(t))
    b = x[:1].expand(4, -1)  # stride 0
    torch.testing.assert_close(ops.tanh(b, device=device), torch.tanh(b))
