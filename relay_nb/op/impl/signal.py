"""numpy implementations of dft and stft (:mod:`relay_nb.op.signal`)."""

from __future__ import annotations

import numpy as np

from ._util import impl


@impl("dft")
def _dft(args, attrs, out):
    re, im = args
    z = re.astype(np.float64) + 1j * im.astype(np.float64)
    f = np.fft.ifft(z, axis=-1) if attrs["inverse"] else np.fft.fft(z, axis=-1)
    return f.real, f.imag


@impl("stft")
def _stft(args, attrs, out):
    """TVM's kernel: frames of win_length samples, basis over win_length (see the op doc)."""
    data, window = args
    n_fft, hop, win = attrs["n_fft"], attrs["hop_length"], attrs["win_length"]
    x = data.astype(np.float64).reshape(-1, data.shape[-1])
    frames = (x.shape[1] - n_fft) // hop + 1
    rows = n_fft // 2 + 1 if attrs["onesided"] else n_fft
    starts = np.arange(frames) * hop
    segments = x[:, starts[:, None] + np.arange(win)] * window.astype(np.float64)  # (B, F, W)
    basis = np.exp(-2j * np.pi * np.outer(np.arange(rows), np.arange(win)) / win)  # (R, W)
    spec = np.einsum("rw,bfw->brf", basis, segments)
    if attrs["normalized"]:
        spec = spec / np.sqrt(n_fft)
    result = np.stack([spec.real, spec.imag], axis=-1)
    return result.reshape(data.shape[:-1] + result.shape[1:])
