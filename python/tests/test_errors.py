"""Bad input raises, with the library's message where the library judges the call (TypeError for
types, ValueError for shapes, attributes and values), and never writes a partial result."""
import re

import numpy as np
import pytest

import qlinear

X = np.linspace(-3, 3, 20, dtype=np.float32).reshape(4, 5)


def raises(exc, text):
    return pytest.raises(exc, match="^" + re.escape(text))


def test_float64_x_is_not_converted():
    with raises(TypeError, "x: float64 arrays are not accepted"):
        qlinear.quantize_linear(X.astype(np.float64), 0.1)
    with raises(TypeError, "x: float64 arrays are not accepted"):
        qlinear.quantize_linear([0.5, 1.5], 0.1)  # a list of floats is float64 to NumPy
    with raises(TypeError, "scale: float64 arrays are not accepted"):
        qlinear.quantize_linear(X, np.array(0.1))
    with raises(TypeError, "x: int64 arrays are not accepted"):
        qlinear.dequantize_linear(np.arange(4), 0.1)


def test_wrong_dtypes():
    # Library: the operator does not take the type.
    with raises(TypeError, "x: QuantizeLinear-25 does not take int16"):
        qlinear.quantize_linear(X.astype(np.int16), 0.1)
    with raises(TypeError, "x: float32 is not a quantized type"):
        qlinear.dequantize_linear(X, 0.1)
    with raises(TypeError, "x_zero_point: type int8 must be x's type uint8"):
        qlinear.dequantize_linear(np.zeros(4, np.uint8), 0.1, np.int8(0) + np.zeros(1, np.int8))
    with raises(TypeError, "y_zero_point: int4 output needs opset >= 21 (QuantizeLinear-19)"):
        qlinear.quantize_linear(X, 0.1, np.zeros(1, np.int8), zero_point_dtype="int4", opset=19)
    with raises(ValueError, "output_dtype: QuantizeLinear-19 has no such attribute (needs opset >= 21)"):
        qlinear.quantize_linear(X, 0.1, output_dtype="int4", opset=19)
    # Storage conventions: bfloat16 bits in 16-bit integers, float8 codes in uint8, int4 codes in int8.
    with raises(TypeError, "x: x_dtype=bfloat16 is stored as uint16 or int16, not float32"):
        qlinear.quantize_linear(X, 0.1, x_dtype="bfloat16")
    with raises(TypeError, "x: x_dtype=float8e4m3fn is stored as uint8, not int8"):
        qlinear.dequantize_linear(np.zeros(3, np.int8), 1.0, x_dtype="float8e4m3fn")
    with raises(TypeError, "x: x_dtype=int4 is stored as int8 (one code per element), not uint8"):
        qlinear.dequantize_linear(np.zeros(3, np.uint8), 1.0, x_dtype="int4")
    with raises(TypeError, "x: x_dtype=int4 is stored as uint8 (packed bytes), not int8"):
        qlinear.dequantize_linear(np.zeros(3, np.int8), 1.0, x_dtype="int4", packed=True, shape=(5,))
    with raises(TypeError, "dy: must be float32, float16 or bfloat16, got int8"):
        qlinear.quantize_linear_backward(X, 0.1, dy=np.zeros(X.shape, np.int8))


def test_unknown_type_names():
    with raises(TypeError, "output_dtype: unknown type name 'int3' (one of: float32, uint8, int8"):
        qlinear.quantize_linear(X, 0.1, output_dtype="int3")
    with raises(TypeError, "x_dtype: unknown type name 'FLOAT'"):
        qlinear.quantize_linear(X, 0.1, x_dtype="FLOAT")
    with raises(TypeError, "output_dtype: 7 is not a TensorProto type code that qlinear handles"):
        qlinear.quantize_linear(X, 0.1, output_dtype=7)
    with raises(TypeError, "precision: NumPy's float64 is not a type of ONNX QuantizeLinear/DequantizeLinear"):
        qlinear.quantize_linear(X, 0.1, precision=np.float64)
    with raises(TypeError, "dtype: expected an ONNX type name, a TensorProto code or a NumPy dtype, got 1.5"):
        qlinear.dtype_name(1.5)
    with raises(TypeError, "dtype: expected an ONNX type name, a TensorProto code or a NumPy dtype, got None"):
        qlinear.dtype_name(None)
    # a NUL inside the name is part of it, not its end
    with raises(TypeError, "dtype: unknown type name 'int8\\x00garbage'"):
        qlinear.dtype_name("int8\0garbage")
    with raises(TypeError, "output_dtype: unknown type name 'int4\\x00'"):
        qlinear.quantize_linear(X, 0.1, output_dtype="int4\0")
    # strings without UTF-8 (a lone surrogate) are named too, not a bare UnicodeEncodeError
    with raises(TypeError, "output_dtype: unknown type name '\\ud800'"):
        qlinear.quantize_linear(X, 0.1, output_dtype="\ud800")
    with raises(ValueError, "rule: '\\ud800' is not one of"):
        qlinear.quantize_dynamic(X, "int8", rule="\ud800")
    with raises(TypeError, "quantize_linear() got an unexpected keyword argument '\\ud800'"):
        qlinear.quantize_linear(X, 0.1, **{"\ud800": 1})


