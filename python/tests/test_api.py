"""The plan API, arrays without copies, errors with the C++ message, lifetimes and the plan cache."""

import gc

import numpy as np
import pytest

import baracuda
from baracuda import ops

torch = pytest.importorskip("torch")


def stream_of(device):
    return baracuda.Stream.sim() if device == "sim" else baracuda.Stream.host()


def test_plan_api_select_once_run_many(device):
    stream = stream_of(device)
    desc = baracuda.UnaryDescriptor("silu", "f32", (4, 8))
    plan = baracuda.UnaryPlan.select(stream, desc)
    assert plan.workspace_size == 0
    assert "silu" in plan.sku and ("sim" in plan.sku) == (device == "sim")
    assert plan.descriptor.shape == (4, 8) and plan.descriptor.kind == "silu"
    for seed in range(3):
        x = torch.randn(4, 8, generator=torch.Generator().manual_seed(seed))
        y = torch.empty_like(x)
        plan.can_implement(stream, input=x, out=y)
        plan.run(stream, input=x, out=y)
        torch.testing.assert_close(y, torch.nn.functional.silu(x))


def test_arrays_cross_without_a_copy(device):
    x = torch.linspace(-1, 1, 64)
    before = x.data_ptr()
    assert ops.relu(x, out=x, device=device) is x  # in place: the plan wrote the caller's memory
    assert x.data_ptr() == before and bool((x >= 0).all())
    y = torch.empty(64)
    assert ops.exp(torch.zeros(64), out=y, device=device) is y and bool((y == 1).all())
    a = np.arange(6, dtype=np.float64) - 3
    out = np.empty_like(a)
    assert ops.abs(a, out=out, device=device) is out
    np.testing.assert_array_equal(out, np.abs(a))


def test_errors_are_typed_and_keep_the_cpp_message(device):
    stream = stream_of(device)
    plan = baracuda.UnaryPlan.select(stream, baracuda.UnaryDescriptor("relu", "f32", (8,)))
    x64 = np.zeros(8, dtype=np.float64)
    with pytest.raises(baracuda.InvalidProblem) as e:
        plan.run(stream, input=x64, out=np.zeros(8, dtype=np.float32))
    assert isinstance(e.value, ValueError) and isinstance(e.value, baracuda.Error)
    assert "f64" in str(e.value) and "f32" in str(e.value)
    with pytest.raises(baracuda.InvalidProblem, match="shape"):
        plan.run(stream, input=np.zeros(7, dtype=np.float32), out=np.zeros(7, dtype=np.float32))
    with pytest.raises(ValueError, match="unknown unary op 'rleu'"):
        baracuda.UnaryDescriptor("rleu", "f32", (8,))
    with pytest.raises(TypeError, match="this plan takes: input, out"):
        plan.run(stream, x=np.zeros(8, dtype=np.float32))
    with pytest.raises(TypeError, match="expected an array"):
        plan.run(stream, input=[0.0] * 8, out=np.zeros(8, dtype=np.float32))
    frozen = np.zeros(8, dtype=np.float32)
    frozen.flags.writeable = False
    with pytest.raises(baracuda.InvalidProblem, match="read-only"):
        plan.run(stream, input=np.zeros(8, dtype=np.float32), out=frozen)
    with pytest.raises(baracuda.InvalidProblem, match=r"shape \(3,\) given"):
        ops.relu(np.zeros(4, dtype=np.float32), out=np.zeros(3, dtype=np.float32), device=device)
    with pytest.raises(baracuda.InvalidProblem, match="'host' or 'sim'"):
        ops.relu(np.zeros(4, dtype=np.float32), device="cuda")
    with pytest.raises(baracuda.Unsupported):
        ops.exp(np.zeros(4, dtype=np.int32), device=device)  # the float-only ops have no int32 kernels


def test_outputs_outlive_plans_and_inputs(device):
    ops.clear_plan_cache()
    y = ops.sigmoid(torch.zeros(1000), device=device)
    ops.clear_plan_cache()
    gc.collect()
    assert bool((y == 0.5).all())


def test_no_leak_over_many_calls(device):
    x = np.ones(16, dtype=np.float32)

    def rss_pages():
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1])

    for _ in range(200):
        ops.relu(x, device=device)
    before = rss_pages()
    for _ in range(10_000):
        ops.relu(x, device=device)
    gc.collect()
    assert rss_pages() - before < 1024, "more than 4 MiB kept over 10^4 calls"


def test_plan_cache_is_bounded():
    ops.clear_plan_cache()
    ops.set_plan_cache_size(3)
    try:
        for n in range(1, 8):
            ops.relu(np.zeros(n, dtype=np.float32))
        info = ops.plan_cache_info()
        assert info["size"] == 3 and info["misses"] == 7
        ops.relu(np.zeros(7, dtype=np.float32))
        assert ops.plan_cache_info()["hits"] == 1
    finally:
        ops.set_plan_cache_size(256)


