"""Passes over Relay modules (TVM's ``relay.transform``)."""

from .infer_type import InferType  # noqa: F401
