"""Signal processing: dft and stft (TVM's ``DFTRel`` / ``STFTRel``), and their builders.

Complex numbers are pairs of real tensors: ``dft`` takes and returns (real, imaginary)
parts; ``stft`` returns a trailing axis of 2.  ``stft`` follows TVM's kernel: frames of
``win_length`` samples start every ``hop_length`` samples, are weighted by ``window``,
and row ``f`` of the result is the frame's Fourier coefficient at ``f / win_length``
cycles per sample (``normalized`` divides by ``sqrt(n_fft)``).
"""

from __future__ import annotations

import numpy as np

from ..errors import RelayTypeError
from ..ir.expr import Call, TupleWrapper
from ..ir.ty import Any, TensorType, TupleType
from ..typing.relations import forward_relation, shape_text
from ._common import call, is_static, register, same_dim, schema, tensor, to_expr

__all__ = ["dft", "stft"]


@forward_relation("DFT")
def dft_rel(inputs, attrs, reporter):
    re = tensor(inputs[0], "re_data")
    im = tensor(inputs[1], "im_data")
    dtype = reporter.unify_dtype(re.dtype, im.dtype)
    if len(re.shape) != len(im.shape) or not all(same_dim(a, b) for a, b in zip(re.shape, im.shape)):
        raise RelayTypeError(
            f"re_data {shape_text(re.shape)} and im_data {shape_text(im.shape)} must have one shape"
        )
    if not re.shape:
        raise RelayTypeError("the data must have rank at least 1 (the transform runs on the last axis)")
    out = TensorType(re.shape, dtype)
    return TupleType((out, out))


@forward_relation("STFT")
def stft_rel(inputs, attrs, reporter):
    """(batch?, n_fft // 2 + 1 (or n_fft), frames, 2)."""
    data = tensor(inputs[0], "data")
    window = tensor(inputs[1], "window")
    reporter.unify_dtype(data.dtype, window.dtype)
    n_fft, hop, win = attrs["n_fft"], attrs["hop_length"], attrs["win_length"]
    if len(data.shape) not in (1, 2):
        raise RelayTypeError(f"data must be 1-D or a 2-D batch, found {shape_text(data.shape)}")
    if n_fft < 1 or hop < 1 or win < 1:
        raise RelayTypeError(
            f"n_fft, hop_length and win_length must be positive, got {n_fft}, {hop}, {win}"
        )
    if win > n_fft:
        raise RelayTypeError(f"win_length {win} must not exceed n_fft {n_fft}")
    if window.shape != (win,) and not (len(window.shape) == 1 and not is_static(window.shape[0])):
        raise RelayTypeError(f"window must have shape ({win},), found {shape_text(window.shape)}")
    length = data.shape[-1]
    if is_static(length) and length < n_fft:
        raise RelayTypeError(f"the signal ({length} samples) is shorter than n_fft {n_fft}")
    frames = (length - n_fft) // hop + 1 if is_static(length) else Any
    rows = n_fft // 2 + 1 if attrs["onesided"] else n_fft
    return TensorType(data.shape[:-1] + (rows, frames, 2), data.dtype)


register(
    "dft",
    2,
    dft_rel,
    attrs=schema("relay.attrs.DFTAttrs", ("inverse", "bool", False)),
    arg_names=("re_data", "im_data"),
    doc="The discrete Fourier transform along the last axis, on (real, imaginary) parts; "
    "``inverse`` transforms back (divided by the length).",
)
register(
    "stft",
    2,
    stft_rel,
    attrs=schema(
        "relay.attrs.StftAttrs",
        ("n_fft", "int", -1),
        ("hop_length", "int", -1),
        ("win_length", "int", -1),
        ("normalized", "bool", False),
        ("onesided", "bool", True),
    ),
    arg_names=("data", "window"),
    doc="The short-time Fourier transform: Fourier coefficients of windowed frames, as "
    "(frequency, frame, [real, imaginary]).",
)


def dft(re_data, im_data, inverse=False) -> TupleWrapper:
    """``relay.dft(re, im)``: the (real, imaginary) parts of the transform along the last axis."""
    return TupleWrapper(call("dft", re_data, im_data, inverse=bool(inverse)), 2)


def stft(data, n_fft, hop_length=None, win_length=None, window=None, normalized=False, onesided=True) -> Call:
    """TVM's defaults: ``hop_length = n_fft // 4``, ``win_length = n_fft``, a window of ones."""
    hop_length = n_fft // 4 if hop_length is None else hop_length
    win_length = n_fft if win_length is None else win_length
    if window is None:
        window = to_expr(np.ones(win_length, "float32"))
    return call(
        "stft", data, window, n_fft=n_fft, hop_length=hop_length, win_length=win_length,
        normalized=normalized, onesided=onesided,
    )  # fmt: skip