def test_codes_out_of_range():
    with raises(ValueError, "x: element 3 is 8, outside int4's codes -8..7"):
        qlinear.dequantize_linear(np.array([0, 1, -8, 8], np.int8), 1.0, x_dtype="int4")
    with raises(ValueError, "x: element 0 is 4, outside uint2's codes 0..3"):
        qlinear.dequantize_linear(np.array([4], np.uint8), 1.0, x_dtype="uint2")
    with raises(ValueError, "zero_point: element 1 is -3, outside int2's codes -2..1"):
        qlinear.quantize_linear(X, np.ones(5, np.float32), np.array([0, -3, 0, 0, 0], np.int8),
                                zero_point_dtype="int2")
    with raises(ValueError, "codes: element 2 is 16, outside float4e2m1's codes 0..15"):
        qlinear.pack(np.array([0, 15, 16], np.uint8), "float4e2m1")
    with raises(ValueError, "zero_point: 300 is outside uint8's range 0..255"):
        qlinear.quantize_linear(X, 0.1, 300)
    with raises(ValueError, "zero_point: -1 is outside uint8's range 0..255"):
        qlinear.quantize_linear(X, 0.1, -1)
    with raises(ValueError, "zero_point: 8 is outside int4's range -8..7"):
        qlinear.quantize_linear(X, 0.1, 8, output_dtype="int4")
    with raises(ValueError, "zero_point: 0.25 is not a float4e2m1 value"):
        qlinear.quantize_linear(X, 0.1, 0.25, output_dtype="float4e2m1")


def test_wrong_scale_shapes():
    with raises(ValueError, "y_scale: per-axis quantization needs a 1-D scale of length x.shape[1] = 5, got [4]"):
        qlinear.quantize_linear(X, np.ones(4, np.float32))
    with raises(ValueError, "y_scale: blocked quantization needs 3 entries on axis 1 (ceil(5/2)), got 2"):
        qlinear.quantize_linear(X, np.ones((4, 2), np.float32), block_size=2)
    with raises(ValueError, "x_scale: per-axis quantization needs a 1-D scale of length x.shape[0] = 4, got [5]"):
        qlinear.dequantize_linear(np.zeros((4, 5), np.uint8), np.ones(5, np.float32), axis=0)
    with raises(ValueError, "y_zero_point: must have the scale's shape [5], got [4]"):
        qlinear.quantize_linear(X, np.ones(5, np.float32), np.zeros(4, np.uint8))
    with raises(ValueError, "axis: 2 is out of range [-2, 1] for x of rank 2"):
        qlinear.quantize_linear(X, np.ones(5, np.float32), axis=2)


def test_packed_inputs_need_shape():
    with raises(ValueError, "x: a packed int4 input needs shape= (the tensor's logical shape)"):
        qlinear.dequantize_linear(np.zeros(3, np.uint8), 1.0, x_dtype="int4", packed=True)
    with raises(ValueError, "x: holds 3 bytes; 7 packed int4 elements take 4"):
        qlinear.dequantize_linear(np.zeros(3, np.uint8), 1.0, x_dtype="int4", packed=True, shape=(7,))
    with raises(ValueError, "zero_point: a packed uint4 zero point has the scale's 5 elements in 3 bytes, got 2"):
        qlinear.quantize_linear(X, np.ones(5, np.float32), np.zeros(2, np.uint8), output_dtype="uint4",
                                packed=True)


