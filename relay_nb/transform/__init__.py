"""Passes over Relay modules (TVM's ``relay.transform``) and the pass infrastructure."""

from .anf import ToANormalForm, ToANormalFormExpr  # noqa: F401
from .common_subexpr import EliminateCommonSubexpr  # noqa: F401
from .dead_code import DeadCodeElimination  # noqa: F401
from .fold_constant import FoldConstant  # noqa: F401
from .fold_scale_axis import BackwardFoldScaleAxis, FoldScaleAxis, ForwardFoldScaleAxis  # noqa: F401
from .fuse_ops import FuseOps  # noqa: F401
from .gradient import gradient  # noqa: F401
from .infer_type import InferType  # noqa: F401
from .infra import (  # noqa: F401
    PASSES,
    FunctionPass,
    ModulePass,
    Pass,
    PassContext,
    PassInfo,
    Sequential,
    function_pass,
    get_pass,
    module_pass,
    register_pass,
)
from .inline import Inline  # noqa: F401
from .instrument import (  # noqa: F401
    PassInstrument,
    PassRecorder,
    PassTimingInstrument,
    PrintAfterAll,
    PrintBeforeAll,
)
from .lambda_lift import LambdaLift  # noqa: F401
from .pipeline import default_passes, optimize  # noqa: F401
from .simplify_expr import SimplifyExpr  # noqa: F401
from .simplify_inference import SimplifyInference  # noqa: F401
from .to_basic_block_normal_form import ToBasicBlockNormalForm  # noqa: F401
from .to_graph_normal_form import ToGraphNormalForm  # noqa: F401
