"""quantize_dynamic: scales computed from the data. Expected values come from the rules' formulas
written here with NumPy (exact cases chosen so that no rounding is in question), and from the
defining property: quantize_linear with the returned scale and zero point gives y back."""
import numpy as np
import pytest

import qlinear


def rng_values(shape, seed=1):
    r = np.random.default_rng(seed)
    return (r.standard_normal(shape) * 3).astype(np.float32)


def test_absmax_int8_blocks_power_of_two_scales():
    # Each block of 32 holds +-127 * 2^k as its largest |x|: its scale is exactly 2^k.
    x = rng_values((4, 70))
    scales = np.empty((4, 3), np.float32)
    for r in range(4):
        for b in range(3):
            k = r - b - 2
            end = min(70, 32 * b + 32)
            x[r, 32 * b:end] = np.clip(x[r, 32 * b:end], -100, 100) * np.float32(2.0**k)
            x[r, 32 * b + (r + b) % (end - 32 * b)] = (-1) ** b * 127 * np.float32(2.0**k)
            scales[r, b] = 2.0**k
    y, s, z = qlinear.quantize_dynamic(x, "int8")
    assert z is None and s.dtype == np.float32 and s.shape == (4, 3)
    np.testing.assert_array_equal(s, scales)
    want = np.clip(np.rint(x / np.repeat(scales, 32, axis=1)[:, :70]), -128, 127).astype(np.int8)
    np.testing.assert_array_equal(y, want)


def test_minmax_uint8_per_tensor_formula():
    x = rng_values((5, 33), seed=2)
    y, s, z = qlinear.quantize_dynamic(x, "uint8", rule="minmax", granularity="tensor")
    lo, hi = np.float32(min(0.0, x.min())), np.float32(max(0.0, x.max()))
    want_s = np.float32(np.float32(hi - lo) / np.float32(255))
    want_z = np.uint8(np.rint(np.clip(np.float32(0) - np.float32(lo / want_s), 0, 255)))
    assert s.shape == () and z.shape == () and z.dtype == np.uint8
    assert s == want_s and z == want_z
    # DynamicQuantizeLinear's rule is MINMAX to uint8 per tensor.
    y2, s2, z2 = qlinear.dynamic_quantize_linear(x)
    np.testing.assert_array_equal(y, y2)
    assert s == s2 and z == z2


def test_mx_scale_codes():
    # e = floor(log2 amax) - emax, as a float8e8m0 code e + 127; float8e4m3fn emax 8, float4e2m1 2.
    x = np.zeros((3, 32), np.float32)
    x[0, 5], x[1, 0], x[2, 31] = 3.0, -0.75, 448.0
    _, s, z = qlinear.quantize_dynamic(x, "float8e4m3fn", rule="mx")
    assert z is None and s.dtype == np.uint8 and s.shape == (3, 1)
    np.testing.assert_array_equal(s[:, 0], [1 - 8 + 127, -1 - 8 + 127, 8 - 8 + 127])
    _, s4, _ = qlinear.quantize_dynamic(x, "float4e2m1", rule="mx", block_size=16)
    assert s4.shape == (3, 2)
    np.testing.assert_array_equal(s4[:, 0], [126, 124, 0])  # x[2]'s first half is all zero: code 0
    np.testing.assert_array_equal(s4[:, 1], [0, 0, 133])


def test_nan_and_inf_groups():
    x = np.ones((2, 32), np.float32)
    x[0, 3] = np.nan
    x[1, 7] = np.inf
    _, s, _ = qlinear.quantize_dynamic(x, "float8e4m3fn", rule="mx")
    np.testing.assert_array_equal(s[:, 0], [0xFF, 0xFF])
    y, s, _ = qlinear.quantize_dynamic(x, "int8")  # absmax leaves NaN and Inf out of amax
    np.testing.assert_array_equal(s[:, 0], np.float32([1 / 127, 1 / 127]))
    assert y[0, 3] == -128 and y[1, 7] == 127 and y[0, 0] == 127


