"""The ``#[metadata]`` section of TVM's text format: read and write.

TVM's printer sends what it cannot write inline (non-scalar constants, int8 scalars,
virtual devices, ...) to a *meta table* and writes ``meta[relay.Constant][0]`` where the
object occurs.  With ``show_meta_data=True`` the text then ends with ``#[metadata]`` and
the table as TVM's generic JSON object-graph serialization (``node.SaveJSON``)::

    {
      "root": 1,
      "nodes": [{"type_key": ""},                      # node 0 is always null
                {"type_key": "Map", "keys": ["relay.Constant"], "data": [2]},
                {"type_key": "Array", "data": [3]},
                {"type_key": "relay.Constant",
                 "attrs": {"_checked_type_": "0", "data": "0", "span": "0",
                           "virtual_device_": "4"}},
                ...],
      "b64ndarrays": ["P6G0lvBAXt0AAAAA..."],          # tensors, TVM's NDArray format
      "attrs": {"tvm_version": "0.19.0"}
    }

Every attribute value is a string; one that names an object holds that node's index
(``"0"`` is null).  A ``relay.Constant``'s ``data`` attribute is instead an index into
``b64ndarrays``, each the base64 of one NDArray saved as TVM's ``SaveDLTensor`` writes it
(all little-endian)::

    uint64 magic 0xDD5E40F096B4A13F, uint64 reserved (0),
    int32 device_type (1 = CPU), int32 device_id, int32 ndim,
    uint8 type code (0 int, 1 uint, 2 float; bool is uint with 1 bit), uint8 bits, uint16 lanes,
    int64 shape[ndim], int64 data byte size, then the data (``(bits + 7) // 8`` bytes each).

:func:`parse_metadata` turns such a section into ``{"relay.Constant": [Constant, ...],
...}``; entries of other types (``VirtualDevice``, ``tir.Var``, attribute objects ...) are
kept as :class:`MetaObject` so that parsing goes on.  :func:`write_metadata` writes a
table back in the same format, in the node layout TVM 0.19 uses.

The JSON is only ever data: nothing in it is evaluated or unpickled.  Malformed input
raises :class:`~relay_nb.errors.ParseError`.
"""

from __future__ import annotations

import base64
import binascii
import json
import struct
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional

import numpy as np

from ..errors import ParseError, RelayError
from ..ir.expr import Constant
from ..ir.span import Source, Span
from ..ir.ty import complex_dtype_message

TVM_NDARRAY_MAGIC = 0xDD5E40F096B4A13F
"""``kTVMNDArrayMagic``: the first 8 bytes of every saved NDArray."""

TVM_VERSION = "0.19.0"
"""The version written in ``"attrs": {"tvm_version": ...}`` (the last TVM with Relay)."""

_KDL_CPU = 1
_HEADER = struct.Struct("<QQiiiBBH")  # magic, reserved, device type, device id, ndim, dtype

# DLDataType (code, bits) <-> numpy dtype names.  Bool is TVM's uint1, one byte each.
_CODE_BITS_TO_DTYPE: dict[tuple[int, int], str] = {
    (0, 8): "int8",
    (0, 16): "int16",
    (0, 32): "int32",
    (0, 64): "int64",
    (1, 1): "bool",
    (1, 8): "uint8",
    (1, 16): "uint16",
    (1, 32): "uint32",
    (1, 64): "uint64",
    (2, 16): "float16",
    (2, 32): "float32",
    (2, 64): "float64",
    (6, 8): "bool",  # kDLBool of newer DLPack versions
}
_DTYPE_TO_CODE_BITS: dict[str, tuple[int, int]] = {
    name: cb for cb, name in _CODE_BITS_TO_DTYPE.items() if cb != (6, 8)
}
_CODE_NAMES = {0: "int", 1: "uint", 2: "float", 3: "handle", 4: "bfloat", 5: "complex", 6: "bool"}