def test_out_checked_and_untouched_on_error():
    out = np.full(X.shape, 7, np.uint8)
    with raises(ValueError, "out: holds 19 elements, the result has 20"):
        qlinear.quantize_linear(X, 0.1, out=np.zeros(19, np.uint8))
    with raises(TypeError, "out: the uint8 result is stored as uint8, not int8"):
        qlinear.quantize_linear(X, 0.1, out=np.zeros(20, np.int8))
    with raises(ValueError, "out: must be C-contiguous"):
        qlinear.quantize_linear(X, 0.1, out=np.zeros((5, 8), np.uint8)[:, ::2])
    buf = np.zeros(100, np.uint8)
    with raises(ValueError, "out: overlaps x"):
        qlinear.dequantize_linear(buf[:20], 0.1, out=buf[16:96].view(np.float32))
    with raises(ValueError, "out: overlaps scale"):
        qlinear.quantize_linear(X, buf[:4].view(np.float32), out=buf[:20])
    with raises(ValueError, "out: must be writeable"):
        ro = np.zeros(20, np.uint8)
        ro.flags.writeable = False
        qlinear.quantize_linear(X, 0.1, out=ro)
    with raises(ValueError, "y_scale: per-axis quantization needs"):
        qlinear.quantize_linear(X, np.ones(4, np.float32), out=out)
    assert (out == 7).all()


def test_number_scales_outside_float32():
    for v, became in ((1e300, "inf"), (-1e39, "-inf"), (1e-300, "0"), (-1e-50, "-0")):
        with raises(ValueError, "scale: %g is outside float32's range (it would become %s)" % (v, became)):
            qlinear.quantize_linear(X, v)
        with raises(ValueError, "scale: %g is outside float32's range (it would become %s)" % (v, became)):
            qlinear.dequantize_linear(np.zeros(3, np.int8), v)
    # ints beyond a double's range: the argument is named (not a bare OverflowError)
    with raises(ValueError, "scale: the number is outside float32's range"):
        qlinear.quantize_linear(X, 10**400)
    with raises(ValueError, "lda: the number is outside float32's range"):
        qlinear.quantize_linear_backward(X, 0.1, dy=np.zeros(X.shape, np.float32), lda=10**400)
    for v, became in ((1e300, "inf"), (-1e39, "-inf"), (1e-300, "0")):
        with raises(ValueError, "lda: %g is outside float32's range (it would become %s)" % (v, became)):
            qlinear.quantize_linear_backward(X, 0.1, dy=np.zeros(X.shape, np.float32), lda=v)
    with raises(ValueError, "zero_point: the number is outside float32's range"):
        qlinear.quantize_linear(X, 0.1, -(10**400), output_dtype="float8e4m3fn")
    assert qlinear.dequantize_linear(np.ones(1, np.int8), 1e-40)[0] == np.float32(1e-40)  # subnormal
    assert np.isnan(qlinear.dequantize_linear(np.ones(1, np.int8), float("nan"))[0])  # NaN stays NaN


def test_longdouble_and_complex_numbers():
    if np.finfo(np.longdouble).max > np.finfo(np.float64).max:  # numbers beyond a double's range
        big, tiny = np.longdouble("1e4000"), np.longdouble("1e-4000")
        dy = np.zeros(X.shape, np.float32)
        for v, text, became in ((big, "1e+4000", "inf"), (-big, "-1e+4000", "-inf"), (tiny, "1e-4000", "0")):
            with raises(ValueError, "scale: %s is outside float32's range (it would become %s)" % (text, became)):
                qlinear.quantize_linear(X, v)
            with raises(ValueError, "lda: %s is outside float32's range (it would become %s)" % (text, became)):
                qlinear.quantize_linear_backward(X, 0.1, dy=dy, lda=v)
    if np.finfo(np.longdouble).nmant > np.finfo(np.float64).nmant:  # values between doubles
        with raises(ValueError, "zero_point: 1.00000000000000000087 is not a float8e4m3fn value"):
            qlinear.quantize_linear(X, 0.1, np.longdouble(1) + np.longdouble(2) ** -60, output_dtype="float8e4m3fn")
    scale = np.longdouble("0.1")
    assert (qlinear.quantize_linear(X, scale) == qlinear.quantize_linear(X, np.float32(scale))).all()
    with raises(TypeError, "lda: must be a number"):
        qlinear.quantize_linear_backward(X, 0.1, dy=np.zeros(X.shape, np.float32), lda=np.complex64(1 + 5j))


