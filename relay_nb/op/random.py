"""Random-number operators (``random.*``) and their builders; this module is ``relay.random``.

Relay's random numbers are functional: a *key* (a ``Tensor[(10), uint64]``, TVM's Threefry
generator state: 4 key words, a 128-bit path, a counter, and the path's next free bit) goes
in, and every op returns a new key with its values, so a program is deterministic given its
key.  ``threefry_key(seed)`` makes one; ``threefry_split`` gives two independent keys.  The
implementation (:mod:`relay_nb.op.impl.random`) is TVM's Threefry-4x64 as ``topi.random``
runs it.
"""

from __future__ import annotations

import sys

import numpy as np

from ..errors import RelayTypeError
from ..ir.expr import Expr, const
from ..ir.ty import TensorType, TupleType
from ..typing.relations import is_known
from ._common import call, is_static, register, relation, schema, tensor, type_text
from .registry import OpPattern

KEY_TYPE = TensorType((10,), "uint64")


def _key(types, reporter) -> None:
    """The first argument is a threefry key: give it the key type, or check the one it has."""
    t = types[0]
    if not is_known(t):
        reporter.assign(t, KEY_TYPE)
        return
    k = tensor(t, "key")
    if len(k.shape) != 1 or (is_static(k.shape[0]) and k.shape[0] != 10):
        raise RelayTypeError(
            f"the key must be a threefry key Tensor[(10), uint64], found {type_text(k)}"
        )
    try:
        reporter.unify_dtype(k.dtype, "uint64")
    except RelayTypeError:
        raise RelayTypeError(
            f"the key must be a threefry key Tensor[(10), uint64], found {type_text(k)}"
        ) from None


def _shape(attrs) -> tuple:
    shape = tuple(attrs["out_shape"])
    if any(d < 0 for d in shape):
        raise RelayTypeError(f"out_shape must not be negative, got {list(shape)}")
    return shape


@relation("ThreefryGenerate")
def _generate_rel(types, num_inputs, attrs, reporter):
    _key(types, reporter)
    reporter.assign(types[1], TupleType((KEY_TYPE, TensorType(_shape(attrs), "uint64"))))
    return True


@relation("ThreefrySplit")
def _split_rel(types, num_inputs, attrs, reporter):
    _key(types, reporter)
    reporter.assign(types[1], TupleType((KEY_TYPE, KEY_TYPE)))
    return True


def _distribution_rel(name: str, what: str, params: tuple[str, str]):
    @relation(name)
    def rel(types, num_inputs, attrs, reporter):
        dtype = attrs["out_dtype"]
        if dtype not in ("float32", "float64"):
            raise RelayTypeError(
                f"We only support generating {what} random value of type float32 or float64, "
                f"got {dtype or 'unset'}."
            )
        _key(types, reporter)
        for t, p in zip(types[1:3], params):
            if is_known(t):
                v = tensor(t, p)
                if v.shape != ():
                    raise RelayTypeError(f"{p} must be a scalar, found {type_text(v)}")
                try:
                    reporter.unify_dtype(v.dtype, dtype)
                except RelayTypeError:
                    raise RelayTypeError(
                        f"{p} must be a {dtype} scalar, found {type_text(v)}"
                    ) from None
            else:
                reporter.assign(t, TensorType((), dtype))
        reporter.assign(types[3], TupleType((KEY_TYPE, TensorType(_shape(attrs), dtype))))
        return True

    return rel


@relation("Multinomial")
def _multinomial_rel(types, num_inputs, attrs, reporter):
    if not is_known(types[1]):
        return False
    _key(types, reporter)
    probs = tensor(types[1], "probs")
    if not probs.shape:
        raise RelayTypeError(f"probs must have at least one dimension, found {type_text(probs)}")
    if attrs["num_samples"] < 0:
        raise RelayTypeError(f"num_samples must not be negative, got {attrs['num_samples']}")
    out = TensorType(probs.shape[:-1] + (attrs["num_samples"],), "int32")
    reporter.assign(types[2], TupleType((KEY_TYPE, out)))
    return True


