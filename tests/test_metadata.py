"""The #[metadata] section: TVM's JSON node graph and NDArray binary format."""

from __future__ import annotations

import base64
import json
import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import relay_nb as relay
from relay_nb.errors import ParseError, RelayError
from relay_nb.ir.expr import Constant
from relay_nb.ir.span import Source, Span
from relay_nb.syntax.metadata import (
    TVM_NDARRAY_MAGIC,
    MetaObject,
    decode_ndarray,
    encode_ndarray,
    parse_metadata,
    write_metadata,
)

DTYPES = [
    "bool",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float16",
    "float32",
    "float64",
]


def tvm_ndarray(shape, code, bits, data: bytes, lanes=1, magic=TVM_NDARRAY_MAGIC, nbytes=None):
    """The bytes TVM's SaveDLTensor writes, built by hand from the documented layout."""
    out = struct.pack("<QQ", magic, 0)  # magic, reserved
    out += struct.pack("<ii", 1, 0)  # DLDevice: kDLCPU, id 0
    out += struct.pack("<i", len(shape))  # ndim
    out += struct.pack("<BBH", code, bits, lanes)  # DLDataType
    out += struct.pack(f"<{len(shape)}q", *shape)
    out += struct.pack("<q", len(data) if nbytes is None else nbytes)
    return out + data


def b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


def section(nodes, arrays, root=1):
    return json.dumps({"root": root, "nodes": nodes, "b64ndarrays": arrays, "attrs": {"tvm_version": "0.19.0"}})


def constant_section(blob: str, extra_nodes=()):
    nodes = [
        {"type_key": ""},
        {"type_key": "Map", "keys": ["relay.Constant"], "data": [2]},
        {"type_key": "Array", "data": [3]},
        {
            "type_key": "relay.Constant",
            "attrs": {"_checked_type_": "0", "data": "0", "span": "0", "virtual_device_": "0"},
        },
        *extra_nodes,
    ]
    return section(nodes, [blob])


def same_array(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


# --- round trips --------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(), (0,), (3,), (2, 3), (2, 0, 4), (1, 1, 1, 5)])
def test_round_trip_every_dtype_and_shape(dtype, shape):
    rng = np.random.default_rng(0)
    data = (rng.standard_normal(shape) * 100).astype(dtype)
    table = {"relay.Constant": [Constant(data), relay.const(1.5)]}
    back = parse_metadata(write_metadata(table))
    assert list(back) == ["relay.Constant"]
    assert len(back["relay.Constant"]) == 2
    got = back["relay.Constant"][0]
    assert isinstance(got, Constant)
    assert same_array(got.data, data)
    assert not got.data.flags.writeable


def test_round_trip_special_floats_bitwise():
    data = np.array([np.nan, -np.nan, np.inf, -np.inf, -0.0, 0.0, 1e-45], dtype="float32")
    back = parse_metadata(write_metadata({"relay.Constant": [Constant(data)]}))
    assert back["relay.Constant"][0].data.tobytes() == data.tobytes()
    half = np.array([np.nan, 65504, -0.0], dtype="float16")
    back = parse_metadata(write_metadata({"relay.Constant": [Constant(half)]}))
    assert back["relay.Constant"][0].data.tobytes() == half.tobytes()


def test_round_trip_extreme_integers():
    for dtype in ("int64", "uint64", "int8", "uint8"):
        info = np.iinfo(dtype)
        data = np.array([info.min, info.max, 0], dtype=dtype)
        back = parse_metadata(write_metadata({"relay.Constant": [Constant(data)]}))
        assert same_array(back["relay.Constant"][0].data, data)


@settings(max_examples=60, deadline=None)
@given(
    hnp.arrays(
        dtype=st.sampled_from(DTYPES).map(np.dtype),
        shape=hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=4),
    )
)
def test_round_trip_random_arrays(data):
    back = parse_metadata(write_metadata({"relay.Constant": [Constant(data)]}))
    assert same_array(back["relay.Constant"][0].data, data)
    assert same_array(decode_ndarray(encode_ndarray(data)), data)


