#include "params.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "formats.h"
#include "minifloat.h"
#include "reference.h"

namespace qlinear {
namespace {

int32_t ZeroPointLane(DType t, const void* zp, int64_t k) {
  if (t == DType::kFloat4E2M1) {
    const float v =
        zp != nullptr ? DecodeMiniFloat(t, static_cast<uint8_t>(LoadCode(t, zp, k))) : -0.0f;
    return static_cast<int32_t>(BitsOf(v));
  }
  if (Info(t).kind != Kind::kInt || zp == nullptr) return 0;
  return LoadInt(t, zp, k);
}

// Typed copies for the common cases (blocked layouts decode a scale per 32 elements, so these
// loops are on the hot path); everything else goes through the generic per-element loaders.
// Caller memory is read with memcpy: no pointer needs alignment.
template <class T>
T Element(const void* src, int64_t k) {
  T v;
  std::memcpy(&v, static_cast<const char*>(src) + k * static_cast<int64_t>(sizeof(T)), sizeof(T));
  return v;
}
// Below this many zero points the vector loops' dispatch is not worth it.
constexpr int64_t kVectorZeroPoints = 64;
template <class T>
void Widen(DType t, const void* src, int64_t n, int32_t* dst) {
  const int64_t done = n >= kVectorZeroPoints ? VectorWidenZeroPoints(t, src, n, dst) : 0;
  for (int64_t k = done; k < n; ++k) dst[k] = static_cast<int32_t>(Element<T>(src, k));
}
// Packed zero points of type kT, fields first .. first + n - 1: the fields of whole bytes by
// vectors, then a byte at a time (blocked zero points are one per 32 elements), the partial
// bytes at either end one field at a time.
template <DType kT>
void WidenPacked(const void* src, int64_t first, int64_t n, int32_t* dst) {
  constexpr int kBits = Info(kT).bits;
  constexpr bool kSigned = Info(kT).qmin < 0;
  const uint8_t* b = static_cast<const uint8_t*>(src);
  constexpr int kPer = 8 / kBits;
  constexpr int32_t kHalf = 1 << (kBits - 1);
  auto field = [&](int64_t e) {
    const int32_t f = (b[e / kPer] >> (kBits * (e % kPer))) & ((1 << kBits) - 1);
    return kSigned ? (f ^ kHalf) - kHalf : f;
  };
  int64_t k = 0;
  for (; k < n && (first + k) % kPer != 0; ++k) dst[k] = field(first + k);
  int64_t bytes = (n - k) / kPer;
  const uint8_t* whole = b + (first + k) / kPer;
  int32_t* out = dst + k;
  if (n - k >= kVectorZeroPoints) {
    const int64_t done = VectorWidenZeroPoints(kT, whole, bytes * kPer, out);  // whole bytes
    whole += done / kPer;
    out += done;
    k += done;
    bytes -= done / kPer;
  }
  for (int64_t i = 0; i < bytes; ++i) {
    for (int f = 0; f < kPer; ++f) {
      const int32_t v = (whole[i] >> (kBits * f)) & ((1 << kBits) - 1);
      out[i * kPer + f] = kSigned ? (v ^ kHalf) - kHalf : v;
    }
  }
  for (k += bytes * kPer; k < n; ++k) dst[k] = field(first + k);
}

// The float32 of a float16 / bfloat16 / float8e8m0 scale, exactly as LoadReal decodes it (NaN:
// the quiet NaN with the sign). Selects, not branches: the loops over a blocked tensor's scales
// vectorize.
float ScaleOfHalf(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1F, man = h & 0x3FFu;
  const uint32_t special = 0x7F800000u | (static_cast<uint32_t>(man != 0) << 22);
  const uint32_t subnormal = BitsOf(static_cast<float>(man) * 0x1p-24f);  // man * 2^-24, exact
  const uint32_t normal = ((exp + 112) << 23) | (man << 13);
  const uint32_t is_special = 0u - static_cast<uint32_t>(exp == 0x1F), is_zero = 0u - static_cast<uint32_t>(exp == 0);
  return FloatOf(sign | (special & is_special) | (subnormal & is_zero) | (normal & ~(is_special | is_zero)));
}
float ScaleOfBFloat16(uint16_t h) {
  const uint32_t bits = static_cast<uint32_t>(h) << 16;
  return (bits & 0x7FFFFFFFu) > 0x7F800000u ? FloatOf((bits & 0x80000000u) | 0x7FC00000u) : FloatOf(bits);
}
float ScaleOfE8M0(uint8_t b) {
  if (b == 0xFF) return FloatOf(0x7FC00000u);
  return b == 0 ? FloatOf(0x00400000u) : FloatOf(static_cast<uint32_t>(b) << 23);  // 2^-127: a subnormal
}

// Scales first .. first + n - 1.
void DecodeScales(DType t, const void* scale, int64_t first, int64_t n, Prec prec, float* s) {
  if (prec == Prec::kF32) {  // float32, float16, bfloat16 and e8m0 values are float32 values
    if (n >= 64 && (t == DType::kFloat16 || t == DType::kBFloat16 || t == DType::kFloat8E8M0)) {
      const int64_t done = VectorDecodeScales(t, static_cast<const char*>(scale) + first * (Info(t).bits / 8), n, s);
      first += done;
      n -= done;
      s += done;
    }
    switch (t) {
      case DType::kFloat32:
        std::memcpy(s, static_cast<const char*>(scale) + first * 4, static_cast<size_t>(n) * 4);
        return;
      case DType::kFloat16:
        for (int64_t k = 0; k < n; ++k) s[k] = ScaleOfHalf(Element<uint16_t>(scale, first + k));
        return;
      case DType::kBFloat16:
        for (int64_t k = 0; k < n; ++k) s[k] = ScaleOfBFloat16(Element<uint16_t>(scale, first + k));
        return;
      case DType::kFloat8E8M0:
        for (int64_t k = 0; k < n; ++k) s[k] = ScaleOfE8M0(Element<uint8_t>(scale, first + k));
        return;
      default:
        break;
    }
  }
  for (int64_t k = 0; k < n; ++k) s[k] = static_cast<float>(RoundToPrecision(prec, LoadReal(t, scale, first + k)));
}

// Zero points first .. first + n - 1.
void DecodeZeroPoints(DType t, const void* zp_data, int64_t first, int64_t n, int32_t* z) {
  const bool sub_byte = Info(t).bits < 8;
  const void* zp = zp_data == nullptr || sub_byte
                       ? zp_data
                       : static_cast<const char*>(zp_data) + first * (Info(t).bits / 8);
  if (!sub_byte) first = 0;
  const bool is_int = Info(t).kind == Kind::kInt;
  if (zp == nullptr || (!is_int && t != DType::kFloat4E2M1)) {
    const int32_t v = ZeroPointLane(t, nullptr, 0);
    if (v == 0) {  // memset: at -O2 fill() is a loop of 4-byte stores (5% of int4 blocks of 32)
      std::memset(z, 0, static_cast<size_t>(n) * sizeof(int32_t));
    } else {
      std::fill(z, z + n, v);
    }
    return;
  }
  switch (t) {
    case DType::kInt8: return Widen<int8_t>(t, zp, n, z);
    case DType::kUint8: return Widen<uint8_t>(t, zp, n, z);
    case DType::kInt16: return Widen<int16_t>(t, zp, n, z);
    case DType::kUint16: return Widen<uint16_t>(t, zp, n, z);
    case DType::kInt32: return Widen<int32_t>(t, zp, n, z);
    case DType::kInt4: return WidenPacked<DType::kInt4>(zp, first, n, z);
    case DType::kUint4: return WidenPacked<DType::kUint4>(zp, first, n, z);
    case DType::kInt2: return WidenPacked<DType::kInt2>(zp, first, n, z);
    case DType::kUint2: return WidenPacked<DType::kUint2>(zp, first, n, z);
    default:
      for (int64_t k = 0; k < n; ++k) z[k] = ZeroPointLane(t, zp, first + k);
  }
}

}  // namespace

void ParamsWorkspace::Reserve(int64_t groups) {
  scales.Reserve(groups);
  recips.Reserve(groups);
  offsets.Reserve(groups);
  zps.Reserve(groups);
}

int64_t ParamsWorkspace::Bytes() const {
  return 4 * (scales.capacity + recips.capacity + offsets.capacity + zps.capacity);
}

namespace {

// A calling thread's workspaces for calls that bring none, each for up to this many groups
// (16 bytes each at most: 1 MiB). Freed and allocated afresh for every call, blocks this large
// are mapped and unmapped by glibc each time in a program whose heap has nothing above them,
// and their page faults then cost a [256, 4096] QuantizeLinear in blocks of 32 about as much as
// its arithmetic (docs/performance.md). Two: a masked QuantizeLinear decodes its parameters
// twice at once. A DecodedParams takes a workspace (a nested call on the same thread, from a
// caller's parallel-for, finds it gone and allocates its own) and gives it back when destroyed.
constexpr int64_t kThreadWorkspaceGroups = int64_t{1} << 16;
constexpr int kThreadWorkspaces = 2;
thread_local ParamsWorkspace t_workspaces[kThreadWorkspaces];

// DequantizeLinear reads no zero points (QuantParams::zps null) without a zero point, and for
// float8/float4 inputs, whose zero points are validated to be zero and which decoders ignore.
bool ZeroPointsRead(DType zp_type, const void* zp, ParamsFor use) {
  const Kind kind = Info(zp_type).kind;
  return !(use == ParamsFor::kDequantize && (kind == Kind::kMiniFloat || (zp == nullptr && kind == Kind::kInt)));
}

// float32 scales in float32 precision are read where they are.
bool ScalesInPlace(DType scale_type, const void* scale, Prec prec) {
  return scale_type == DType::kFloat32 && prec == Prec::kF32 && reinterpret_cast<uintptr_t>(scale) % alignof(float) == 0;
}

// The arrays of need, reserved in w; may throw std::bad_alloc.
void ReserveNeeded(const ArraysNeeded& need, ParamsWorkspace& w) {
  if (need.scales) w.scales.Reserve(need.n);
  if (need.zps) w.zps.Reserve(need.n);
  if (need.recips) w.recips.Reserve(need.n);
  if (need.offsets) w.offsets.Reserve(need.n);
}

// The smallest of the thread's workspaces that the arrays fit in, else the largest (to grow).
ParamsWorkspace TakeThreadWorkspace(const ArraysNeeded& need) {
  ParamsWorkspace* pick = nullptr;
  for (ParamsWorkspace& w : t_workspaces) {
    if (need.FitIn(w) && (pick == nullptr || w.Bytes() < pick->Bytes())) pick = &w;
  }
  if (pick == nullptr) {
    for (ParamsWorkspace& w : t_workspaces) {
      if (pick == nullptr || w.Bytes() > pick->Bytes()) pick = &w;
    }
  }
  ParamsWorkspace taken = std::move(*pick);
  *pick = ParamsWorkspace();  // (a moved-from workspace keeps its capacities)
  return taken;
}

// Keeps w in an empty slot, or instead of a smaller one.
void GiveBackThreadWorkspace(ParamsWorkspace&& w) {
  ParamsWorkspace* smallest = &t_workspaces[0];
  for (ParamsWorkspace& slot : t_workspaces) {
    if (slot.Bytes() < smallest->Bytes()) smallest = &slot;
  }
  if (w.Bytes() > smallest->Bytes()) *smallest = std::move(w);
}

// need's arrays reserved in w: the thread's workspace, taken, when n is small enough (returns
// true: w is to be given back), else w itself. May throw std::bad_alloc, after giving back
// what it took.
bool HoldArrays(const ArraysNeeded& need, ParamsWorkspace& w) {
  const bool taken = need.n <= kThreadWorkspaceGroups;
  if (taken) w = TakeThreadWorkspace(need);
  try {
    ReserveNeeded(need, w);
  } catch (...) {
    if (taken) GiveBackThreadWorkspace(std::move(w));
    throw;
  }
  return taken;
}

}  // namespace

ArraysNeeded ArraysFor(int64_t n, DType scale_type, const void* scale, DType zp_type, const void* zp, Prec prec,
                       ParamsFor use) {
  const DTypeInfo& zi = Info(zp_type);
  ArraysNeeded need;
  const bool many = n > 1;  // one group: DecodedParams' members
  need.scales = many && !ScalesInPlace(scale_type, scale, prec);
  need.zps = many && ZeroPointsRead(zp_type, zp, use);
  need.recips = many && use == ParamsFor::kReciprocal;
  need.offsets = need.recips && zi.kind == Kind::kInt && zi.bits <= 8;
  need.n = n;
  return need;
}

CallWorkspace::CallWorkspace(const ArraysNeeded& need) {
  if (!need.Any()) return;
  used_ = true;
  give_back_ = HoldArrays(need, ws_);
}

CallWorkspace::~CallWorkspace() {
  if (give_back_) GiveBackThreadWorkspace(std::move(ws_));
}

DecodedParams::DecodedParams(const Layout& l, int64_t begin, int64_t end, DType scale_type,
                             const void* scale, DType zp_type, const void* zp, Prec prec,
                             ParamsFor use, ParamsWorkspace* ws) {
  int64_t first, n;
  ScaleWindow(l, begin, end, &first, &n);
  n_ = n;
  const ArraysNeeded need = ArraysFor(n, scale_type, scale, zp_type, zp, prec, use);
  const bool zps_needed = ZeroPointsRead(zp_type, zp, use);
  const bool scales_in_place = ScalesInPlace(scale_type, scale, prec);
  if (ws != nullptr && !need.FitIn(*ws)) ws = nullptr;  // too small: allocate
  if (ws == nullptr && need.Any()) {
    give_back_ = HoldArrays(need, own_);  // may throw std::bad_alloc, before any output is written
    ws = &own_;
  }
  float* s = need.scales ? ws->scales.data.get() : &scale0_;
  int32_t* z = need.zps ? ws->zps.data.get() : &zp0_;
  if (scales_in_place) {
    prm_.scales = static_cast<const float*>(scale) + first;
  } else {
    DecodeScales(scale_type, scale, first, n, prec, s);
    prm_.scales = s;
  }
  if (zps_needed) DecodeZeroPoints(zp_type, zp, first, n, z);
  prm_.zps = zps_needed ? z : nullptr;
  prm_.first = first;
  if (use == ParamsFor::kReciprocal) {
    float* r = need.recips ? ws->recips.data.get() : &recip0_;
    const ReciprocalFacts facts = ComputeReciprocals(prm_.scales, n, r);
    if (facts.normal) {
      prm_.recips = r;
      prm_.exact_products = facts.powers_of_two;
    }
    if (prm_.recips != nullptr && need.offsets) {
      float* o = ws->offsets.data.get();
      const int64_t done = n >= kVectorZeroPoints ? VectorZeroOffsets(z, n, FixedPoint::kOffset, o) : 0;
      for (int64_t k = done; k < n; ++k) o[k] = static_cast<float>(z[k]) + FixedPoint::kOffset;
      prm_.offsets = o;
    }
  }
  prm_.vector = true;
}

DecodedParams::~DecodedParams() {
  if (give_back_) GiveBackThreadWorkspace(std::move(own_));
}

namespace {

// log2 of the smallest nonzero |x - zp| DequantizeLinear meets: the smallest subnormal of a
// float8/float4 input, 2^(1 - bias - mantissa bits); 1 for integer inputs (x - zp is an integer).
int SmallestValueExponent(DType x_type) {
  if (Info(x_type).kind != Kind::kMiniFloat) return 0;
  const MiniFormat& f = MiniFormatOf(x_type);
  return 1 - f.bias - f.mant_bits;
}

}  // namespace

QuantParams DecodedParams::ForDequantize(DType x_type) const {
  const ScaleFacts f = ComputeScaleFacts(prm_.scales, n_);
  const bool may_be_inf = x_type == DType::kFloat8E5M2;  // the only input with an Inf code
  if (!f.finite || (may_be_inf && f.zero)) return QuantParams();
  QuantParams p = prm_;
  p.moderate_scales = f.moderate;
  // |x - zp| >= 2^m and |s| >= 2^(field - 127) (normal s; a subnormal scale has field 0): the
  // product is at least 2^-126, and so is its float32 rounding, when field - 127 + m >= -126.
  p.normal_products = static_cast<int>(f.min_field) >= 1 - SmallestValueExponent(x_type);
  // |x - zp| < 2^bits for integer inputs; a float8/float4 value has mantissa bits + 1. A scale
  // has 24 - (its lowest set fraction bit) significant bits, 1 for a power of two, which adds
  // none to the product's.
  const int code_bits = Info(x_type).kind == Kind::kMiniFloat ? MiniFormatOf(x_type).mant_bits + 1 : Info(x_type).bits;
  const int scale_bits = f.fractions == 0 ? 1 : 24 - __builtin_ctz(f.fractions);
  p.bf16_products = p.normal_products && code_bits + (scale_bits == 1 ? 0 : scale_bits) <= 8;
  return p;
}

bool DecodedParams::GradientFactorsExact(float lda) const {
  for (int64_t k = 0; k < n_; ++k) {
    const float g = lda / prm_.scales[k];
    if (!std::isfinite(g) || g == 0.0f) return false;
  }
  return true;
}

}  // namespace qlinear