_MAX_NDIM = 64  # a sanity bound: no real tensor has more dimensions


# --- opaque entries ---------------------------------------------------------------------


class _Graph:
    """The raw node list of one parsed metadata section (shared by its MetaObjects)."""

    __slots__ = ("nodes", "b64ndarrays")

    def __init__(self, nodes: list, b64ndarrays: list):
        self.nodes = nodes
        self.b64ndarrays = b64ndarrays


@dataclass(frozen=True, eq=False)
class MetaObject:
    """A meta-table entry of a type relay_nb does not convert (kept so parsing goes on).

    ``type_key`` is TVM's (``"VirtualDevice"``, ``"tir.Var"``...), ``attrs`` the raw
    attribute strings of its JSON node, ``repr_str`` its string form if it had one.
    :meth:`resolve` follows an attribute that names another node.  Written back by
    :func:`write_metadata` exactly as it was read.
    """

    type_key: str
    attrs: Mapping[str, str] = field(default_factory=dict)
    repr_str: Optional[str] = None
    keys: tuple[str, ...] = ()
    data: tuple[int, ...] = ()
    _graph: Optional[_Graph] = field(default=None, repr=False)
    _index: int = field(default=-1, repr=False)

    def resolve(self, name: str) -> Any:
        """The node that attribute ``name`` refers to (None for null), converted as
        :func:`parse_metadata` converts table entries."""
        if self._graph is None:
            raise RelayError(f"{self.type_key}.{name}: this object has no node graph")
        raw = self.attrs.get(name)
        if raw is None:
            raise RelayError(f"{self.type_key} has no attribute {name!r}")
        reader = _Reader(self._graph, None, "")
        return reader.convert(reader.ref(raw, f"{self.type_key}.{name}"))

    def __repr__(self) -> str:
        return f"MetaObject({self.type_key})"


# --- NDArray binary format --------------------------------------------------------------


def decode_ndarray(blob: bytes) -> np.ndarray:
    """Decode one NDArray saved in TVM's binary format (raises ValueError if malformed)."""
    if len(blob) < _HEADER.size:
        raise ValueError(f"truncated NDArray header ({len(blob)} bytes, need {_HEADER.size})")
    magic, _reserved, _dev_type, _dev_id, ndim, code, bits, lanes = _HEADER.unpack_from(blob, 0)
    if magic != TVM_NDARRAY_MAGIC:
        raise ValueError(f"bad magic number {magic:#018x}: not a TVM NDArray")
    if not 0 <= ndim <= _MAX_NDIM:
        raise ValueError(f"bad number of dimensions {ndim}")
    offset = _HEADER.size
    if len(blob) < offset + 8 * ndim + 8:
        raise ValueError("truncated NDArray shape")
    shape = struct.unpack_from(f"<{ndim}q", blob, offset)
    offset += 8 * ndim
    if any(d < 0 for d in shape):
        raise ValueError(f"negative dimension in shape {shape}")
    (nbytes,) = struct.unpack_from("<q", blob, offset)
    offset += 8
    code_name = _CODE_NAMES.get(code, f"code {code}")
    if lanes != 1:
        raise ValueError(f"vector dtype {code_name}{bits}x{lanes} is not supported")
    dtype_name = _CODE_BITS_TO_DTYPE.get((code, bits))
    if dtype_name is None:
        if code_name == "complex":
            raise ValueError(complex_dtype_message(f"complex{bits}"))
        raise ValueError(f"dtype {code_name}{bits} is not supported")
    count = 1
    for d in shape:
        count *= d
    elem = (bits + 7) // 8
    if nbytes != count * elem:
        raise ValueError(
            f"data size {nbytes} does not match shape {tuple(shape)} of {dtype_name} "
            f"({count * elem} bytes)"
        )
    if len(blob) < offset + nbytes:
        raise ValueError(f"truncated NDArray data ({len(blob) - offset} of {nbytes} bytes)")
    raw = blob[offset : offset + nbytes]
    if dtype_name == "bool":
        array = np.frombuffer(raw, dtype=np.uint8) != 0
    else:
        array = np.frombuffer(raw, dtype=np.dtype(dtype_name).newbyteorder("<"))
        array = array.astype(np.dtype(dtype_name), copy=True)  # native order, own buffer
    return array.reshape(shape)


