"""Importers that bring models from other frameworks into Relay, as ``tvm.relay.frontend``.

>>> mod, params = relay.frontend.from_onnx("model.onnx")
>>> mod, params = relay.frontend.from_pytorch(model.eval(), (torch.randn(1, 3, 224, 224),))
"""

from __future__ import annotations

from typing import Any


def from_onnx(*args: Any, **kwargs: Any) -> Any:
    from .onnx import from_onnx as _from_onnx

    return _from_onnx(*args, **kwargs)


from_onnx.__doc__ = "See :func:`relay_nb.frontend.onnx.from_onnx` (imports onnx on first use)."


def from_pytorch(*args: Any, **kwargs: Any) -> Any:
    from .pytorch import from_pytorch as _from_pytorch

    return _from_pytorch(*args, **kwargs)


from_pytorch.__doc__ = "See :func:`relay_nb.frontend.pytorch.from_pytorch` (imports torch on first use)."


def from_exported_program(*args: Any, **kwargs: Any) -> Any:
    from .pytorch import from_exported_program as _from_ep

    return _from_ep(*args, **kwargs)


from_exported_program.__doc__ = (
    "See :func:`relay_nb.frontend.pytorch.from_exported_program` (imports torch on first use)."
)

from .common import FrontendError, node_name  # noqa: E402
from .pytorch import module_path  # noqa: E402  (imports no torch)

__all__ = ["from_onnx", "from_pytorch", "from_exported_program", "node_name", "module_path", "FrontendError"]
