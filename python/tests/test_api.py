"""The Python API: types and their storage, scalars, arrays NumPy can view, out=, sub-ranges,
the training pair, DynamicQuantizeLinear, pack/unpack. Expected values come from the formats'
definitions and NumPy formulas written here."""
import array
import os
import re

import numpy as np
import pytest

import qlinear


def test_version_and_targets():
    assert re.fullmatch(r"\d+\.\d+\.\d+", qlinear.__version__)
    if "QLINEAR_EXPECTED_VERSION" in os.environ:
        assert qlinear.__version__ == os.environ["QLINEAR_EXPECTED_VERSION"]
    compiled, supported = qlinear.compiled_targets(), qlinear.supported_targets()
    assert compiled and supported and set(supported) <= set(compiled)
    assert qlinear.active_target() in supported
    assert all(isinstance(t, str) and t for t in compiled)
    assert qlinear.NEWEST_OPSET == 25
    assert isinstance(qlinear.openmp_enabled(), bool)


def test_type_spellings():
    x = np.linspace(-20, 20, 33, dtype=np.float32)
    want = np.clip(np.rint(x / np.float32(0.3)), -128, 127).astype(np.int8)
    # NumPy integers are codes like Python ints (np.uint8(3) is int8's code, not uint8)
    for spelling in ("int8", 3, np.uint8(3), np.int64(3), np.int8, np.dtype("int8")):
        np.testing.assert_array_equal(qlinear.quantize_linear(x, 0.3, output_dtype=spelling), want)
    assert [qlinear.dtype_name(t) for t in ("bfloat16", 16, 23, np.float16, np.dtype(np.uint16), np.int8(22))] == [
        "bfloat16", "bfloat16", "float4e2m1", "float16", "uint16", "int4"]


def bf16_round(f32):
    """float32 -> bfloat16 bits, round to nearest even (finite values)."""
    u = f32.view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def test_bfloat16_travels_as_16_bit_integers():
    rng = np.random.default_rng(1)
    f = (rng.standard_normal(101) * 30).astype(np.float32)
    f = (f.view(np.uint32) & 0xFFFF0000).view(np.float32)  # exactly bfloat16 values
    bits = (f.view(np.uint32) >> 16).astype(np.uint16)
    want = np.clip(np.rint(f / np.float32(0.5)) + 10, 0, 255).astype(np.uint8)
    for storage in (bits, bits.view(np.int16)):
        np.testing.assert_array_equal(qlinear.quantize_linear(storage, 0.5, 10, x_dtype="bfloat16"), want)
    # A bfloat16 scale, and a bfloat16 result (uint16 bits; int16 accepted as out=).
    s_bits = np.array([0x3F00], np.uint16)  # 0.5
    y = qlinear.dequantize_linear(want, s_bits, np.uint8(10), scale_dtype="bfloat16")
    assert y.dtype == np.uint16
    np.testing.assert_array_equal(y, bf16_round((want.astype(np.float32) - 10) * np.float32(0.5)))
    out = np.empty(want.shape, np.int16)
    assert qlinear.dequantize_linear(want, 0.3, 10, output_dtype="bfloat16", out=out) is out
    np.testing.assert_array_equal(out.view(np.uint16), bf16_round((want.astype(np.float32) - 10) * np.float32(0.3)))


def test_float8_codes():
    # e4m3fn: 1.0 = 0x38, 0.5 = 0x30, -2 = 0xC0, 448 = 0x7E (max), saturating beyond.
    x = np.array([1.0, 0.5, -2.0, 448.0, 1e6, -1e6], np.float32)
    y = qlinear.quantize_linear(x, 1.0, output_dtype="float8e4m3fn")
    assert y.dtype == np.uint8
    np.testing.assert_array_equal(y, [0x38, 0x30, 0xC0, 0x7E, 0x7E, 0xFE])
    back = qlinear.dequantize_linear(y, np.float32(2.0), x_dtype="float8e4m3fn")
    np.testing.assert_array_equal(back, [2.0, 1.0, -4.0, 896.0, 896.0, -896.0])
    # e5m2 via the zero point's type; a float8e8m0 scale (code 128 = 2.0).
    y = qlinear.quantize_linear(x[:3], 1.0, np.zeros(1, np.uint8), zero_point_dtype="float8e5m2")
    np.testing.assert_array_equal(y, [0x3C, 0x38, 0xC0])
    back = qlinear.dequantize_linear(y, np.array([128], np.uint8), x_dtype="float8e5m2",
                                     scale_dtype="float8e8m0", output_dtype="float32")
    np.testing.assert_array_equal(back, [2.0, 1.0, -4.0])