def test_non_contiguous_and_big_endian_input():
    data = np.arange(12, dtype="int32").reshape(3, 4).T
    back = parse_metadata(write_metadata({"relay.Constant": [Constant(data)]}))
    np.testing.assert_array_equal(back["relay.Constant"][0].data, data)
    big = np.arange(4, dtype=">f4")
    got = decode_ndarray(encode_ndarray(big))
    np.testing.assert_array_equal(got, big)
    assert got.dtype == np.dtype("float32")


def test_several_type_keys_and_empty_tables():
    assert parse_metadata(write_metadata({})) == {}
    table = {"relay.Constant": [relay.const([1, 2, 3])], "VirtualDevice": []}
    back = parse_metadata(write_metadata(table))
    assert list(back) == ["relay.Constant", "VirtualDevice"]
    assert back["VirtualDevice"] == []


def test_spans_and_checked_type_written_in_tvm_layout():
    span = Span(Source("from_string", ""), 307, 100, 307, 121)
    c = Constant(np.array([0, 1, 2], dtype="int32"), span=span)
    c.set_checked_type(relay.TensorType((3,), "int32"))
    text = write_metadata({"relay.Constant": [c, relay.const(np.zeros((2, 2)))]})
    doc = json.loads(text)
    nodes = doc["nodes"]
    assert doc["root"] == 1 and nodes[0] == {"type_key": ""}
    assert nodes[1]["type_key"] == "Map" and nodes[1]["keys"] == ["relay.Constant"]
    array = nodes[nodes[1]["data"][0]]
    first, second = (nodes[i] for i in array["data"])
    assert first["type_key"] == "relay.Constant"
    assert set(first["attrs"]) == {"_checked_type_", "data", "span", "virtual_device_"}
    # the fully unconstrained VirtualDevice is one node shared by all constants
    assert first["attrs"]["virtual_device_"] == second["attrs"]["virtual_device_"]
    vd = nodes[int(first["attrs"]["virtual_device_"])]
    assert vd["type_key"] == "VirtualDevice"
    assert vd["attrs"]["device_type_int"] == "-1" and vd["attrs"]["virtual_device_id"] == "-1"
    sp = nodes[int(first["attrs"]["span"])]
    assert sp["type_key"] == "Span" and sp["attrs"]["line"] == "307" and sp["attrs"]["column"] == "100"
    assert nodes[int(sp["attrs"]["source_name"])] == {"type_key": "SourceName", "repr_str": "from_string"}
    ty = nodes[int(first["attrs"]["_checked_type_"])]
    assert ty["type_key"] == "relay.TensorType" and ty["attrs"]["dtype"] == "int32"
    dims = nodes[int(ty["attrs"]["shape"])]["data"]
    assert [nodes[d]["attrs"]["value"] for d in dims] == ["3"]
    assert second["attrs"]["span"] == "0" and second["attrs"]["_checked_type_"] == "0"
    assert doc["attrs"] == {"tvm_version": "0.19.0"}
    # and the span comes back
    back = parse_metadata(text)["relay.Constant"][0]
    assert (back.span.line, back.span.column, back.span.source_name) == (307, 100, "from_string")


def test_written_text_looks_like_tvm():
    text = write_metadata({"relay.Constant": [relay.const([1.0, 2.0])]})
    assert text.startswith('{\n  "root": 1,\n  "nodes": [\n    {\n      "type_key": ""\n    },')
    assert '      "data": [2]\n' in text
    assert text.endswith('  "attrs": {"tvm_version": "0.19.0"}\n}')


# --- TVM's own output -----------------------------------------------------------------------


def test_encoder_matches_bytes_tvm_wrote():
    # Two b64ndarrays as TVM printed them in #[metadata] sections (int32, shapes (0,), (1,)).
    assert b64(encode_ndarray(np.zeros((0,), "int32"))) == (
        "P6G0lvBAXt0AAAAAAAAAAAEAAAAAAAAAAQAAAAAgAQAAAAAAAAAAAAAAAAAAAAAA"
    )
    assert b64(encode_ndarray(np.zeros((1,), "int32"))) == (
        "P6G0lvBAXt0AAAAAAAAAAAEAAAAAAAAAAQAAAAAgAQABAAAAAAAAAAQAAAAAAAAAAAAAAA=="
    )