def test_ranges_and_threads():
    with raises(ValueError, "first, count: [18, 18 + 5) must lie within the tensor's 20 elements"):
        qlinear.quantize_linear(X, 0.1, first=18, count=5)
    with raises(ValueError, "first: must be a multiple of 2 for int4 (slices must not share a byte), got 3"):
        qlinear.quantize_linear(X, 0.1, output_dtype="int4", first=3, count=4)
    with raises(ValueError, "count: x holds 20 elements, count is 4"):
        qlinear.quantize_linear(X, 0.1, shape=(100,), first=20, count=4)
    with raises(ValueError, "threads: a first=/count= call runs serially"):
        qlinear.quantize_linear(X, 0.1, first=2, threads=2)
    for whole in ({"first": 0}, {"count": X.size}, {"first": 0, "count": X.size}):  # covers all of x
        with raises(ValueError, "threads: a first=/count= call runs serially"):
            qlinear.quantize_linear(X, 0.1, threads=2, **whole)
        with raises(ValueError, "threads: a first=/count= call runs serially"):
            qlinear.dequantize_linear(np.zeros(X.size, np.int8), 0.1, threads=2, **whole)
    with raises(ValueError, "threads: must be None or 0..65536"):
        qlinear.quantize_linear(X, 0.1, threads=-1)
    with raises(ValueError, "threads: must be None or 0..65536"):
        qlinear.quantize_linear(X, 0.1, threads=65537)
    with raises(ValueError, "shape: dimension 1 is negative or missing"):
        qlinear.dequantize_linear(np.zeros(3, np.uint8), 1.0, x_dtype="int4", packed=True, shape=(2, -3))


def test_attributes_and_values():
    # an int stands for a bool only as 0 or 1
    for bad in ({"saturate": 2}, {"packed": 5}, {"saturate": -1}):
        with raises(ValueError, "%s: must be a bool (or 0 or 1)" % next(iter(bad))):
            qlinear.quantize_linear(X, 0.1, output_dtype="int4", **bad)
    assert qlinear.quantize_linear(X, 0.1, output_dtype="int4", packed=1).dtype == np.uint8
    with raises(ValueError, "block_size: must be >= 0, got -1"):
        qlinear.quantize_linear(X, 0.1, block_size=-1)
    with raises(ValueError, "opset: 29 is outside the ai.onnx opsets qlinear knows, [10, 28]"):
        qlinear.quantize_linear(X, 0.1, opset=29)
    with raises(ValueError, "output_dtype: int8 (3) does not match y_zero_point type uint8"):
        qlinear.quantize_linear(X, 0.1, np.uint8(3), output_dtype=np.int8)
    with raises(ValueError, "y_zero_point: must be zero"):
        qlinear.quantize_linear(X, 0.1, np.array([0x38], np.uint8), zero_point_dtype="float8e4m3fn")
    with raises(ValueError, "x: DynamicQuantizeLinear needs at least one element"):
        qlinear.dynamic_quantize_linear(np.zeros(0, np.float32))
    with raises(TypeError, "zero_point: a uint8 zero point must be an int, got 1.5"):
        qlinear.quantize_linear(X, 0.1, 1.5)
    with raises(TypeError, "scale: a number scale is float32; pass an array for scale_dtype=float16"):
        qlinear.quantize_linear(X, 0.1, scale_dtype="float16")
    with raises(TypeError, "mask: must be the uint8 bit mask quantize_linear_masked returned, or a bool array"):
        qlinear.quantize_linear_backward(X, 0.1, dy=X, mask=np.zeros(3, np.int32))
    with raises(ValueError, "clamp_mask: needs 3 bytes (1 bit per element), got 2"):
        qlinear.quantize_linear_backward(X, 0.1, dy=X, mask=np.zeros(2, np.uint8))


def test_bad_objects_do_not_crash():
    with pytest.raises(TypeError, match="^x: an array is required, not None"):
        qlinear.quantize_linear(None, 0.1)
    with pytest.raises(TypeError, match="^dy: an array is required, not None"):
        qlinear.quantize_linear_backward(X, 0.1, dy=None)
    with pytest.raises(TypeError):
        qlinear.quantize_linear(X, None)
    with pytest.raises(TypeError):
        qlinear.quantize_linear(X, "0.1")
    with pytest.raises(TypeError):
        qlinear.quantize_linear(X, 0.1, axis="1")
    with pytest.raises((TypeError, ValueError)):
        qlinear.quantize_linear([[1.0, 2.0], [3.0]], 0.1)
    with pytest.raises(TypeError):
        qlinear.unpack(np.zeros(2, np.uint8), "int8", (4,))
