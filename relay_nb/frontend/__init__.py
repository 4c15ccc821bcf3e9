"""Importers that bring models from other frameworks into Relay, as ``tvm.relay.frontend``.

>>> mod, params = relay.frontend.from_onnx("model.onnx")
"""

from __future__ import annotations

from typing import Any


def from_onnx(*args: Any, **kwargs: Any) -> Any:
    from .onnx import from_onnx as _from_onnx

    return _from_onnx(*args, **kwargs)


from_onnx.__doc__ = "See :func:`relay_nb.frontend.onnx.from_onnx` (imports onnx on first use)."

from .common import FrontendError, node_name  # noqa: E402

__all__ = ["from_onnx", "node_name", "FrontendError"]