def encode_ndarray(array: np.ndarray) -> bytes:
    """Encode ``array`` in TVM's NDArray binary format (as ``SaveDLTensor`` does)."""
    array = np.asarray(array)
    name = array.dtype.name
    code_bits = _DTYPE_TO_CODE_BITS.get(name)
    if code_bits is None:
        raise RelayError(f"cannot write a constant of dtype {name} to the meta table")
    code, bits = code_bits
    if name == "bool":
        data = np.ascontiguousarray(array, dtype=np.uint8).tobytes()
    else:
        data = np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("<")).tobytes()
    header = _HEADER.pack(TVM_NDARRAY_MAGIC, 0, _KDL_CPU, 0, array.ndim, code, bits, 1)
    shape = struct.pack(f"<{array.ndim}q", *array.shape)
    return header + shape + struct.pack("<q", len(data)) + data


# --- reading ----------------------------------------------------------------------------

_MARKERS = ("#[metadata]", "METADATA:")


class _Reader:
    """Converts the nodes of one parsed JSON graph (lazily, with a cache per node)."""

    def __init__(self, graph: _Graph, source: Optional[Span], text: str):
        self.graph = graph
        self.source = source
        self.text = text
        self.cache: dict[int, Any] = {}
        self.arrays: dict[int, np.ndarray] = {}

    def error(self, message: str) -> ParseError:
        return ParseError(f"metadata: {message}", self.source)

    def node(self, index: int, what: str) -> dict:
        nodes = self.graph.nodes
        if type(index) is not int or not 0 <= index < len(nodes):
            raise self.error(f"{what} refers to node {index!r}, but there are {len(nodes)} nodes")
        return nodes[index]

    def ref(self, raw: Any, what: str) -> int:
        """A node index from an attribute string such as ``"4"`` (``"null"`` is node 0)."""
        if raw == "null" or raw is None:
            return 0
        try:
            index = int(raw)
        except (TypeError, ValueError):
            raise self.error(f"{what} should be a node index, got {raw!r}") from None
        self.node(index, what)
        return index

    def array(self, raw: Any, what: str) -> np.ndarray:
        blobs = self.graph.b64ndarrays
        try:
            index = int(raw)
        except (TypeError, ValueError):
            raise self.error(f"{what} should be an index into b64ndarrays, got {raw!r}") from None
        if not 0 <= index < len(blobs):
            raise self.error(
                f"{what} refers to b64ndarrays[{index}], but there are {len(blobs)} arrays"
            )
        hit = self.arrays.get(index)
        if hit is not None:
            return hit
        blob = blobs[index]
        if not isinstance(blob, str):
            raise self.error(f"b64ndarrays[{index}] is not a string")
        try:
            raw_bytes = base64.b64decode("".join(blob.split()), validate=True)
        except (binascii.Error, ValueError) as exc:
            raise self.error(f"b64ndarrays[{index}] is not valid base64 ({exc})") from None
        try:
            array = decode_ndarray(raw_bytes)
        except (ValueError, struct.error) as exc:
            raise self.error(f"b64ndarrays[{index}]: {exc}") from None
        array.flags.writeable = False  # shared by every constant using this blob
        self.arrays[index] = array
        return array

    def convert(self, index: int) -> Any:
        hit = self.cache.get(index, _MISSING)
        if hit is not _MISSING:
            return hit
        node = self.node(index, "the metadata")
        key = node["type_key"]
        if key == "":
            out: Any = None
        elif key == "relay.Constant":
            out = self.constant(index, node)
        elif key in ("runtime.String", "String") and not node.get("attrs"):
            out = node.get("repr_str", "")
        elif key == "SourceName" and "repr_str" in node:
            out = node["repr_str"]
        elif key == "Span":
            out = self.span(index, node)
        else:
            out = MetaObject(
                key,
                dict(node.get("attrs", {})),
                node.get("repr_str"),
                tuple(node.get("keys", ())),
                tuple(node.get("data", ())),
                self.graph,
                index,
            )
        self.cache[index] = out
        return out

    def constant(self, index: int, node: dict) -> Constant:
        attrs = node.get("attrs", {})
        what = f"node {index} (relay.Constant)"
        if "data" not in attrs:
            raise self.error(f"{what} has no data attribute")
        array = self.array(attrs["data"], f"{what}.data")
        span = None
        if "span" in attrs:
            value = self.convert(self.ref(attrs["span"], f"{what}.span"))
            span = value if isinstance(value, Span) else None
        return Constant(array, span=span)

    def span(self, index: int, node: dict) -> Optional[Span]:
        attrs = node.get("attrs", {})
        try:
            line, column = int(attrs["line"]), int(attrs["column"])
            end_line = int(attrs.get("end_line", line))
            end_column = int(attrs.get("end_column", column))
        except (KeyError, TypeError, ValueError):
            return None  # a span is decoration: a bad one is dropped, not an error
        name = self.convert(self.ref(attrs.get("source_name"), f"node {index} (Span).source_name"))
        source = Source(name if isinstance(name, str) else "<metadata>", "")
        return Span(source, line, column, end_line, end_column)


