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


SHARDED = [
    ("int4", dict()),
    ("uint4", dict(rule="minmax", block_size=16, axis=0)),
    ("float4e2m1", dict(rule="mx")),
    ("int8", dict(granularity="axis", axis=0)),
    ("uint8", dict(rule="minmax", granularity="tensor")),
    ("float8e4m3fn", dict(rule="pow2_ceil", granularity="axis", axis=1)),
    ("int8", dict(scale_dtype="bfloat16")),
]


@pytest.mark.parametrize("output_dtype,kw", SHARDED)
def test_sharded_scales_equal_the_whole_tensors(output_dtype, kw):
    # Shards that split rows and blocks: their ranges, combined by max, give quantize_dynamic's
    # scale and zero point of the whole tensor; quantize_linear of each shard with them gives its
    # part of y.
    x = rng_values((37, 50), seed=4)
    x[3, 7], x[10, 1] = np.inf, np.nan
    y, s, z = qlinear.quantize_dynamic(x, output_dtype, **kw)
    flat = x.reshape(-1)
    cuts = [0, 102, 1001, 1850]  # ranges: any cut; quantize_linear of sub-byte types: even starts
    qcuts = [0, 102, 1000, 1850]
    parts = [qlinear.dynamic_ranges(flat[a:b], output_dtype, shape=x.shape, first=a, **kw)
             for a, b in zip(cuts, cuts[1:])]
    ranges = np.maximum.reduce(parts)
    assert ranges.dtype == np.float32 and ranges.shape[1] == 2
    assert np.array_equal(ranges, qlinear.dynamic_ranges(x, output_dtype, **kw))
    s2, z2 = qlinear.dynamic_scales(ranges, output_dtype, shape=x.shape, **kw)
    assert s2.dtype == s.dtype and s2.shape == s.shape and s2.tobytes() == s.tobytes()
    assert (z is None and z2 is None) or (z2.dtype == z.dtype and np.array_equal(z2, z))
    axis = kw.get("axis", -1 if kw.get("granularity", "block") == "block" else 1)
    block = 0 if kw.get("granularity", "block") != "block" else kw.get("block_size", 32)
    sdt = "bfloat16" if kw.get("scale_dtype") == "bfloat16" else (
        "float8e8m0" if kw.get("rule") in ("mx", "pow2_ceil") else None)
    for a, b in zip(qcuts, qcuts[1:]):
        part = qlinear.quantize_linear(flat[a:b], s, z, axis=axis, block_size=block, output_dtype=output_dtype,
                                       precision="float32", scale_dtype=sdt, shape=x.shape, first=a)
        assert np.array_equal(part, y.reshape(-1)[a:b])


def test_ranges_are_the_groups_amax_and_minus_lo_hi():
    x = rng_values((6, 40), seed=5)
    x[2, 3] = np.inf
    r = qlinear.dynamic_ranges(x, "int8", granularity="axis", axis=0)
    finite = np.where(np.isfinite(x), x, 0)
    amax = np.abs(finite).max(axis=1)
    assert np.array_equal(r, np.stack([amax, amax], axis=1))
    r = qlinear.dynamic_ranges(x, "uint8", rule="minmax", granularity="axis", axis=0)
    assert np.array_equal(r, np.stack([np.maximum(0, -finite.min(axis=1)), np.maximum(0, finite.max(axis=1))], axis=1))
    r = qlinear.dynamic_ranges(x, "float8e4m3fn", rule="mx", granularity="axis", axis=0)
    assert r[2, 0] == np.inf and np.array_equal(np.delete(r, 2, axis=0)[:, 0], np.delete(amax, 2))
    # A shard touching only row 1: the other rows' groups are 0.
    r = qlinear.dynamic_ranges(x[1], "int8", granularity="axis", axis=0, shape=x.shape, first=40)
    assert np.array_equal(r[:, 0], np.where(np.arange(6) == 1, amax[1], 0).astype(np.float32))


