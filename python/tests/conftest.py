"""Shared fixtures of the Python tests: the devices a CPU array runs on, and references."""

import pytest

DEVICES = ["host", "sim"]


@pytest.fixture(params=DEVICES)
def device(request):
    """'host' (the C++ reference) and 'sim' (the CUDA kernels on the emulator)."""
    return request.param
