"""Arrays of each framework cross without a copy (baracuda reads the framework's own buffer) and outputs come
back in the caller's framework."""

import numpy as np
import pytest

import baracuda
from baracuda import ops


def test_numpy_buffer_is_read_in_place():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    assert baracuda.data_pointer(a) == a.__array_interface__["data"][0]
    view = a[1:]  # a view: its own first element
    assert baracuda.data_pointer(view) == a.__array_interface__["data"][0] + 4 * 4


def test_torch_buffer_is_read_in_place():
    torch = pytest.importorskip("torch")
    t = torch.arange(10, dtype=torch.float32)
    assert baracuda.data_pointer(t) == t.data_ptr()
    assert baracuda.data_pointer(t[3:]) == t.data_ptr() + 3 * 4


def test_jax_in_jax_out(device):
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp

    x = jnp.linspace(-2, 2, 16, dtype=jnp.float32)
    assert baracuda.data_pointer(x) == x.unsafe_buffer_pointer()
    y = ops.silu(x, device=device)
    assert isinstance(y, jax.Array) and y.dtype == jnp.float32
    np.testing.assert_allclose(np.asarray(y), np.asarray(jax.nn.silu(x)), rtol=2e-6, atol=1e-7)
    q, scale, _ = ops.dynamic_range_quantize(x.reshape(2, 8), device=device)
    assert isinstance(q, jax.Array) and q.dtype == jnp.int8 and scale.shape == (2,)


class _JaxArrayOnAGpu:
    """What the functions see of a jax array on a GPU: its module, shape, dtype and DLPack device."""

    __module__ = "jaxlib.xla_extension"
    shape = (4,)
    dtype = np.dtype(np.float32)

    def __dlpack__(self, stream=None):
        raise AssertionError("the functions must reject the array before reading it")

    def __dlpack_device__(self):
        return (2, 0)  # kDLCUDA, device 0


def test_cuda_arrays_of_frameworks_without_cuda_outputs_are_rejected():
    with pytest.raises(baracuda.InvalidProblem, match="a jax array on a GPU is not supported"):
        ops.silu(_JaxArrayOnAGpu())