_MISSING = object()


def _json_error_span(source: Optional[Span], text: str, pos: int) -> Optional[Span]:
    """The span of character ``pos`` of ``text``, which starts right after the marker."""
    if source is None:
        return None
    newlines = text.count("\n", 0, pos)
    if newlines == 0:
        column = source.column + len(_MARKERS[0]) + pos
    else:
        column = pos - text.rfind("\n", 0, pos)
    return Span(source.source, source.line + newlines, column)


def _check_graph(doc: Any, error) -> _Graph:
    if not isinstance(doc, dict):
        raise error(f"expected a JSON object, got {type(doc).__name__}")
    for name in ("root", "nodes"):
        if name not in doc:
            raise error(f'missing "{name}"')
    nodes = doc["nodes"]
    if not isinstance(nodes, list):
        raise error('"nodes" should be a list')
    for i, node in enumerate(nodes):
        if not isinstance(node, dict) or not isinstance(node.get("type_key", ""), str):
            raise error(f"node {i} should be an object with a string type_key")
        node.setdefault("type_key", "")
        attrs = node.get("attrs", {})
        if not isinstance(attrs, dict):
            raise error(f"node {i}: attrs should be an object")
        # TVM writes every attribute as a string; read numbers too, generously.
        for k, v in attrs.items():
            if isinstance(v, bool) or not isinstance(v, (str, int)):
                raise error(f"node {i}: attribute {k} should be a string, got {v!r}")
        node["attrs"] = {k: str(v) for k, v in attrs.items()}
        keys = node.get("keys", [])
        if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
            raise error(f"node {i}: keys should be a list of strings")
        data = node.get("data", [])
        if not isinstance(data, list) or not all(type(d) is int for d in data):
            raise error(f"node {i}: data should be a list of node indices")
        for key in ("repr_str", "repr_b64"):
            if key in node and not isinstance(node[key], str):
                raise error(f"node {i}: {key} should be a string")
    blobs = doc.get("b64ndarrays", [])
    if not isinstance(blobs, list):
        raise error('"b64ndarrays" should be a list of strings')
    return _Graph(nodes, blobs)