_SHAPE_DTYPE = (("out_shape", "ints"), ("out_dtype", "dtype", ""))

RANDOM_OPS = [
    # name, inputs, relation, attrs, arg names, doc
    (
        "random.threefry_generate",
        1,
        _generate_rel,
        schema("relay.attrs.ThreefryGenerateAttrs", ("out_shape", "ints")),
        ("key",),
        "(new key, uint64 random bits of shape ``out_shape``) from a threefry key.",
    ),
    (
        "random.threefry_split",
        1,
        _split_rel,
        None,
        ("key",),
        "Two new threefry keys, independent of each other and of later uses of either.",
    ),
    (
        "random.uniform",
        3,
        _distribution_rel("Uniform", "uniform", ("low", "high")),
        schema("relay.attrs.UniformAttrs", *_SHAPE_DTYPE),
        ("key", "low", "high"),
        "(new key, samples uniform on [low, high)) from 23 (float32) or 52 (float64) random bits.",
    ),
    (
        "random.normal",
        3,
        _distribution_rel("Normal", "Normal", ("mean", "scale")),
        schema("relay.attrs.NormalAttrs", *_SHAPE_DTYPE),
        ("key", "mean", "scale"),
        "(new key, normal samples with ``mean`` and ``scale``) by the Box-Muller transform.",
    ),
    (
        "random.multinomial",
        2,
        _multinomial_rel,
        schema("relay.attrs.MultinomialAttrs", ("num_samples", "int", 1)),
        ("key", "probs"),
        (
            "(new key, ``num_samples`` int32 indices drawn from the (unnormalised) distribution on "
            "the last axis of ``probs``; negative weights count as 0)."
        ),
    ),
]

for _name, _n, _rel, _attrs, _args, _doc in RANDOM_OPS:
    register(_name, _n, _rel, attrs=_attrs, pattern=OpPattern.OPAQUE, arg_names=_args, doc=_doc)


# --- builders (TVM's python/tvm/relay/op/random/kernel.py) -------------------------------


def threefry_key(seed: int) -> Expr:
    """A new key from an integer seed (the seed's 256 bits are the key, native byte order).

    >>> key = relay.random.threefry_key(0)
    """
    words = np.frombuffer(int(seed).to_bytes(32, sys.byteorder), dtype="uint64")
    return const(np.concatenate((words, np.array([0, 0, 0, 0, 1 << 63, 0], "uint64"))))


def threefry_generate(key, shape) -> Expr:
    """The call ``(new_key, bits)``; as in TVM, wrap it with ``relay.TupleWrapper(e, 2)`` to
    unpack it.  Never reuse ``key`` afterwards: use the new key."""
    return call("random.threefry_generate", key, out_shape=tuple(int(s) for s in shape))


def threefry_split(key) -> Expr:
    """The call ``(left_key, right_key)``."""
    return call("random.threefry_split", key)


def _scalar(value, dtype):
    return value if isinstance(value, Expr) else const(value, dtype)


def uniform(key, shape, dtype="float32", low=0.0, high=1.0) -> Expr:
    """The call ``(new_key, samples on [low, high))``."""
    return call(
        "random.uniform",
        key,
        _scalar(low, dtype),
        _scalar(high, dtype),
        out_shape=tuple(int(s) for s in shape),
        out_dtype=dtype,
    )


def normal(key, shape, dtype="float32", mean=0.0, scale=1.0) -> Expr:
    """The call ``(new_key, normal samples)``."""
    return call(
        "random.normal",
        key,
        _scalar(mean, dtype),
        _scalar(scale, dtype),
        out_shape=tuple(int(s) for s in shape),
        out_dtype=dtype,
    )


def multinomial(key, probs, num_samples) -> Expr:
    """The call ``(new_key, sampled indices)``."""
    return call("random.multinomial", key, probs, num_samples=int(num_samples))


__all__ = [
    "KEY_TYPE",
    "multinomial",
    "normal",
    "threefry_generate",
    "threefry_key",
    "threefry_split",
    "uniform",
]
