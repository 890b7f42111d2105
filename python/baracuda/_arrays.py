"""The caller's arrays: their framework, element kind, device and stream, how _core takes them, and new
arrays of the same framework (outputs are returned in the caller's framework, written in place)."""

import numpy as np

from . import _core

# DLPack device types.
_CPU, _CUDA, _CUDA_HOST, _CUDA_MANAGED = 1, 2, 3, 13

_NUMPY_KINDS = {
    np.dtype(np.float16): "f16",
    np.dtype(np.float32): "f32",
    np.dtype(np.float64): "f64",
    np.dtype(np.int8): "s8",
    np.dtype(np.uint8): "u8",
    np.dtype(np.int32): "s32",
    np.dtype(np.int64): "s64",
    np.dtype(np.uint32): "u32",
    np.dtype(np.bool_): "bool",
}
# The kinds numpy holds only through ml_dtypes, and the integer dtype of their width (DLPack export).
_ML_DTYPES = {"bf16": ("bfloat16", np.uint16), "fp8e4m3": ("float8_e4m3fn", np.uint8),
              "fp8e5m2": ("float8_e5m2", np.uint8)}
try:
    import ml_dtypes

    for _kind, (_name, _) in _ML_DTYPES.items():
        _NUMPY_KINDS[np.dtype(getattr(ml_dtypes, _name))] = _kind
except ImportError:  # bf16 and fp8 numpy arrays then do not exist
    ml_dtypes = None

_NUMPY_DTYPES = {kind: dtype for dtype, kind in _NUMPY_KINDS.items()}


def unwrap(a):
    """The array of a baracuda.Tensor, or `a`."""
    return a.array if isinstance(a, _core.Tensor) else a


def shape_of(a):
    """The logical shape: a packed 4-bit baracuda.Tensor holds two values per byte along its last dim."""
    shape = tuple(int(d) for d in unwrap(a).shape)
    if isinstance(a, _core.Tensor) and a.kind in ("s4", "u4"):
        shape = shape[:-1] + (2 * shape[-1],)
    return shape


def framework(a):
    """'torch', 'numpy', 'cupy', 'jax' or 'dlpack' (any other object with __dlpack__)."""
    a = unwrap(a)
    root = type(a).__module__.split(".")[0]
    if root in ("torch", "numpy", "cupy"):
        return root
    if root in ("jax", "jaxlib"):
        return "jax"
    if hasattr(a, "__dlpack__"):
        return "dlpack"
    raise TypeError(f"expected an array (torch, numpy, cupy, jax or any object with __dlpack__), got {type(a)!r}")


def _torch_kinds():
    import torch

    kinds = {torch.float16: "f16", torch.bfloat16: "bf16", torch.float32: "f32", torch.float64: "f64",
             torch.int8: "s8", torch.uint8: "u8", torch.int32: "s32", torch.int64: "s64", torch.bool: "bool"}
    for name, kind in (("float8_e4m3fn", "fp8e4m3"), ("float8_e5m2", "fp8e5m2"), ("uint32", "u32")):
        if hasattr(torch, name):
            kinds[getattr(torch, name)] = kind
    return kinds


def kind_of(a):
    """The element kind of array `a` ('f32', 'bf16', ...)."""
    if isinstance(a, _core.Tensor):
        return a.kind
    fw = framework(a)
    if fw == "torch":
        kind = _torch_kinds().get(a.dtype)
    else:
        kind = _NUMPY_KINDS.get(np.dtype(a.dtype))
    if kind is None:
        raise _core.InvalidProblem(f"no baracuda element kind has dtype {a.dtype}")
    return kind


def device_of(a):
    """('cpu', 0) or ('cuda', device index)."""
    a = unwrap(a)
    if framework(a) == "numpy":
        return ("cpu", 0)
    dev_type, dev_id = a.__dlpack_device__()
    if dev_type in (_CUDA, _CUDA_MANAGED):
        return ("cuda", int(dev_id))
    if dev_type in (_CPU, _CUDA_HOST):
        return ("cpu", 0)
    raise _core.InvalidProblem(f"arrays on DLPack device type {dev_type} are not supported")


def stream_for(a, device=None):
    """The stream a plan on `a` runs on: for a CUDA array its device and the framework's current stream
    (torch, cupy; else the default stream); for a CPU array `device` ('host', the default, or 'sim')."""
    where, index = device_of(a)
    if where == "cuda":
        if device not in (None, "cuda"):
            raise _core.InvalidProblem(f"a CUDA array cannot run on the {device} device")
        handle = 0
        fw = framework(a)
        if fw not in ("torch", "cupy"):  # the functions would allocate its outputs in host memory
            raise _core.InvalidProblem(f"the functions take CUDA arrays from torch and cupy; a {fw} array on a GPU "
                                       "is not supported (the plan API takes it, with outputs allocated by the "
                                       "caller)")
        if fw == "torch":
            import torch

            handle = torch.cuda.current_stream(index).cuda_stream
        elif fw == "cupy":
            import cupy

            with cupy.cuda.Device(index):
                handle = cupy.cuda.get_current_stream().ptr
        return _core.Stream.cuda(index, handle)
    if device in (None, "host"):
        return _core.Stream.host()
    if device == "sim":
        return _core.Stream.sim()
    raise _core.InvalidProblem(f"a CPU array runs on 'host' or 'sim', not {device!r}")


