"""Analyses of Relay programs (TVM's ``relay.analysis``).

All of them are iterative: they work on 100,000-deep programs at Python's default
recursion limit.
"""

from ..ir.functor import post_order_visit
from ..typing.exhaustive import unmatched_cases
from .feature import Feature, FeatureSet, detect_feature, is_dataflow
from .free_vars import all_vars, bound_vars, free_vars
from .type_vars import all_type_vars, bound_type_vars, free_type_vars
from .well_formed import check_well_formed, well_formed

__all__ = [
    "Feature",
    "FeatureSet",
    "all_type_vars",
    "all_vars",
    "bound_type_vars",
    "bound_vars",
    "check_well_formed",
    "detect_feature",
    "free_type_vars",
    "free_vars",
    "is_dataflow",
    "post_order_visit",
    "unmatched_cases",
    "well_formed",
]