def test_hand_built_tvm_section():
    values = np.array([[1.5, -2.0, 3.25], [0.0, np.inf, -1.0]], dtype="float32")
    blob = b64(tvm_ndarray((2, 3), 2, 32, values.astype("<f4").tobytes()))
    flags = np.array([True, False, True])
    bool_blob = b64(tvm_ndarray((3,), 1, 1, bytes([1, 0, 1])))  # bool: uint1, one byte each
    nodes = [
        {"type_key": ""},
        {"type_key": "Map", "keys": ["relay.Constant", "VirtualDevice"], "data": [2, 9]},
        {"type_key": "Array", "data": [3, 8]},
        {
            "type_key": "relay.Constant",
            "attrs": {"_checked_type_": "7", "data": "0", "span": "5", "virtual_device_": "4"},
        },
        {
            "type_key": "VirtualDevice",
            "attrs": {
                "device_type_int": "-1",
                "memory_scope": "10",
                "target": "0",
                "virtual_device_id": "-1",
            },
        },
        {
            "type_key": "Span",
            "attrs": {"column": "9", "end_column": "30", "end_line": "4", "line": "4", "source_name": "6"},
        },
        {"type_key": "SourceName", "repr_str": "from_string"},
        {"type_key": "relay.TensorType", "attrs": {"dtype": "float32", "shape": "0", "span": "0"}},
        {"type_key": "relay.Constant", "attrs": {"_checked_type_": "0", "data": "1", "span": "0"}},
        {"type_key": "Array", "data": [4]},
        {"type_key": "runtime.String"},
    ]
    table = parse_metadata("#[metadata]\n" + section(nodes, [blob, bool_blob]))
    assert list(table) == ["relay.Constant", "VirtualDevice"]
    c0, c1 = table["relay.Constant"]
    assert same_array(c0.data, values)
    assert c0.span.line == 4 and c0.span.source_name == "from_string"
    assert same_array(c1.data, flags)
    (vd,) = table["VirtualDevice"]
    assert isinstance(vd, MetaObject) and vd.type_key == "VirtualDevice"
    assert vd.attrs["device_type_int"] == "-1"
    assert vd.resolve("target") is None
    assert vd.resolve("memory_scope") == ""
    with pytest.raises(ParseError, match="refers to node -1"):
        vd.resolve("device_type_int")  # a plain number, not a reference


def test_newer_dlpack_bool_code_is_read():
    blob = b64(tvm_ndarray((2,), 6, 8, bytes([0, 1])))
    (c,) = parse_metadata(constant_section(blob))["relay.Constant"]
    assert same_array(c.data, np.array([False, True]))


def test_unknown_types_kept_opaque_and_written_back():
    nodes = [
        {"type_key": ""},
        {"type_key": "Map", "keys": ["relay.Constant", "tir.Var"], "data": [2, 4]},
        {"type_key": "Array", "data": [3]},
        {"type_key": "relay.Constant", "attrs": {"data": "0", "span": "0"}},
        {"type_key": "Array", "data": [5]},
        {
            "type_key": "tir.Var",
            "attrs": {"dtype": "int64", "name": "n", "span": "0", "type_annotation": "6"},
        },
        {"type_key": "PrimType", "attrs": {"dtype": "int64", "span": "0"}},
    ]
    blob = b64(encode_ndarray(np.arange(3, dtype="int64")))
    table = parse_metadata(section(nodes, [blob]))
    (var,) = table["tir.Var"]
    assert isinstance(var, MetaObject) and var.attrs["name"] == "n"
    prim = var.resolve("type_annotation")
    assert isinstance(prim, MetaObject) and prim.type_key == "PrimType"
    with pytest.raises(RelayError):
        var.resolve("no_such_field")
    # written back (with a new constant added) the opaque entry survives unchanged
    table["relay.Constant"].append(relay.const(np.ones((2, 2), "float32")))
    again = parse_metadata(write_metadata(table))
    (var2,) = again["tir.Var"]
    assert var2.type_key == "tir.Var" and dict(var2.attrs) == dict(var.attrs)
    assert var2.resolve("type_annotation").attrs["dtype"] == "int64"
    assert same_array(again["relay.Constant"][0].data, np.arange(3, dtype="int64"))
    assert same_array(again["relay.Constant"][1].data, np.ones((2, 2), "float32"))