@pytest.mark.parametrize(
    "out,rule,granularity,axis,block_size",
    [
        ("int8", "absmax", "axis", 0, None),
        ("int4", "absmax", "block", -1, 32),
        ("uint4", "minmax", "block", 1, 16),
        ("int2", "absmax", "tensor", None, None),
        ("uint8", "minmax", "axis", 2, None),
        ("int16", "absmax", "block", 0, 3),
        ("float8e4m3fn", "mx", "block", -1, 32),
        ("float8e5m2", "absmax", "axis", 1, None),
        ("float4e2m1", "mx", "block", 2, 32),
        ("int8", "pow2_ceil", "block", -1, 7),
    ],
)
def test_quantize_linear_gives_y_back(out, rule, granularity, axis, block_size):
    x = rng_values((3, 5, 37), seed=3)
    x[1, 2, 4] = 0.0
    y, s, z = qlinear.quantize_dynamic(x, out, rule=rule, granularity=granularity, axis=axis,
                                       block_size=block_size)
    assert y.shape == x.shape
    a = -1 if axis is None else axis
    if granularity == "axis":
        assert s.shape == (x.shape[a],)
    elif granularity == "block":
        shape = list(x.shape)
        shape[a] = -(-shape[a] // (block_size or 32))
        assert s.shape == tuple(shape)
    else:
        assert s.shape == ()
    assert (z is not None) == (rule == "minmax")
    scale_dtype = "float8e8m0" if rule in ("mx", "pow2_ceil") else "float32"
    back = qlinear.quantize_linear(x, s, z, axis=0 if axis is None else a,
                                   block_size=(block_size or 32) if granularity == "block" else 0,
                                   output_dtype=out, precision="float32", scale_dtype=scale_dtype)
    np.testing.assert_array_equal(back, y)
    if out.startswith(("int", "uint")):
        # Within half a step where nothing saturated (the scale is at least amax / qmax).
        dq = qlinear.dequantize_linear(y, s, z, axis=0 if axis is None else a,
                                       block_size=(block_size or 32) if granularity == "block" else 0,
                                       x_dtype=out, scale_dtype=scale_dtype, output_dtype="float32")
        step = qlinear.dequantize_linear(np.ones_like(y), s, None, axis=0 if axis is None else a,
                                         block_size=(block_size or 32) if granularity == "block" else 0,
                                         x_dtype=out, scale_dtype=scale_dtype, output_dtype="float32")
        assert np.all(np.abs(dq - x) <= step * 0.5 + np.abs(x) * 2.0**-22)


def test_packed_threads_and_bfloat16():
    x = rng_values((64, 96), seed=4)
    y, s, z = qlinear.quantize_dynamic(x, "uint4", rule="minmax", granularity="axis", axis=0)
    yp, sp, zp = qlinear.quantize_dynamic(x, "uint4", rule="minmax", granularity="axis", axis=0, packed=True)
    np.testing.assert_array_equal(yp, qlinear.pack(y, "uint4"))
    np.testing.assert_array_equal(zp, qlinear.pack(z, "uint4"))
    np.testing.assert_array_equal(sp, s)
    yt, st, zt = qlinear.quantize_dynamic(x, "uint4", rule="minmax", granularity="axis", axis=0, threads=2)
    np.testing.assert_array_equal(yt, y)
    np.testing.assert_array_equal(st, s)
    np.testing.assert_array_equal(zt, z)
    # bfloat16 x (bits) holds the same values as its float32 widening.
    bits = (x.view(np.uint32) >> 16).astype(np.uint16)
    widened = (bits.astype(np.uint32) << 16).view(np.float32)
    yb, sb, _ = qlinear.quantize_dynamic(bits, "int8", x_dtype="bfloat16", scale_dtype="bfloat16")
    yw, sw, _ = qlinear.quantize_dynamic(widened, "int8", scale_dtype="bfloat16")
    assert sb.dtype == np.uint16
    np.testing.assert_array_equal(yb, yw)
    np.testing.assert_array_equal(sb, sw)


def test_errors():
    x = np.ones((4, 8), np.float32)
    with pytest.raises(ValueError, match="axis: granularity \"axis\" needs an axis"):
        qlinear.quantize_dynamic(x, "int8", granularity="axis")
    with pytest.raises(ValueError, match="rule: 'max' is not one of"):
        qlinear.quantize_dynamic(x, "int8", rule="max")
    with pytest.raises(TypeError, match="rule: must be one of"):
        qlinear.quantize_dynamic(x, "int8", rule=1)
    with pytest.raises(ValueError, match="granularity: 'row'"):
        qlinear.quantize_dynamic(x, "int8", granularity="row")
    with pytest.raises((TypeError, ValueError), match="output_dtype: rule ABSMAX"):
        qlinear.quantize_dynamic(x, "uint8")
    with pytest.raises((TypeError, ValueError), match="scale_dtype"):
        qlinear.quantize_dynamic(x, "int8", rule="mx", scale_dtype="float32")
    with pytest.raises((TypeError, ValueError), match="block_size"):
        qlinear.quantize_dynamic(x, "int8", granularity="tensor", block_size=4)
    with pytest.raises(TypeError, match="axis: must be an int"):
        qlinear.quantize_dynamic(x, "int8", axis="0")
    with pytest.raises((TypeError, ValueError), match="x"):
        qlinear.quantize_dynamic(np.ones(4, np.int32), "int8")
    with pytest.raises(TypeError):
        qlinear.quantize_dynamic(x)
    with pytest.raises(ValueError, match="axis: granularity \"tensor\" takes no axis"):
        qlinear.quantize_dynamic(x, "int8", granularity="tensor", axis=0)
    with pytest.raises(ValueError, match="granularity: x of rank 0 has no axis for BLOCK scales"):
        qlinear.quantize_dynamic(np.float32(2.0).reshape(()), "int8")
    with pytest.raises(TypeError, match="scale_dtype: 1180591620717411303424 is not a TensorProto type code"):
        qlinear.quantize_dynamic(x, "int8", scale_dtype=2**70)
    with pytest.raises(ValueError, match="threads: must be None or 0..65536"):
        qlinear.quantize_dynamic(x, "int8", threads=70000)