def parse_metadata(text: str, source: Optional[Span] = None) -> dict[str, list]:
    """Read a ``#[metadata]`` section into a meta table ``{type key: [entries]}``.

    ``text`` is the JSON document (what follows the ``#[metadata]`` marker; the marker
    itself may be included).  ``source`` is the span of the marker, used to point errors
    at the section (and, for JSON syntax errors, at the offending character).

    ``relay.Constant`` entries become :class:`~relay_nb.ir.expr.Constant` nodes; other
    entries are :class:`MetaObject`.  Raises :class:`ParseError` on malformed input.

    >>> table = parse_metadata(write_metadata({"relay.Constant": [relay.const([1, 2])]}))
    >>> table["relay.Constant"][0].data
    array([1, 2], dtype=int32)
    """
    if not isinstance(text, str):
        raise ParseError(f"metadata: expected text, got {type(text).__name__}", source)
    stripped = text.lstrip()
    for marker in _MARKERS:
        if stripped.startswith(marker):
            text = stripped[len(marker) :]
            break

    def error(message: str) -> ParseError:
        return ParseError(f"metadata: {message}", source)

    if not text.strip():
        raise error("the #[metadata] section is empty")
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ParseError(
            f"metadata: invalid JSON: {exc.msg}", _json_error_span(source, text, exc.pos) or source
        ) from None
    except (RecursionError, ValueError) as exc:
        raise error(f"invalid JSON: {exc}") from None
    graph = _check_graph(doc, error)
    reader = _Reader(graph, source, text)
    root = doc["root"]
    if type(root) is not int:
        raise error(f'"root" should be a node index, got {root!r}')
    root_node = reader.node(root, '"root"')
    if root_node["type_key"] == "":
        return {}
    if root_node["type_key"] != "Map":
        raise error(f"the root node should be a Map, not {root_node['type_key']!r}")
    keys, data = root_node.get("keys", []), root_node.get("data", [])
    if not keys and data:
        raise error("the root Map should be keyed by type names")
    if len(keys) != len(data):
        raise error(f"the root Map has {len(keys)} keys but {len(data)} values")
    table: dict[str, list] = {}
    for type_key, index in zip(keys, data):
        array_node = reader.node(index, f"meta[{type_key}]")
        if array_node["type_key"] != "Array":
            raise error(f"meta[{type_key}] should be an Array, not {array_node['type_key']!r}")
        entries = []
        for j, i in enumerate(array_node.get("data", [])):
            reader.node(i, f"meta[{type_key}][{j}]")  # checks the index
            entries.append(reader.convert(i))
        table[type_key] = entries
    return table


# --- writing ----------------------------------------------------------------------------