def test_opaque_entries_from_two_sections_cannot_be_mixed():
    nodes = [
        {"type_key": ""},
        {"type_key": "Map", "keys": ["X"], "data": [2]},
        {"type_key": "Array", "data": [3]},
        {"type_key": "X", "repr_str": "x"},
    ]
    a = parse_metadata(section(nodes, []))["X"][0]
    b = parse_metadata(section(nodes, []))["X"][0]
    with pytest.raises(RelayError, match="two different"):
        write_metadata({"X": [a, b]})


def test_null_root_and_null_entries():
    assert parse_metadata(section([{"type_key": ""}], [], root=0)) == {}
    nodes = [
        {"type_key": ""},
        {"type_key": "Map", "keys": ["relay.Constant"], "data": [2]},
        {"type_key": "Array", "data": [0]},
    ]
    assert parse_metadata(section(nodes, [])) == {"relay.Constant": [None]}


def test_json_is_only_data():
    # A payload that would do something if evaluated or unpickled stays an inert string.
    nodes = [
        {"type_key": ""},
        {"type_key": "Map", "keys": ["__import__('os').system('false')"], "data": [2]},
        {"type_key": "Array", "data": [3]},
        {"type_key": "py.Pickle", "repr_b64": b64(b"cos\nsystem\n(S'false'\ntR.")},
    ]
    table = parse_metadata(section(nodes, []))
    (obj,) = table["__import__('os').system('false')"]
    assert isinstance(obj, MetaObject) and obj.type_key == "py.Pickle"


# --- malformed input ------------------------------------------------------------------------

GOOD_BLOB = b64(tvm_ndarray((2,), 2, 32, np.array([1, 2], "<f4").tobytes()))


@pytest.mark.parametrize(
    "text, message",
    [
        ("", "empty"),
        ("{", "invalid JSON"),
        ("[1, 2]", "JSON object"),
        ('{"nodes": []}', 'missing "root"'),
        ('{"root": 1}', 'missing "nodes"'),
        ('{"root": 5, "nodes": [{"type_key": ""}]}', "refers to node 5"),
        ('{"root": "1", "nodes": [{"type_key": ""}]}', "root"),
        ('{"root": 0, "nodes": [{"type_key": 3}]}', "type_key"),
        ('{"root": 0, "nodes": [7]}', "node 0"),
        ('{"root": 1, "nodes": [{"type_key": ""}, {"type_key": "Array"}]}', "should be a Map"),
        (
            '{"root": 1, "nodes": [{"type_key": ""}, {"type_key": "Map", "keys": ["a", "b"], "data": [0]}]}',
            "2 keys but 1 values",
        ),
        (
            '{"root": 1, "nodes": [{"type_key": ""}, {"type_key": "Map", "keys": ["a"], "data": [0]}]}',
            "should be an Array",
        ),
        (
            '{"root": 1, "nodes": [{"type_key": ""}, {"type_key": "Map", "keys": ["a"], "data": [2]},'
            ' {"type_key": "Array", "data": [9]}]}',
            r"meta\[a\]\[0\] refers to node 9",
        ),
        ('{"root": 0, "nodes": [{"type_key": "", "data": ["x"]}]}', "node indices"),
        ('{"root": 0, "nodes": [{"type_key": "", "attrs": {"a": [1]}}]}', "should be a string"),
        ('{"root": 0, "nodes": [], "b64ndarrays": "abc"}', "b64ndarrays"),
        ("[" * 100000 + "]" * 100000, "JSON"),
    ],
)
def test_malformed_json(text, message):
    with pytest.raises(ParseError, match=message):
        parse_metadata(text)


def _constant_with_blob(blob: str) -> str:
    return constant_section(blob)


