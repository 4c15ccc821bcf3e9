"""Operators: the column-based registry and one module per op family.

Importing this package registers every built-in operator (the family modules register
theirs when imported).  ``relay.op.add`` and the other top-level builders are here too,
as in TVM; ``relay.op.nn`` and ``relay.op.image`` hold the namespaced ones.
"""

from .registry import (  # noqa: F401
    AttrField,
    AttrSchema,
    OpPattern,
    get_column,
    get_op,
    has_op,
    list_ops,
    make_attrs,
    register_column,
    register_op,
    type_rule,
)

get = get_op  # relay.op.get("add"), as in TVM

# The op families: importing them fills the registry (``impl``: their numpy implementations).
from . import image, impl, nn, reduce, tensor, transform  # noqa: F401
from . import annotation, dyn, memory, vm  # noqa: F401,E402  (devices, memory, VM, dyn: issue 12)
from . import qnn  # noqa: F401,E402
from . import vision  # noqa: F401,E402
from . import random  # noqa: F401,E402
from . import image_extra, nn_bitserial, nn_contrib, nn_extra  # noqa: F401  (nn, image)
from . import nn_sparse, nn_special, nn_train  # noqa: F401  (nn)
from . import indexing, misc, scan, signal, sorting  # noqa: F401,E402  (tensor ops of issue 12)
from .api import *  # noqa: E402,F401,F403
from .grad import get_grad_rule, grad_rule  # noqa: E402,F401  (the gradient column)
from . import grad_nn_train  # noqa: E402,F401  (gradients of nn_train's losses)
from . import grad_tensor  # noqa: E402,F401  (gradients of the tensor ops of issue 12)