class _Writer:
    def __init__(self, prefix: Optional[_Graph]):
        self.nodes: list[dict] = []
        self.b64: list[str] = []
        if prefix is not None:
            # Entries read from a section keep their nodes at the same indices, so the raw
            # references inside them stay valid; new nodes go after them.
            self.nodes = [dict(n) for n in prefix.nodes]
            self.b64 = list(prefix.b64ndarrays)
        if self.nodes and self.nodes[0].get("type_key", "") == "":
            self.null = 0
        else:  # node 0 is null in everything TVM writes
            self.null = self.add({"type_key": ""})
        self.virtual_device: Optional[int] = None
        self.sources: dict[str, int] = {}

    def add(self, node: dict) -> int:
        self.nodes.append(node)
        return len(self.nodes) - 1

    def unconstrained_virtual_device(self) -> int:
        # VirtualDevice::FullyUnconstrained(), shared by every constant as in TVM.
        if self.virtual_device is None:
            vd = self.add({"type_key": "VirtualDevice"})
            scope = self.add({"type_key": "runtime.String"})
            self.nodes[vd]["attrs"] = {
                "device_type_int": "-1",
                "memory_scope": str(scope),
                "target": str(self.null),
                "virtual_device_id": "-1",
            }
            self.virtual_device = vd
        return self.virtual_device

    def span(self, span: Optional[Span]) -> int:
        if span is None or span.source is None:
            return self.null
        index = self.add({"type_key": "Span"})
        name = span.source.name
        src = self.sources.get(name)
        if src is None:
            src = self.sources[name] = self.add({"type_key": "SourceName", "repr_str": name})
        self.nodes[index]["attrs"] = {
            "column": str(span.column),
            "end_column": str(span.end_column or span.column),
            "end_line": str(span.end_line or span.line),
            "line": str(span.line),
            "source_name": str(src),
        }
        return index

    def tensor_type(self, data: np.ndarray) -> int:
        index = self.add({"type_key": "relay.TensorType"})
        shape = self.add({"type_key": "Array"})
        dims = []
        for d in data.shape:
            dims.append(
                self.add(
                    {
                        "type_key": "IntImm",
                        "attrs": {
                            "dtype": "int32" if d < 2**31 else "int64",
                            "span": str(self.null),
                            "value": str(int(d)),
                        },
                    }
                )
            )
        if dims:
            self.nodes[shape]["data"] = dims
        self.nodes[index]["attrs"] = {
            "dtype": data.dtype.name,
            "shape": str(shape),
            "span": str(self.null),
        }
        return index

    def constant(self, const: Constant) -> int:
        index = self.add({"type_key": "relay.Constant"})
        self.b64.append(base64.b64encode(encode_ndarray(const.data)).decode("ascii"))
        data_index = len(self.b64) - 1
        # Fields in TVM's reflection order (data, virtual_device_, span, _checked_type_),
        # so node numbering follows TVM's depth-first indexer.
        vd = self.unconstrained_virtual_device()
        span = self.span(const.span)
        checked = self.tensor_type(const.data) if const._checked_type is not None else self.null
        self.nodes[index]["attrs"] = {
            "_checked_type_": str(checked),
            "data": str(data_index),
            "span": str(span),
            "virtual_device_": str(vd),
        }
        return index

    def entry(self, type_key: str, i: int, value: Any) -> int:
        if isinstance(value, Constant):
            return self.constant(value)
        if isinstance(value, MetaObject):
            if value._graph is not None:
                return value._index
            node: dict[str, Any] = {"type_key": value.type_key}
            if value.repr_str is not None:
                node["repr_str"] = value.repr_str
            if value.attrs:
                node["attrs"] = dict(value.attrs)
            if value.keys:
                node["keys"] = list(value.keys)
            if value.data:
                node["data"] = list(value.data)
            return self.add(node)
        if value is None:
            return self.null
        raise RelayError(
            f"cannot write meta[{type_key}][{i}] (a {type(value).__name__}) to the metadata section"
        )


def write_metadata(table: Mapping[str, list]) -> str:
    """Write a meta table as a ``#[metadata]`` JSON section (without the marker line).

    Constants are written in TVM 0.19's node layout; entries that came from
    :func:`parse_metadata` as :class:`MetaObject` are written back as they were read.
    ``parse_metadata(write_metadata(t))`` gives back the same dtypes, shapes and bytes.

    When the table holds such read-back objects, the node list of the section they came
    from is written first, unchanged (their raw references stay valid), and the new nodes
    after it; constants of that old section are then stored twice in ``b64ndarrays``.

    >>> print(write_metadata({"relay.Constant": [relay.const([1.0, 2.0])]})[:40])
    {
      "root": 1,
      "nodes": [
    """
    graphs = {
        id(v._graph): v._graph
        for values in table.values()
        for v in values
        if isinstance(v, MetaObject) and v._graph is not None
    }
    if len(graphs) > 1:
        raise RelayError(
            "cannot write objects read from two different #[metadata] sections into one"
        )
    writer = _Writer(next(iter(graphs.values())) if graphs else None)
    root = writer.add({"type_key": "Map"})
    keys, arrays = [], []
    for type_key, values in table.items():
        array = writer.add({"type_key": "Array"})
        keys.append(str(type_key))
        arrays.append(array)
        items = [writer.entry(type_key, i, v) for i, v in enumerate(values)]
        if items:
            writer.nodes[array]["data"] = items
    if keys:
        writer.nodes[root]["keys"] = keys
        writer.nodes[root]["data"] = arrays
    return _dump(root, writer.nodes, writer.b64)