@pytest.mark.parametrize(
    "blob, message",
    [
        ("not base64!!", "not valid base64"),
        ("P6G0", "truncated NDArray header"),
        (b64(tvm_ndarray((2,), 2, 32, b"\0" * 8, magic=0x1234)), "bad magic number"),
        (b64(tvm_ndarray((2,), 2, 32, b"\0" * 4)), "data size 4 does not match"),
        (b64(tvm_ndarray((2,), 2, 32, b"\0" * 4, nbytes=8)), "truncated NDArray data"),
        (b64(tvm_ndarray((2,), 4, 16, b"\0" * 4)), "bfloat16 is not supported"),
        (b64(tvm_ndarray((2,), 0, 8, b"\0" * 2, lanes=4)), "vector dtype int8x4"),
        (b64(tvm_ndarray((2,), 5, 64, b"\0" * 16)), "complex dtype complex64 is not supported: Relay has no complex"),
        (b64(tvm_ndarray((-1,), 2, 32, b"")), "negative dimension"),
        (b64(struct.pack("<QQiiiBBH", TVM_NDARRAY_MAGIC, 0, 1, 0, 1 << 20, 2, 32, 1)), "number of dimensions"),
        (b64(struct.pack("<QQiiiBBH", TVM_NDARRAY_MAGIC, 0, 1, 0, 3, 2, 32, 1) + b"\0" * 8), "truncated NDArray shape"),
        (b64(tvm_ndarray((1 << 40, 1 << 40), 2, 32, b"")), "does not match"),
    ],
)
def test_malformed_ndarray(blob, message):
    with pytest.raises(ParseError, match=message):
        parse_metadata(_constant_with_blob(blob))


def test_bad_constant_references():
    nodes = [
        {"type_key": ""},
        {"type_key": "Map", "keys": ["relay.Constant"], "data": [2]},
        {"type_key": "Array", "data": [3]},
        {"type_key": "relay.Constant", "attrs": {"data": "3"}},
    ]
    with pytest.raises(ParseError, match=r"b64ndarrays\[3\], but there are 1"):
        parse_metadata(section(nodes, [GOOD_BLOB]))
    nodes[3] = {"type_key": "relay.Constant", "attrs": {"span": "0"}}
    with pytest.raises(ParseError, match="no data attribute"):
        parse_metadata(section(nodes, [GOOD_BLOB]))
    nodes[3] = {"type_key": "relay.Constant", "attrs": {"data": "zero"}}
    with pytest.raises(ParseError, match="index into b64ndarrays"):
        parse_metadata(section(nodes, [GOOD_BLOB]))
    nodes[3] = {"type_key": "relay.Constant", "attrs": {"data": "0", "span": "44"}}
    with pytest.raises(ParseError, match="refers to node 44"):
        parse_metadata(section(nodes, [GOOD_BLOB]))
    nodes[3] = {"type_key": "relay.Constant", "attrs": {"data": "0"}}
    with pytest.raises(ParseError, match="not a string"):
        parse_metadata(section(nodes, [17]))


def test_unused_bad_arrays_are_ignored():
    nodes = json.loads(constant_section(GOOD_BLOB))["nodes"]
    table = parse_metadata(section(nodes, [GOOD_BLOB, "###"]))
    assert table["relay.Constant"][0].data.tolist() == [1.0, 2.0]


def test_errors_point_at_the_metadata_section():
    src = Source("prog.relay", 'def @main() { meta[relay.Constant][0] }\n#[metadata]\n{\n  "root": 1,\n  oops\n}\n')
    marker = Span(src, 2, 1)
    text = src.text.split("#[metadata]", 1)[1]
    with pytest.raises(ParseError) as info:
        parse_metadata(text, source=marker)
    err = info.value
    assert isinstance(err, RelayError)
    assert err.line == 5 and err.column == 3
    assert "prog.relay:5:3" in str(err) and "oops" in str(err)
    # structural errors point at the marker line
    with pytest.raises(ParseError) as info:
        parse_metadata('{"root": 3, "nodes": []}', source=marker)
    assert info.value.line == 2 and "#[metadata]" in str(info.value)


def test_write_rejects_what_tvm_cannot_hold():
    with pytest.raises(RelayError, match="complex64"):
        write_metadata({"relay.Constant": [Constant(np.zeros(2, "complex64"))]})
    with pytest.raises(RelayError, match="cannot write"):
        write_metadata({"relay.Constant": [relay.var("x")]})
    with pytest.raises(ParseError):
        parse_metadata(42)  # type: ignore[arg-type]