def test_sharded_errors():
    with pytest.raises(ValueError, match=r"ranges: holds 3 values; 1 groups take 2 each"):
        qlinear.dynamic_scales(np.zeros(3, np.float32), "int8", shape=[4])
    with pytest.raises(TypeError, match="ranges: must be float32"):
        qlinear.dynamic_scales(np.zeros((1, 2)), "int8", shape=[4], granularity="tensor")
    with pytest.raises(ValueError, match="ranges: element 0 is -1"):
        qlinear.dynamic_scales(np.full((1, 2), -1, np.float32), "int8", shape=[4], granularity="tensor")
    with pytest.raises(TypeError, match="shape: must be a sequence of ints"):
        qlinear.dynamic_scales(np.zeros((1, 2), np.float32), "int8", shape="ab", granularity="tensor")
    with pytest.raises(TypeError):
        qlinear.dynamic_scales(np.zeros((1, 2), np.float32), "int8")  # shape= is required
    with pytest.raises(TypeError, match="shape: must be a sequence of ints"):
        qlinear.dynamic_scales(np.zeros((1, 2), np.float32), "int8", shape=np.array(4), granularity="tensor")
    with pytest.raises(ValueError, match=r"shape: the product of the non-zero dimensions overflows"):
        qlinear.dynamic_scales(np.zeros((1, 2), np.float32), "int8", shape=(2**62, 4), granularity="tensor")
    # A 0 beside huge dimensions: the same error wherever the 0 is (NumPy has no such array).
    for shape in ((0, 2**62, 2**62, 4), (2**62, 2**62, 4, 0)):
        with pytest.raises(ValueError, match=r"shape: the product of the non-zero dimensions overflows"):
            qlinear.dynamic_scales(np.zeros((0, 2), np.float32), "int8", shape=shape, granularity="block",
                                   axis=0, block_size=1)
    # packed= is a bool, or 0 or 1, as in quantize_linear.
    with pytest.raises(ValueError, match=r"packed: must be a bool \(or 0 or 1\)"):
        qlinear.dynamic_scales(np.zeros((1, 2), np.float32), "uint4", shape=[4], rule="minmax",
                               granularity="tensor", packed=5)
    with pytest.raises(ValueError, match=r"packed: must be a bool \(or 0 or 1\)"):
        qlinear.quantize_dynamic(np.ones(4, np.float32), "int4", granularity="tensor", packed=-1)
    # A misaligned ranges view is read as its values (copied: a float* must be aligned).
    ranges_src = np.array([[1.0, 1.0]], np.float32)
    buf = bytearray(9)
    buf[1:9] = ranges_src.tobytes()
    ranges = np.frombuffer(buf, np.float32, count=2, offset=1).reshape(1, 2)
    assert not ranges.flags.aligned
    s_aligned, _ = qlinear.dynamic_scales(ranges_src, "int8", shape=[4], granularity="tensor")
    s_mis, _ = qlinear.dynamic_scales(ranges, "int8", shape=[4], granularity="tensor")
    assert s_mis == s_aligned == np.float32(1.0) / np.float32(127.0)
    # Any other layout or byte order is copied too, as every array input is, in element order:
    # MINMAX's zero point tells the two entries of a group apart.
    pair = np.float32([[1.0, 3.0]])
    s_pair, z_pair = qlinear.dynamic_scales(pair, "uint8", shape=[4], rule="minmax", granularity="tensor")
    strided = np.float32([[1.0, 7.0, 3.0, 7.0]])[:, ::2]
    reversed_ = np.float32([[3.0, 1.0]])[:, ::-1]
    assert not strided.flags.c_contiguous and not reversed_.flags.c_contiguous
    s_swapped, z_swapped = qlinear.dynamic_scales(pair[:, ::-1].copy(), "uint8", shape=[4], rule="minmax",
                                                  granularity="tensor")
    assert z_swapped != z_pair
    for other in (pair.astype(">f4"), strided, reversed_, memoryview(pair)):
        s_other, z_other = qlinear.dynamic_scales(other, "uint8", shape=[4], rule="minmax", granularity="tensor")
        assert s_other == s_pair and z_other == z_pair
    with pytest.raises(TypeError, match=r"ranges: must be float32, as dynamic_ranges returns it, not float64"):
        qlinear.dynamic_scales([1.0, 1.0], "int8", shape=[4], granularity="tensor")
    with pytest.raises(TypeError, match="x_dtype: dynamic quantization takes float32, float16 or bfloat16"):
        qlinear.dynamic_scales(np.zeros((1, 2), np.float32), "int8", shape=[4], granularity="tensor",
                               x_dtype="int8")
    x = np.ones((4, 8), np.float32)
    with pytest.raises(ValueError, match=r"first, count: \[5, 5 \+ 32\) must lie within"):
        qlinear.dynamic_ranges(x, "int8", shape=[4, 8], first=5)
    with pytest.raises(ValueError, match="axis: 5 is out of range"):
        qlinear.dynamic_ranges(x, "int8", granularity="axis", axis=5)


@pytest.mark.parametrize("output_dtype", ["int4", "uint4", "int2", "uint8"])
def test_minmax_with_no_groups(output_dtype):
    # [6, 0] per column: no group, empty scale and zero point (sub-byte ones too).
    x = np.zeros((6, 0), np.float32)
    s, z = qlinear.dynamic_scales(np.zeros((0, 2), np.float32), output_dtype, shape=x.shape, rule="minmax",
                                  granularity="axis", axis=1)
    assert s.shape == (0,) and z.shape == (0,)
    y, s, z = qlinear.quantize_dynamic(x, output_dtype, rule="minmax", granularity="axis", axis=1)
    assert y.shape == (6, 0) and s.shape == (0,) and z.shape == (0,)


def test_packed_zero_points_from_ranges():
    x = np.arange(32, dtype=np.float32).reshape(4, 8) - 5
    kw = dict(rule="minmax", granularity="axis", axis=0)
    _, s, z = qlinear.quantize_dynamic(x, "uint4", packed=True, **kw)
    s2, z2 = qlinear.dynamic_scales(qlinear.dynamic_ranges(x, "uint4", **kw), "uint4", shape=x.shape, packed=True,
                                    **kw)
    assert z.shape == (2,) and np.array_equal(z2, z) and s2.tobytes() == s.tobytes()


def test_set_target_pins_and_unpins():
    last = qlinear.supported_targets()[-1]
    try:
        qlinear.set_target(last)
        assert qlinear.active_target() == last
        qlinear.set_target(qlinear.supported_targets()[0].lower())  # names match in either case
        assert qlinear.active_target() == qlinear.supported_targets()[0]
    finally:
        qlinear.set_target(None)
    assert qlinear.active_target() == qlinear.supported_targets()[0]  # the best this CPU runs
    with pytest.raises(ValueError, match="'BOGUS' is not a SIMD target"):
        qlinear.set_target("BOGUS")
    with pytest.raises(TypeError, match="name: must be a str or None"):
        qlinear.set_target(3)
    with pytest.raises(ValueError, match="name: not encodable as UTF-8"):
        qlinear.set_target("\ud800")