def _dump(root: int, nodes: list[dict], b64: list[str]) -> str:
    """JSON laid out as dmlc's JSONWriter lays it out (TVM's printer output)."""
    q = json.dumps
    out = ["{", f'  "root": {root},', '  "nodes": [']
    for i, node in enumerate(nodes):
        lines = [f'      "type_key": {q(node.get("type_key", ""))}']
        for key in ("repr_str", "repr_b64"):
            if key in node:
                lines.append(f'      "{key}": {q(node[key])}')
        attrs = node.get("attrs")
        if attrs:
            inner = ",\n".join(f"        {q(k)}: {q(attrs[k])}" for k in sorted(attrs))
            lines.append('      "attrs": {\n' + inner + "\n      }")
        if node.get("keys"):
            inner = ",\n".join(f"        {q(k)}" for k in node["keys"])
            lines.append('      "keys": [\n' + inner + "\n      ]")
        if node.get("data"):
            lines.append(f'      "data": [{", ".join(str(d) for d in node["data"])}]')
        out.append("    {\n" + ",\n".join(lines) + "\n    }" + ("," if i + 1 < len(nodes) else ""))
    out.append("  ],")
    if b64:
        out.append('  "b64ndarrays": [')
        out.append(",\n".join(f"    {q(b)}" for b in b64))
        out.append("  ],")
    else:
        out.append('  "b64ndarrays": [],')
    out.append(f'  "attrs": {{"tvm_version": {q(TVM_VERSION)}}}')
    out.append("}")
    return "\n".join(out)


def _plain(value: Any) -> Any:
    """A converted metadata node as a plain attribute value: arrays become lists, IntImm /
    FloatImm numbers, strings stay strings, null stays None."""
    if not isinstance(value, MetaObject):
        return value
    if value.type_key == "Array":
        reader = _Reader(value._graph, None, "")
        return [_plain(reader.convert(i)) for i in value.data]
    if value.type_key in ("IntImm", "tir.IntImm"):
        number = int(value.attrs.get("value", "0"))
        return bool(number) if value.attrs.get("dtype") == "bool" else number
    if value.type_key in ("FloatImm", "tir.FloatImm"):
        return float(value.attrs.get("value", "0"))
    raise RelayError(f"cannot use a {value.type_key} as an attribute value")


_SCALAR_KINDS = {"int": int, "float": float, "str": str, "dtype": str}


def attrs_fields(obj: MetaObject, schema: Any) -> dict:
    """The fields of an attrs object from a ``#[metadata]`` section (TVM's JSON node of a
    ``relay.attrs.XAttrs``), as values for ``schema`` (an op's :class:`AttrSchema`).

    Scalar fields are stored as strings (``"transpose_b": "1"``), arrays and optional
    numbers as references to other nodes; a field the node lacks keeps its default.
    """
    out: dict = {}
    for f in schema.fields:
        raw = obj.attrs.get(f.name)
        if raw is None:
            continue
        if f.kind == "bool":
            out[f.name] = bool(int(raw))
        elif f.kind == "dtype":
            out[f.name] = "" if raw == "void" else raw
        elif f.kind in _SCALAR_KINDS:
            out[f.name] = _SCALAR_KINDS[f.kind](raw)
        else:  # arrays, optional numbers, anything: a reference to a node
            out[f.name] = _plain(obj.resolve(f.name))
    return out


__all__ = [
    "attrs_fields",
    "parse_metadata",
    "write_metadata",
    "MetaObject",
    "decode_ndarray",
    "encode_ndarray",
    "TVM_NDARRAY_MAGIC",
    "TVM_VERSION",
]