def as_arg(a):
    """`a` as _core takes it: the array itself, or a _core.Tensor of an integer view where DLPack has no
    portable dtype (numpy's ml_dtypes kinds, torch's fp8)."""
    if isinstance(a, _core.Tensor):
        return a
    fw = framework(a)
    if fw == "torch":
        if a.requires_grad:
            a = a.detach()
        kind = kind_of(a)
        if kind in ("fp8e4m3", "fp8e5m2", "bool"):  # PyTorch 1.13's DLPack has neither
            import torch

            return _core.Tensor(a.view(torch.uint8), kind)
        return a
    if fw == "numpy":
        kind = _NUMPY_KINDS.get(np.dtype(a.dtype))
        if kind in _ML_DTYPES:
            return _core.Tensor(a.view(_ML_DTYPES[kind][1]), kind)
    return a


def empty(ref, shape, kind):
    """A new array of `ref`'s framework and device, of `shape` and element kind `kind`. For jax, whose arrays
    are immutable, a numpy array (see finish)."""
    ref = unwrap(ref)
    fw = framework(ref)
    shape = tuple(int(d) for d in shape)
    if kind in ("s4", "u4"):  # packed: two values per byte along the last dim
        if not shape or shape[-1] % 2:
            raise _core.InvalidProblem(f"a packed {kind} tensor needs an even last extent, not shape {shape}")
        return _core.Tensor(empty(ref, shape[:-1] + (shape[-1] // 2,), "u8"), kind)
    if fw == "torch":
        import torch

        dtypes = {k: d for d, k in _torch_kinds().items()}
        if kind not in dtypes and kind in ("fp8e4m3", "fp8e5m2"):  # a torch before 2.1: the bits in uint8
            return _core.Tensor(torch.empty(shape, dtype=torch.uint8, device=ref.device), kind)
        return torch.empty(shape, dtype=dtypes[kind], device=ref.device)
    if kind not in _NUMPY_DTYPES and kind in _ML_DTYPES:  # no ml_dtypes: the bits in unsigned integers
        return _core.Tensor(_numpy_like(fw, ref, shape, _ML_DTYPES[kind][1]), kind)
    return _numpy_like(fw, ref, shape, _NUMPY_DTYPES[kind])


def output(ref, out, shape, kind, name):
    """`out` checked against the shape it must have, or a new array (`empty`)."""
    if out is None:
        return empty(ref, shape, kind)
    if shape_of(out) != tuple(shape):
        raise _core.InvalidProblem(f"{name}: shape {shape_of(out)} given where the op writes {tuple(shape)}")
    return out


def run_plan(plan, stream, ref, **tensors):
    """Runs `plan` on the tensors given (None: left out), with a workspace of `ref`'s framework and device."""
    ws = workspace(ref, plan.workspace_size) if plan.workspace_size else None
    plan.run(stream, ws, **{k: as_arg(v) for k, v in tensors.items() if v is not None})


def _numpy_like(fw, ref, shape, dtype):
    """A new numpy array, or a cupy one on `ref`'s device."""
    if fw == "cupy":
        import cupy

        with cupy.cuda.Device(device_of(ref)[1]):
            return cupy.empty(shape, dtype=dtype)
    return np.empty(shape, dtype=dtype)


def _address(a):
    a = unwrap(a)
    fw = framework(a)
    if fw == "torch":
        return a.data_ptr()
    if fw == "cupy":
        return a.data.ptr
    return a.__array_interface__["data"][0]


def workspace(ref, nbytes, alignment=256):
    """`nbytes` bytes of `ref`'s framework and device, starting at a multiple of `alignment` (the plans'
    workspace rule): a slice of a slightly larger array."""
    buf = empty(np.empty(0) if framework(ref) == "jax" else ref, (nbytes + alignment,), "u8")
    offset = -_address(buf) % alignment
    return buf[offset:offset + nbytes]


def host_numpy(a):
    """`a`'s values as a numpy array on the host (a copy where `a` is on a GPU)."""
    a = unwrap(a)
    fw = framework(a)
    if fw == "torch":
        return a.detach().cpu().numpy()
    if fw == "cupy":
        return a.get()
    return np.asarray(a)


def like(ref, values, kind):
    """`values` (a numpy array) as a new array of `ref`'s framework and device, of element kind `kind`."""
    out = empty(ref, values.shape, kind)
    fw = framework(ref)
    if fw == "torch":
        import torch

        out.copy_(torch.from_numpy(np.ascontiguousarray(values)))
    elif fw == "cupy":
        out.set(np.ascontiguousarray(values, dtype=out.dtype))
    else:
        out[...] = values
    return out


def finish(ref, out):
    """An output `empty` made, as the caller's framework wants it (jax: a jax array over the same memory
    where jax can share it)."""
    if framework(ref) == "jax" and not isinstance(out, _core.Tensor):
        import jax.dlpack

        return jax.dlpack.from_dlpack(out)
    return out