def numpy_pack(codes, bits):
    per = 8 // bits
    c = codes.reshape(-1).astype(np.int64) & ((1 << bits) - 1)
    out = np.zeros((c.size + per - 1) // per, np.int64)
    for k in range(per):
        part = c[k::per]
        out[: part.size] |= part << (k * bits)
    return out.astype(np.uint8)


SUB_BYTE_TYPES = [
    ("int4", 4, -8, 7, np.int8), ("uint4", 4, 0, 15, np.uint8), ("float4e2m1", 4, 0, 15, np.uint8),
    ("int2", 2, -2, 1, np.int8), ("uint2", 2, 0, 3, np.uint8)]


@pytest.mark.parametrize("name,bits,lo,hi,storage", SUB_BYTE_TYPES)
def test_sub_byte_codes_and_packing(name, bits, lo, hi, storage):
    rng = np.random.default_rng(bits)
    codes = rng.integers(lo, hi + 1, size=(3, 11)).astype(storage)
    packed = qlinear.pack(codes, name)
    np.testing.assert_array_equal(packed, numpy_pack(codes, bits))
    np.testing.assert_array_equal(qlinear.unpack(packed, name, codes.shape), codes)
    assert qlinear.unpack(packed, name, codes.shape).dtype == storage
    # DequantizeLinear reads both layouts alike.
    a = qlinear.dequantize_linear(codes, 0.5, x_dtype=name, axis=0)
    b = qlinear.dequantize_linear(packed, 0.5, x_dtype=name, packed=True, shape=codes.shape)
    np.testing.assert_array_equal(a.view(np.uint32), b.view(np.uint32))
    assert a.shape == b.shape == codes.shape
    # QuantizeLinear writes both layouts alike.
    x = rng.standard_normal((3, 11)).astype(np.float32) * 4
    y = qlinear.quantize_linear(x, 0.5, output_dtype=name)
    assert y.dtype == storage and y.shape == x.shape
    yp = qlinear.quantize_linear(x, 0.5, output_dtype=name, packed=True)
    assert yp.dtype == np.uint8 and yp.shape == ((x.size * bits + 7) // 8,)
    np.testing.assert_array_equal(yp, numpy_pack(y, bits))
    if name != "float4e2m1":
        np.testing.assert_array_equal(y, np.clip(np.rint(x / np.float32(0.5)), lo, hi))


@pytest.mark.parametrize("name,bits,lo,hi,storage", SUB_BYTE_TYPES)
def test_packing_every_length_code_and_bad_index(name, bits, lo, hi, storage):
    # Every length up to 17 and longer ones (whole bytes and tails), every code, both directions;
    # one code out of range anywhere (head, vector body, tail) is named by its index.
    rng = np.random.default_rng(16 * bits + hi)
    every = np.arange(lo, hi + 1).astype(storage)
    for n in list(range(18)) + [255, 1000, 4099]:
        codes = np.resize(every, n).astype(storage)
        rng.shuffle(codes)
        packed = qlinear.pack(codes, name)
        np.testing.assert_array_equal(packed, numpy_pack(codes, bits))
        np.testing.assert_array_equal(qlinear.unpack(packed, name, (n,)), codes)
        y = qlinear.quantize_linear(codes.astype(np.float32), 1.0, output_dtype=name)
        if name != "float4e2m1":
            np.testing.assert_array_equal(y, codes)
            np.testing.assert_array_equal(qlinear.dequantize_linear(codes, 1.0, x_dtype=name), codes)
        # An empty slice of one-code-per-element codes, at the end and inside.
        for first in sorted({0, n // 2, n}):
            empty = qlinear.dequantize_linear(codes, 1.0, x_dtype=name, first=first, count=0)
            assert empty.shape == (0,) and empty.dtype == np.float32
        for pos in sorted({0, n // 2, n - 1}) if n else []:
            for bad in ([hi + 1, lo - 1] if storage == np.int8 else [hi + 1, 255]):
                wrong = codes.copy()
                wrong[pos] = bad
                with pytest.raises(ValueError, match=f"element {pos} is {bad}, outside"):
                    qlinear.pack(wrong, name)
                with pytest.raises(ValueError, match=f"element {pos} is {bad}, outside"):
                    qlinear.dequantize_linear(wrong, 1.0, x_dtype=name)


def test_numbers_as_scale_and_zero_point():
    x = np.linspace(-5, 5, 41, dtype=np.float32)
    ref = qlinear.quantize_linear(x, np.array(0.25, np.float32), np.array(-3, np.int8))
    for s in (0.25, np.float32(0.25), np.float64(0.25)):
        for z in (-3, np.int8(-3), np.int64(-3)):
            np.testing.assert_array_equal(qlinear.quantize_linear(x, s, z, output_dtype="int8"), ref)
    # Sub-byte and float4 zero points from numbers equal the array forms.
    np.testing.assert_array_equal(
        qlinear.quantize_linear(x, 0.5, -3, output_dtype="int4"),
        qlinear.quantize_linear(x, 0.5, np.array(-3, np.int8), zero_point_dtype="int4"))
    np.testing.assert_array_equal(  # float4e2m1 1.5 is code 3
        qlinear.quantize_linear(x, 0.5, 1.5, output_dtype="float4e2m1"),
        qlinear.quantize_linear(x, 0.5, np.array([3], np.uint8), zero_point_dtype="float4e2m1"))
    # An int scale is a float32 scale.
    np.testing.assert_array_equal(qlinear.quantize_linear(x, 1, output_dtype="int8"),
                                  np.rint(x).astype(np.int8))
    # Ints beyond 2^53 round once to float32 (through float64 first, a float32 midpoint would
    # break the tie the wrong way): 2^60 + 2^36 + 1 is above the midpoint 2^60 + 2^36.
    for n, want in ((2**60 + 2**36 + 1, 2.0**60 + 2.0**37), (2**60 + 2**36, 2.0**60),
                    (2**60 + 3 * 2**36 - 1, 2.0**60 + 2.0**37), (-(2**60 + 2**36 + 1), -(2.0**60 + 2.0**37)),
                    (np.uint64(2**60 + 2**36 + 1), 2.0**60 + 2.0**37),
                    (2**128 - 2**103 - 1, np.finfo(np.float32).max), (-(2**128 - 2**103 - 1), -np.finfo(np.float32).max)):
        got = qlinear.dequantize_linear(np.int8([1]), n)
        assert got.dtype == np.float32 and got[0] == np.float32(want), (n, got[0])


def test_arrays_numpy_can_view_and_layouts():
    x = np.arange(-30, 30, dtype=np.float32).reshape(6, 10) * np.float32(0.7)
    want = qlinear.quantize_linear(x, 0.5)
    np.testing.assert_array_equal(qlinear.quantize_linear(np.asfortranarray(x), 0.5), want)
    np.testing.assert_array_equal(qlinear.quantize_linear(x[:, ::2], 0.5), want[:, ::2])
    np.testing.assert_array_equal(qlinear.quantize_linear(x[::-1], 0.5), want[::-1])
    np.testing.assert_array_equal(qlinear.quantize_linear(x.astype(">f4"), 0.5), want)
    flat = x.reshape(-1)
    np.testing.assert_array_equal(qlinear.quantize_linear(memoryview(flat), 0.5), want.reshape(-1))
    unaligned = np.frombuffer(b"\0" + flat.tobytes(), np.float32, offset=1)  # read in place: no alignment needed
    assert unaligned.ctypes.data % 4 != 0
    np.testing.assert_array_equal(qlinear.quantize_linear(unaligned, 0.5), want.reshape(-1))
    np.testing.assert_array_equal(qlinear.quantize_linear(array.array("f", flat.tolist()), 0.5),
                                  want.reshape(-1))
    # bytes (an ONNX TensorProto's raw_data) are uint8, as their memoryview is.
    raw = bytes([0x21, 0x43, 0xF5])
    np.testing.assert_array_equal(qlinear.dequantize_linear(raw, 1.0, x_dtype="uint4", packed=True, shape=(6,)),
                                  np.float32([1, 2, 3, 4, 5, 15]))
    np.testing.assert_array_equal(qlinear.dequantize_linear(raw, 2.0), np.float32([66, 134, 490]))
    # Per-axis scales given as a non-contiguous view.
    s = np.repeat(np.float32([0.5, 0.25, 1.0, 2.0, 0.125]), 2)[::2]
    np.testing.assert_array_equal(qlinear.quantize_linear(x[:, :5], s), qlinear.quantize_linear(x[:, :5], s.copy()))


def test_zero_size_arrays():
    y = qlinear.quantize_linear(np.zeros((0, 5), np.float32), np.ones(5, np.float32))
    assert y.shape == (0, 5) and y.dtype == np.uint8
    y = qlinear.quantize_linear(np.zeros((4, 0), np.float32), 0.5, output_dtype="int4", packed=True)
    assert y.shape == (0,)
    x = qlinear.dequantize_linear(np.zeros(0, np.uint8), 0.5, x_dtype="uint4", packed=True, shape=(0, 3))
    assert x.shape == (0, 3) and x.dtype == np.float32
    assert qlinear.dequantize_linear(np.zeros(0, np.int8), 0.5, threads=2).shape == (0,)
    assert qlinear.pack(np.zeros(0, np.int8), "int4").shape == (0,)


def test_out():
    x = np.linspace(-1, 1, 24, dtype=np.float32).reshape(4, 6)
    out = np.empty(24, np.int8)  # size counts, not shape
    assert qlinear.quantize_linear(x, 0.01, np.int8(0), out=out) is out
    np.testing.assert_array_equal(out.reshape(4, 6), qlinear.quantize_linear(x, 0.01, np.int8(0)))
    codes = np.empty((4, 6), np.int8)
    qlinear.quantize_linear(x, 0.25, output_dtype="int4", out=codes)
    np.testing.assert_array_equal(codes, np.rint(x / np.float32(0.25)).astype(np.int8))
    packed = np.empty(12, np.uint8)
    qlinear.quantize_linear(x, 0.25, output_dtype="int4", packed=True, out=packed)
    np.testing.assert_array_equal(packed, numpy_pack(codes, 4))


def test_ranges_and_shards():
    rng = np.random.default_rng(5)
    x = (rng.standard_normal((4, 9)) * 3).astype(np.float32)
    s = rng.uniform(0.1, 1, size=9).astype(np.float32)
    whole = qlinear.quantize_linear(x, s, output_dtype="int4")
    flat = whole.reshape(-1)
    # first/count select elements of the whole x.
    np.testing.assert_array_equal(qlinear.quantize_linear(x, s, output_dtype="int4", first=10, count=12),
                                  flat[10:22])
    np.testing.assert_array_equal(qlinear.quantize_linear(x, s, output_dtype="int4", first=30), flat[30:])
    # a selection is 1-D even when it is all of x
    for sel in ({"first": 0}, {"count": x.size}, {"first": 0, "count": x.size}):
        got = qlinear.quantize_linear(x, s, output_dtype="int4", **sel)
        assert got.shape == (x.size,)
        np.testing.assert_array_equal(got, flat)
        assert qlinear.dequantize_linear(whole, s, x_dtype="int4", **sel).shape == (x.size,)
    assert qlinear.quantize_linear(x, s, output_dtype="int4").shape == x.shape  # no selection
    # shape= makes x a shard of a tensor of that shape (as an MPI rank holds it).
    shard = x.reshape(-1)[12:30]
    got = qlinear.quantize_linear(shard, s, output_dtype="int4", shape=x.shape, first=12)
    np.testing.assert_array_equal(got, flat[12:30])
    gp = qlinear.quantize_linear(shard, s, output_dtype="int4", shape=x.shape, first=12, packed=True)
    np.testing.assert_array_equal(gp, numpy_pack(flat[12:30], 4))
    # DequantizeLinear of packed shards: bytes [6, 15) hold elements [12, 30); the last shard's
    # count is the rest of the tensor.
    full = qlinear.quantize_linear(x, s, output_dtype="int4", packed=True)
    want = qlinear.dequantize_linear(whole, s, x_dtype="int4").reshape(-1)
    got = qlinear.dequantize_linear(full[6:15], s, x_dtype="int4", packed=True, shape=x.shape, first=12,
                                    count=18)
    assert got.shape == (18,)
    np.testing.assert_array_equal(got.view(np.uint32), want[12:30].view(np.uint32))
    tail = qlinear.dequantize_linear(full[17:], s, x_dtype="int4", packed=True, shape=x.shape, first=34)
    np.testing.assert_array_equal(tail.view(np.uint32), want[34:].view(np.uint32))


def test_masked_and_backward():
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((5, 13)) * 100).astype(np.float32)
    s = rng.uniform(0.2, 1.0, size=13).astype(np.float32)
    z = rng.integers(-20, 20, size=13).astype(np.int8)
    y, mask = qlinear.quantize_linear_masked(x, s, z)
    np.testing.assert_array_equal(y, qlinear.quantize_linear(x, s, z))
    assert mask.dtype == np.uint8 and mask.shape == ((x.size + 7) // 8,)
    q = np.rint(x / s) + z
    clamped = (q < -128) | (q > 127)
    assert clamped.any() and not clamped.all()
    np.testing.assert_array_equal(np.unpackbits(mask, count=x.size, bitorder="little").reshape(x.shape), clamped)
    dy = rng.standard_normal(x.shape).astype(np.float32)
    want = np.where(clamped, np.float32(0), dy * (np.float32(0.5) / s)).astype(np.float32)
    for m in (None, mask, clamped):
        dx = qlinear.quantize_linear_backward(x, s, z, dy=dy, lda=0.5, mask=m)
        assert dx.dtype == np.float32 and dx.shape == x.shape
        np.testing.assert_array_equal(dx.view(np.uint32), want.view(np.uint32))
    dx16 = qlinear.quantize_linear_backward(x, s, z, dy=dy.astype(np.float16), lda=0.5)
    assert dx16.dtype == np.float16


def test_backward_divides_by_the_scale_the_division_used():
    # precision float16 rounds a float32 scale of 0.1 to 0.0999755859375 before x / s: dx is
    # dy * (lda / that), so lda = the rounded scale passes dy through unchanged, lda = 0.1 not.
    x = np.float32([1.0, -2.0, 3.5])
    dy = np.float32([1.0, 0.25, -3.0])
    s16 = np.float32(np.float16(0.1))
    for lda, want in ((float(s16), dy), (0.1, dy * (np.float32(0.1) / s16))):
        dx = qlinear.quantize_linear_backward(x, np.float32(0.1), dy=dy, lda=lda, output_dtype="int8",
                                              precision="float16")
        np.testing.assert_array_equal(dx.view(np.uint32), want.astype(np.float32).view(np.uint32))
    assert not np.array_equal(dy * (np.float32(0.1) / s16), dy)


def test_backward_bool_mask_every_length():
    # A bool mask is packed to bits by the module: every length around a byte and a vector, and
    # bool bytes other than 0 and 1 (which numpy can hold), count as set where nonzero.
    rng = np.random.default_rng(12)
    for n in list(range(0, 18)) + [63, 64, 65, 1000, 4099]:
        x = (rng.standard_normal(n) * 10).astype(np.float32)
        dy = rng.standard_normal(n).astype(np.float32)
        raw = rng.choice(np.array([0, 1, 2, 255], np.uint8), size=n)
        mask = raw.view(np.bool_)
        want = np.where(raw != 0, np.float32(0), dy * (np.float32(0.5) / np.float32(0.25))).astype(np.float32)
        dx = qlinear.quantize_linear_backward(x, np.float32(0.25), dy=dy, lda=0.5, mask=mask)
        np.testing.assert_array_equal(dx.view(np.uint32), want.view(np.uint32), err_msg=f"n={n}")


def test_dynamic_quantize_linear():
    rng = np.random.default_rng(8)
    x = (rng.standard_normal((7, 19)) * 4 + 1).astype(np.float32)
    y, scale, zp = qlinear.dynamic_quantize_linear(x)
    assert scale.shape == () and scale.dtype == np.float32 and zp.shape == () and zp.dtype == np.uint8
    lo, hi = min(x.min(), np.float32(0)), max(x.max(), np.float32(0))
    want_scale = np.float32(hi - lo) / np.float32(255)
    want_zp = np.uint8(np.rint(np.clip(-lo / want_scale, 0, 255)))
    assert scale == want_scale and zp == want_zp
    np.testing.assert_array_equal(y, np.clip(np.rint(x / want_scale) + want_zp, 0, 255).astype(np.uint8))
    out = np.empty(x.size, np.uint8)
    assert qlinear.dynamic_quantize_linear(x, out=out)[0] is out


def test_float16_scale_gives_float16_output():
    q = np.arange(-5, 5, dtype=np.int8)
    y = qlinear.dequantize_linear(q, np.float16(0.5) * np.ones(1, np.float16))
    assert y.dtype == np.float16
    np.testing.assert_array_equal(y, (q.astype(np.float32) * 0.5).astype(np.float16))
