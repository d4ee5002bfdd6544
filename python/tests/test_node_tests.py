"""Every ONNX backend node test of QuantizeLinear / DequantizeLinear / DynamicQuantizeLinear through
the Python API, bit for bit, once with one code per element and once with packed=True.

The folder comes from QLINEAR_NODE_TESTS (CMake passes <QLINEAR_SHARED_DIR>/onnx-node-tests); the
tests skip when it is absent. Tensors are read with python3-onnx's protobuf classes and decoded here:
that onnx's numpy_helper predates the float8 and 4-/2-bit types.
"""
import os
import pathlib

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
import qlinear  # noqa: E402

NODE_TESTS = pathlib.Path(os.environ.get("QLINEAR_NODE_TESTS", "/nonexistent"))

# TensorProto codes and how this package stores them (one code per element for sub-byte types).
FLOAT, UINT8, INT8, UINT16, INT16, INT32, FLOAT16, BFLOAT16 = 1, 2, 3, 4, 5, 6, 10, 16
FLOAT8 = (17, 18, 19, 20)
SUB_BYTE_BITS = {21: 4, 22: 4, 23: 4, 25: 2, 26: 2}  # uint4 int4 float4e2m1 uint2 int2
SIGNED_SUB_BYTE = (22, 26)
NUMPY_OF = {FLOAT: np.float32, UINT8: np.uint8, INT8: np.int8, UINT16: np.uint16, INT16: np.int16,
            INT32: np.int32, FLOAT16: np.float16, BFLOAT16: np.uint16}


def packed_bytes(t, n):
    """A sub-byte TensorProto's bytes (raw_data, or one packed byte per int32_data entry)."""
    if t.raw_data:
        return np.frombuffer(t.raw_data, np.uint8).copy()
    return np.array(t.int32_data, dtype=np.int64).astype(np.uint8)


def unpack_codes(raw, code, n):
    """Packed bytes -> one code per element (element 0 in the low bits), written here with NumPy."""
    bits = SUB_BYTE_BITS[code]
    per = 8 // bits
    i = np.arange(n)
    v = (raw[i // per].astype(np.int16) >> ((i % per) * bits)) & ((1 << bits) - 1)
    if code in SIGNED_SUB_BYTE:
        v = np.where(v >= 1 << (bits - 1), v - (1 << bits), v)
        return v.astype(np.int8)
    return v.astype(np.uint8)


def decode(t, packed):
    """A TensorProto as the Python API takes it: (array, dims)."""
    dims = tuple(t.dims)
    n = int(np.prod(dims, dtype=np.int64))
    code = t.data_type
    if code in SUB_BYTE_BITS:
        raw = packed_bytes(t, n)
        assert len(raw) == (n * SUB_BYTE_BITS[code] + 7) // 8
        return (raw if packed else unpack_codes(raw, code, n).reshape(dims)), dims
    if code in FLOAT8:
        a = np.frombuffer(t.raw_data, np.uint8) if t.raw_data else np.array(t.int32_data).astype(np.uint8)
    elif code == FLOAT and not t.raw_data:
        a = np.array(t.float_data, dtype=np.float32)
    elif t.raw_data:
        a = np.frombuffer(t.raw_data, NUMPY_OF[code])
    elif code in (FLOAT16, BFLOAT16):  # int32_data holds the bit patterns
        a = np.array(t.int32_data, dtype=np.int64).astype(np.uint16).view(NUMPY_OF[code])
    else:
        a = np.array(t.int32_data, dtype=np.int64).astype(NUMPY_OF[code])
    assert a.size == n
    return a.reshape(dims).copy(), dims


def load(path):
    t = onnx.TensorProto()
    t.ParseFromString(path.read_bytes())
    return t


def bits_of(a):
    """Bit patterns, so that NaNs and -0 compare exactly."""
    a = np.ascontiguousarray(a)
    return a.view({1: np.uint8, 2: np.uint16, 4: np.uint32}[a.dtype.itemsize])


def folders():
    if not NODE_TESTS.is_dir():
        return []
    return sorted(p for p in NODE_TESTS.iterdir() if (p / "model.onnx").is_file())


def test_folder_present_and_complete():
    if not NODE_TESTS.is_dir():
        pytest.skip(f"{NODE_TESTS}: onnx-node-tests is absent")
    # 33 tests upstream: 14 DequantizeLinear, 13 QuantizeLinear, 6 DynamicQuantizeLinear.
    assert len(folders()) == 33


def type_spelling(code, i):
    """Alternate how a type is named: ONNX name, TensorProto code."""
    return qlinear.dtype_name(code) if i % 2 == 0 else code


@pytest.mark.parametrize("packed", [False, True], ids=["codes", "packed"])
@pytest.mark.parametrize("folder", folders() or [None], ids=lambda p: p.name if p else "absent")
def test_node(folder, packed):
    if folder is None:
        pytest.skip(f"{NODE_TESTS}: onnx-node-tests is absent")
    model = onnx.ModelProto()
    model.ParseFromString((folder / "model.onnx").read_bytes())
    graph = model.graph
    opset = next(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))
    data = folder / "test_data_set_0"
    inputs = [load(data / f"input_{i}.pb") for i in range(len(graph.input))]
    outputs = [load(data / f"output_{i}.pb") for i in range(len(graph.output))]
    # The *_expanded models are DynamicQuantizeLinear's function body (16 nodes): same operator.
    op = graph.node[0].op_type if len(graph.node) == 1 else "DynamicQuantizeLinear"
    assert len(graph.node) == 1 or folder.name.startswith("test_dynamicquantizelinear")
    attrs = {a.name: a.i for a in graph.node[0].attribute} if len(graph.node) == 1 else {}
    index = folders().index(folder)

    if op == "DynamicQuantizeLinear":
        x, _ = decode(inputs[0], packed)
        y, scale, zp = qlinear.dynamic_quantize_linear(x)
        for got, want in zip((y, scale, zp), outputs):
            w, dims = decode(want, packed)
            assert got.shape == dims and got.dtype == w.dtype
            np.testing.assert_array_equal(bits_of(got), bits_of(w))
        return

    (x, x_dims), (scale, _) = decode(inputs[0], packed), decode(inputs[1], packed)
    zp = decode(inputs[2], packed)[0] if len(inputs) > 2 else None
    want, want_dims = decode(outputs[0], packed)
    kw = dict(axis=attrs.get("axis", 1), block_size=attrs.get("block_size", 0), opset=opset, packed=packed,
              x_dtype=type_spelling(inputs[0].data_type, index),
              scale_dtype=type_spelling(inputs[1].data_type, index + 1))
    if zp is not None:
        kw["zero_point_dtype"] = type_spelling(inputs[2].data_type, index)
    if attrs.get("output_dtype", 0):
        kw["output_dtype"] = type_spelling(attrs["output_dtype"], index)

    if op == "QuantizeLinear":
        if "precision" in attrs:
            kw["precision"] = attrs["precision"]
        got = qlinear.quantize_linear(x, scale, zp, saturate=bool(attrs.get("saturate", 1)), **kw)
    else:
        assert op == "DequantizeLinear"
        if packed and inputs[0].data_type in SUB_BYTE_BITS:
            kw["shape"] = x_dims
        got = qlinear.dequantize_linear(x, scale, zp, **kw)
    assert got.dtype == want.dtype
    assert got.shape == want.shape
    np.testing.assert_array_equal(bits_of(got), bits_of(want))