def test_explicit_element_kinds_through_integer_views(device):
    # bf16 held in a uint16 array: the Tensor wrapper names the kind DLPack cannot.
    x = torch.randn(32).to(torch.bfloat16)
    bits = x.view(torch.int16).numpy().view(np.uint16)
    out = np.empty(32, dtype=np.float32)
    stream = stream_of(device)
    plan = baracuda.CastPlan.select(stream, baracuda.CastDescriptor("bf16", "f32", (32,)))
    plan.run(stream, input=baracuda.Tensor(bits, "bf16"), out=out)
    np.testing.assert_array_equal(out, x.float().numpy())
    with pytest.raises(baracuda.InvalidProblem, match="16-bit"):
        plan.run(stream, input=baracuda.Tensor(np.zeros(32, dtype=np.uint8), "bf16"), out=out)


def test_run_releases_the_gil():
    """Python code runs on another thread while a plan runs (a sim launch long enough to see it)."""
    import threading
    import time

    stream = baracuda.Stream.sim()
    n = 1 << 25  # one launch of a tenth of a second or more
    plan = baracuda.UnaryPlan.select(stream, baracuda.UnaryDescriptor("exp", "f32", (n,)))
    x, y = np.zeros(n, dtype=np.float32), np.empty(n, dtype=np.float32)
    window = {}

    def worker():
        window["start"] = time.perf_counter()
        plan.run(stream, input=x, out=y)
        window["end"] = time.perf_counter()

    ticks = []
    t = threading.Thread(target=worker)
    t.start()
    while t.is_alive():
        ticks.append(time.perf_counter())
    t.join()
    start, end = window["start"], window["end"]
    assert end - start > 0.03, "the launch is too short to tell"
    # This thread ticks whenever it holds the GIL. Had the run held it, the ticks inside the run's window would
    # leave one gap of nearly the whole window (a thread switch can come between the start stamp and the run).
    inside = [start] + [s for s in ticks if start < s < end] + [end]
    gap = max(b - a for a, b in zip(inside, inside[1:]))
    assert gap < 0.5 * (end - start), f"a {gap * 1e3:.1f} ms gap in a {(end - start) * 1e3:.1f} ms run"
    assert bool((y == 1).all())


def test_every_array_rejection():
    """The conversions' own errors (the plans' are tested with each family)."""
    s4 = np.zeros((4, 8), dtype=np.uint8)
    with pytest.raises(baracuda.InvalidProblem, match="must be contiguous"):
        baracuda.data_pointer(baracuda.Tensor(s4[:, ::2], "s4"))
    with pytest.raises(baracuda.InvalidProblem, match="rank >= 1"):
        baracuda.data_pointer(baracuda.Tensor(np.zeros((), dtype=np.uint8), "u4"))
    with pytest.raises(baracuda.InvalidProblem, match="array of bytes"):
        baracuda.data_pointer(baracuda.Tensor(np.zeros(4, dtype=np.uint16), "s4"))
    with pytest.raises(baracuda.InvalidProblem, match="no element kind has the array's dtype"):
        baracuda.data_pointer(np.zeros(4, dtype=np.complex64))
    with pytest.raises(baracuda.InvalidProblem, match="no baracuda element kind has dtype"):
        ops.relu(np.zeros(4, dtype=np.complex64))
    with pytest.raises(ValueError, match="unknown element kind 'f17'"):
        baracuda.Tensor(np.zeros(4, dtype=np.float32), "f17")
    stream = baracuda.Stream.host()
    plan = baracuda.UnaryPlan.select(stream, baracuda.UnaryDescriptor("relu", "f32", (4,)))
    x = np.zeros(4, dtype=np.float32)
    with pytest.raises(TypeError, match="workspace: expected None or a writable array"):
        plan.run(stream, [0] * 8, input=x, out=np.zeros(4, dtype=np.float32))
    with pytest.raises(TypeError, match="needs x or dy"):
        ops.quantize_op("dequantize_backward", scale=np.ones(1, dtype=np.float32))
    with pytest.raises(ValueError, match=r"w must be a \[K, N\]"):
        baracuda.quantize_int4(np.zeros(64, dtype=np.float32))
    with pytest.raises(ValueError, match=r"qweight must be \[K/8, N\]"):
        baracuda.gptq_unpack(np.zeros(8, dtype=np.int32), np.zeros(1, dtype=np.int32),
                             np.zeros(1, dtype=np.float16))
    with pytest.raises(ValueError, match=r"qweight must be \[K, N/8\]"):
        baracuda.awq_unpack(np.zeros(8, dtype=np.int32), np.zeros(1, dtype=np.int32), np.zeros(1, dtype=np.float16))
