"""Passes over Relay modules (TVM's ``relay.transform``) and the pass infrastructure."""

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
from .instrument import (  # noqa: F401
    PassInstrument,
    PassRecorder,
    PassTimingInstrument,
    PrintAfterAll,
    PrintBeforeAll,
)
