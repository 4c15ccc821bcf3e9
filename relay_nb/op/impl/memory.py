"""The interpreter's meaning of the memory and VM ops (:mod:`..memory`, :mod:`..vm`).

A storage is a numpy byte buffer; ``alloc_tensor`` returns a *view* into it, so tensors at
overlapping offsets share memory and ``vm.invoke_tvm_op`` writes its results in place, as
TVM's VM does.  Registered directly in the ``impl`` column (storages are not tensors).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ...errors import EvalError
from ..memory import const_shape_of
from ..registry import register_column


@dataclass(eq=False)
class Storage:
    """A block of ``size`` bytes whose start is aligned to ``alignment`` bytes."""

    buffer: np.ndarray  # uint8, exactly ``size`` bytes
    alignment: int
    dtype_hint: str

    @property
    def size(self) -> int:
        return self.buffer.size

    def __repr__(self) -> str:
        return f"<storage {self.size} bytes, aligned to {self.alignment}>"


# Above this a request is refused, not attempted: an int64 size read from a program can ask
# for anything, and a notebook must get an error, not a dead kernel.
MAX_STORAGE_BYTES = 1 << 40


def _int(value: Any, what: str) -> int:
    arr = np.asarray(value)
    if arr.ndim != 0 or arr.dtype.kind not in "iu":
        raise EvalError(f"{what} must be an integer scalar, got {value!r}")
    return int(arr)


def _alloc_storage(args: list, attrs: Any = None, out_type: Any = None) -> Storage:
    size = _int(args[0], "memory.alloc_storage: size")
    alignment = _int(args[2], "memory.alloc_storage: alignment")
    if size < 0 or size > MAX_STORAGE_BYTES:
        raise EvalError(f"memory.alloc_storage: cannot allocate {size} bytes")
    if alignment < 1 or alignment & (alignment - 1):
        raise EvalError(f"memory.alloc_storage: alignment {alignment} is not a power of two")
    try:
        raw = np.zeros(size + alignment, np.uint8)
    except MemoryError:
        raise EvalError(f"memory.alloc_storage: out of memory for {size} bytes") from None
    start = (-raw.ctypes.data) % alignment
    dtype = attrs["dtype"] if attrs is not None else "float32"
    return Storage(raw[start : start + size], alignment, dtype)


def _alloc_tensor(args: list, attrs: Any = None, out_type: Any = None) -> np.ndarray:
    storage, offset, shape_arg = args
    if not isinstance(storage, Storage):
        raise EvalError(f"memory.alloc_tensor: expected a storage, got {storage!r}")
    offset = _int(offset, "memory.alloc_tensor: offset")
    shape = tuple(int(d) for d in np.asarray(shape_arg).reshape(-1))
    static = const_shape_of(attrs) if attrs is not None else None
    if static is not None and len(static) == len(shape) and any(
        s != d for s, d in zip(static, shape)
    ):
        raise EvalError(
            f"memory.alloc_tensor: the shape tensor holds {list(shape)} but the static shape "
            f"is {list(static)}"
        )
    dtype = np.dtype(attrs["dtype"] if attrs is not None else "float32")
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if offset < 0 or offset + nbytes > storage.size:
        raise EvalError(
            f"memory.alloc_tensor: {nbytes} bytes at offset {offset} do not fit in a storage "
            f"of {storage.size} bytes"
        )
    if offset % dtype.itemsize:
        raise EvalError(
            f"memory.alloc_tensor: offset {offset} is not a multiple of {dtype}'s size "
            f"({dtype.itemsize} bytes)"
        )
    return storage.buffer[offset : offset + nbytes].view(dtype).reshape(shape)


def _kill(args: list, attrs: Any = None, out_type: Any = None) -> tuple:
    return ()


def _shape_of(args: list, attrs: Any = None, out_type: Any = None) -> np.ndarray:
    dtype = attrs["dtype"] if attrs is not None else "int32"
    return np.array(np.shape(args[0]), dtype=dtype)


def _invoke_tvm_op(args: list, attrs: Any = None, out_type: Any = None) -> tuple:
    func, ins, outs = args
    if not callable(func):
        raise EvalError(f"vm.invoke_tvm_op: the op to invoke is not a function: {func!r}")
    result = func(*ins)
    results = result if isinstance(result, tuple) else (result,)
    if len(results) != len(outs):
        raise EvalError(
            f"vm.invoke_tvm_op: the op returned {len(results)} values for {len(outs)} outputs"
        )
    for i, (value, out) in enumerate(zip(results, outs)):
        value = np.asarray(value)
        if not isinstance(out, np.ndarray) or out.shape != value.shape:
            raise EvalError(
                f"vm.invoke_tvm_op: output {i} has shape {np.shape(out)}, the op's result "
                f"{value.shape}"
            )
        if not out.flags.writeable:
            raise EvalError(f"vm.invoke_tvm_op: output {i} is not a writable tensor")
        np.copyto(out, value, casting="unsafe")
    return ()


def _reshape_tensor(args: list, attrs: Any = None, out_type: Any = None) -> np.ndarray:
    data, shape_arg = args
    shape = tuple(int(d) for d in np.asarray(shape_arg).reshape(-1))
    data = np.asarray(data)
    if int(np.prod(shape, dtype=np.int64)) != data.size or any(d < 0 for d in shape):
        raise EvalError(
            f"vm.reshape_tensor: cannot reshape {data.size} elements of shape {data.shape} "
            f"to {list(shape)}"
        )
    return data.reshape(shape).copy()


for _name, _fn in {
    "memory.alloc_storage": _alloc_storage,
    "memory.alloc_tensor": _alloc_tensor,
    "memory.kill": _kill,
    "vm.shape_of": _shape_of,
    "vm.invoke_tvm_op": _invoke_tvm_op,
    "vm.reshape_tensor": _reshape_tensor,
}.items():
    register_column("impl", _name, _fn)
