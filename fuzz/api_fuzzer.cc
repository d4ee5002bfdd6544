// API fuzzer: random calls (op, opset, attributes, ranks 0-6, shapes incl. zeros, dtypes,
// scale/zero-point shapes, buffer sizes, NULL pointers) into the C ABI; with the extension of
// fuzz_input.h also the range, parallel, masked, backward and info entry points, attribute
// values over their whole int32/int64 range, huge dimensions whose element count fits but
// whose byte counts overflow for some input or output type, outputs smaller than claimed,
// odd addresses for every data pointer, max_threads over its range, and a caller's FP mode.
//
// Memory safety without trusting the library: every caller buffer is its own heap block that
// ends exactly where the call may stop reading or writing (odd addresses are made by starting
// inside the block), so ASan reports any access past it. A tensor whose payload would exceed
// kPayloadCap gets a truncated payload; such a call can never be valid within the output
// capacities the harness gives (kOutputCap), so a correct library rejects it before reading.
//
// A call must succeed or return an error with a message; a rejected call leaves its outputs
// untouched; an accepted one needs exactly the bytes the harness computes for itself (in 128
// bits), every byte count of it fits ptrdiff_t, and its outputs equal the scalar reference
// computed in the default FP mode; the caller's FP mode is the same after the call.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <vector>

#if defined(__x86_64__)
#include <xmmintrin.h>
#endif

#include "fuzz/fuzz_input.h"
#include "lib/dtype.h"
#include "lib/plan.h"
#include "lib/reference.h"
#include "qlinear/qlinear.h"

using namespace qlinear;

namespace {

using u128 = unsigned __int128;
constexpr size_t kPayloadCap = size_t{1} << 18;  // bytes of one tensor's payload
constexpr size_t kOutputCap = size_t{1} << 13;   // largest output buffer the harness gives
constexpr u128 kMaxBytes = static_cast<u128>(PTRDIFF_MAX);
constexpr u128 kHuge = static_cast<u128>(1) << 100;  // "does not fit anything"
constexpr uint8_t kSentinel = 0x5A;

// Aborts (a libFuzzer crash with this input saved) naming the rule that failed.
#define Check(ok) CheckAt((ok), #ok, __LINE__)
void CheckAt(bool ok, const char* what, int line) {
  if (ok) return;
  std::fprintf(stderr, "api_fuzzer: check failed at line %d: %s\n", line, what);
  std::abort();
}

int BitsOf(int32_t dtype) {
  const DTypeInfo* info = FindDType(dtype);
  return info ? info->bits : 8;
}

// Element count, exact in 128 bits (kHuge when beyond); negative dimensions count as 0 here (the
// library rejects them).
u128 Count(const std::vector<int64_t>& dims) {
  u128 n = 1;
  for (int64_t d : dims) {
    if (d <= 0) return 0;
    n *= static_cast<u128>(d);
    if (n > kHuge) n = kHuge;
  }
  return n;
}

u128 Bytes(int32_t dtype, u128 n) {
  const int bits = BitsOf(dtype);
  return bits >= 8 ? n * static_cast<unsigned>(bits / 8) : (n * static_cast<unsigned>(bits) + 7) / 8;
}

size_t Capped(u128 bytes, size_t cap) { return bytes > cap ? cap : static_cast<size_t>(bytes); }

// Caller memory: `size` bytes at an offset into their own heap block, which ends right after them.
class Blob {
 public:
  Blob(size_t size, size_t offset, uint8_t fill) : mem_(new uint8_t[size + offset]), data_(mem_.get() + offset), size_(size) {
    std::memset(mem_.get(), fill, size + offset);
  }
  Blob(const std::vector<uint8_t>& bytes, size_t offset) : Blob(bytes.size(), offset, 0) {
    if (!bytes.empty()) std::memcpy(data_, bytes.data(), bytes.size());
  }
  uint8_t* data() { return data_; }
  size_t size() const { return size_; }
  bool All(uint8_t v) const {
    for (size_t i = 0; i < size_; ++i) {
      if (data_[i] != v) return false;
    }
    return true;
  }

 private:
  std::unique_ptr<uint8_t[]> mem_;
  uint8_t* data_;
  size_t size_;
};

// The caller's floating-point mode during a call (x86: MXCSR control bits), checked on return.
class CallerMode {
 public:
  explicit CallerMode(uint8_t m) {
#if defined(__x86_64__)
    static const unsigned kModes[8] = {0x1F80, 0x9F80, 0x1FC0, 0x9FC0, 0x3F80, 0x5F80, 0x7F80, 0xFFC0};
    saved_ = _mm_getcsr();
    mode_ = kModes[m % 8];
    _mm_setcsr((saved_ & 0x3F) | mode_);
#else
    (void)m;
#endif
  }
  ~CallerMode() {
#if defined(__x86_64__)
    Check((_mm_getcsr() & 0xFFC0) == mode_);
    _mm_setcsr(saved_);
#endif
  }

 private:
  unsigned saved_ = 0, mode_ = 0;
};

// The harness's parallel-for: tasks in reverse order on the calling thread, each exactly once.
struct Runner {
  int64_t calls = 0, tasks = 0;
  static void ParallelFor(void* self, int64_t count, qlinear_task_fn task, void* context) {
    Runner* r = static_cast<Runner*>(self);
    ++r->calls;
    r->tasks = count;
    Check(count >= 1);
    for (int64_t i = count - 1; i >= 0; --i) task(context, i);
  }
};

struct Inputs {
  const fuzz::FuzzCall& c;
  qlinear_tensor x, s, z;
  const qlinear_tensor* zp;
  u128 n;                  // elements of x
  bool truncated[3];       // x, scale, zero point payloads shorter than their shapes
};

void CheckRejected(qlinear_status st, std::initializer_list<const Blob*> outs) {
  Check(st != QLINEAR_OK);
  Check(qlinear_last_error()[0] != '\0');
  for (const Blob* b : outs) Check(b->All(kSentinel));
}

// The output capacity the harness claims: what info reported (capped), less short_by.
size_t Claim(u128 needed, const fuzz::FuzzCall& c) {
  size_t claim = Capped(needed, kOutputCap);
  const size_t less = (c.flags & 0x80) ? c.ext.short_by : ((c.flags & 8) ? 1 : 0);
  return claim > less ? claim - less : 0;
}

// Q and DQ seen alike.
struct QOps {
  using Plan = QuantizePlan;
  using Attrs = qlinear_quantize_attrs;
  static constexpr auto Info = qlinear_quantize_output_info;
  static constexpr auto Run = qlinear_quantize_linear;
  static constexpr auto RunRange = qlinear_quantize_linear_range;
  static constexpr auto RunParallel = qlinear_quantize_linear_parallel;
  static qlinear_status MakePlan(const Inputs& in, const Attrs& a, Plan* p) { return PlanQuantize(&in.x, &in.s, in.zp, &a, p); }
  static void Reference(const Plan& p, void* y, int64_t b, int64_t e) { QuantizeReference(p, y, b, e); }
  static DType XType(const Plan& p) { return p.x_type; }
};
struct DQOps {
  using Plan = DequantizePlan;
  using Attrs = qlinear_dequantize_attrs;
  static constexpr auto Info = qlinear_dequantize_output_info;
  static constexpr auto Run = qlinear_dequantize_linear;
  static constexpr auto RunRange = qlinear_dequantize_linear_range;
  static constexpr auto RunParallel = qlinear_dequantize_linear_parallel;
  static qlinear_status MakePlan(const Inputs& in, const Attrs& a, Plan* p) { return PlanDequantize(&in.x, &in.s, in.zp, &a, p); }
  static void Reference(const Plan& p, void* y, int64_t b, int64_t e) { DequantizeReference(p, y, b, e); }
  static DType XType(const Plan& p) { return p.x_type; }
};

// What info says; when it accepts, the byte count is the harness's own and every byte count of
// the call fits ptrdiff_t. On acceptance: the output type and the bytes it needs.
template <class Ops>
bool InfoAccepts(const Inputs& in, const typename Ops::Attrs& a, int32_t* y_type, u128* needed) {
  size_t bytes = 0;
  int32_t t = 0;
  if (Ops::Info(&in.x, &in.s, in.zp, &a, &t, &bytes) != QLINEAR_OK) {
    Check(qlinear_last_error()[0] != '\0');
    return false;
  }
  const u128 want = Bytes(t, in.n);
  Check(static_cast<u128>(bytes) == want);  // an output byte count that wrapped
  Check(want <= kMaxBytes);
  Check(Bytes(in.x.dtype, in.n) <= kMaxBytes && Bytes(in.s.dtype, Count(in.c.scale.dims)) <= kMaxBytes);
  Check(in.zp == nullptr || Bytes(in.z.dtype, Count(in.c.zp.dims)) <= kMaxBytes);
  *y_type = t;
  *needed = want;
  return true;
}

template <class Ops>
void FuzzOp(const Inputs& in, const typename Ops::Attrs& a) {
  const fuzz::FuzzCall& c = in.c;
  const fuzz::HostileCall& e = c.ext;
  const bool hostile = c.flags & 0x80;
  const fuzz::Entry entry = hostile ? e.entry : fuzz::Entry::kPlain;
  int32_t y_type = 0;
  u128 needed = 0;
  const bool info_ok = InfoAccepts<Ops>(in, a, &y_type, &needed);
  if (entry == fuzz::Entry::kInfo) return;
  const size_t y_offset = hostile ? (e.misalign >> 3) & 7 : 0;
  const bool null_y = c.flags & 4;

  if (entry == fuzz::Entry::kRange) {
    if (in.truncated[1] || in.truncated[2]) return;  // a valid range may read any scale
    // first/count: raw int64 (wide bit 7), else brought into [0, n].
    const uint64_t n64 = in.n > static_cast<u128>(INT64_MAX) ? static_cast<uint64_t>(INT64_MAX) : static_cast<uint64_t>(in.n);
    int64_t first = e.first, count = e.count;
    if (!(e.wide & 0x80)) {
      first = static_cast<int64_t>(static_cast<uint64_t>(first) % (n64 + 1));
      count = static_cast<int64_t>(static_cast<uint64_t>(count) % (n64 - static_cast<uint64_t>(first) + 1));
    }
    const u128 slice = count > 0 ? static_cast<u128>(count) : 0;
    const int32_t yt = info_ok ? y_type : QLINEAR_DTYPE_FLOAT;
    Blob y(null_y ? 0 : Claim(Bytes(yt, slice), c), y_offset, kSentinel);
    // x points at element `first`: the slice itself, count elements (from the payload's start).
    const size_t xs = Capped(Bytes(in.x.dtype, slice), kPayloadCap);
    std::vector<uint8_t> xbytes(xs);
    for (size_t k = 0; k < xs; ++k) xbytes[k] = static_cast<uint8_t>(c.x.bytes.empty() ? k : c.x.bytes[k % c.x.bytes.size()]);
    Blob xb(xbytes, e.misalign & 7);
    qlinear_tensor x = in.x;
    x.data = (c.flags & 2) ? nullptr : xb.data();
    qlinear_status st;
    {
      CallerMode mode(e.fp_mode);
      st = Ops::RunRange(&x, &in.s, in.zp, &a, first, count, null_y ? nullptr : y.data(), y.size());
    }
    if (st != QLINEAR_OK) return CheckRejected(st, {&y});
    if (!info_ok && count == 0 && x.data == nullptr) {
      // An empty slice needs no data; x's description must still be one the call accepts.
      qlinear_tensor described = in.x;
      described.data = xb.data();
      Check(InfoAccepts<Ops>(Inputs{in.c, described, in.s, in.z, in.zp, in.n, {}}, a, &y_type, &needed));
      return;
    }
    Check(info_ok);
    Check(static_cast<u128>(y.size()) >= Bytes(yt, slice));
    typename Ops::Plan p;
    Check(Ops::MakePlan(Inputs{in.c, x, in.s, in.z, in.zp, in.n, {}}, a, &p) == QLINEAR_OK);
    p.begin = first;
    p.end = first + count;
    std::vector<uint8_t> want(static_cast<size_t>(Bytes(yt, slice)) + 1, 0);
    Ops::Reference(p, want.data(), first, first + count);
    Check(count == 0 || std::memcmp(y.data(), want.data(), static_cast<size_t>(Bytes(yt, slice))) == 0);
    return;
  }

  Blob y(null_y ? 0 : Claim(needed, c), y_offset, kSentinel);
  qlinear_status st;
  Runner runner;
  if (entry == fuzz::Entry::kParallel) {
    qlinear_parallel_options o;
    qlinear_parallel_options_init(&o);
    o.max_threads = e.max_threads;
    o.min_elements_per_task = e.min_elements_per_task;
    if (e.runner & 2) {  // small values, so that calls split
      o.max_threads = static_cast<int32_t>(static_cast<uint32_t>(e.max_threads) % 9);
      o.min_elements_per_task = static_cast<int64_t>(static_cast<uint64_t>(e.min_elements_per_task) % 3000);
    }
    const bool openmp = (e.runner & 1) && o.max_threads > 0 && o.max_threads <= 4;
    if (!openmp) {
      o.parallel_for = Runner::ParallelFor;
      o.runner_context = &runner;
    }
    {
      CallerMode mode(e.fp_mode);
      st = Ops::RunParallel(&in.x, &in.s, in.zp, &a, null_y ? nullptr : y.data(), y.size(), &o);
    }
    // A thread per task at most, and never more tasks than max_threads (64 when 0).
    const int64_t cap = o.max_threads > 0 ? o.max_threads : 64;
    Check(runner.calls <= 1 && runner.tasks <= cap);
  } else {
    CallerMode mode(hostile ? e.fp_mode : 0);
    st = Ops::Run(&in.x, &in.s, in.zp, &a, null_y ? nullptr : y.data(), y.size());
  }
  Check(info_ok || st != QLINEAR_OK);
  if (st != QLINEAR_OK) return CheckRejected(st, {&y});
  Check(static_cast<u128>(y.size()) >= needed);
  typename Ops::Plan p;
  Check(Ops::MakePlan(in, a, &p) == QLINEAR_OK);
  std::vector<uint8_t> want(static_cast<size_t>(needed) + 1, 0);
  Ops::Reference(p, want.data(), 0, p.layout.count);
  Check(needed == 0 || std::memcmp(y.data(), want.data(), static_cast<size_t>(needed)) == 0);
}

// Masked forward and backward (QuantizeLinear only).
void FuzzTraining(const Inputs& in, const qlinear_quantize_attrs& a, fuzz::Reader* r) {
  const fuzz::FuzzCall& c = in.c;
  const fuzz::HostileCall& e = c.ext;
  int32_t y_type = 0;
  u128 needed = 0;
  const bool info_ok = InfoAccepts<QOps>(in, a, &y_type, &needed);
  const size_t out_offset = (e.misalign >> 3) & 7;
  const u128 mask_needed = (in.n + 7) / 8;
  Blob mask(Claim(mask_needed, c), out_offset, kSentinel);
  if (e.entry == fuzz::Entry::kMasked) {
    Blob y(Claim(needed, c), out_offset, kSentinel);
    qlinear_status st;
    {
      CallerMode mode(e.fp_mode);
      st = qlinear_quantize_linear_masked(&in.x, &in.s, in.zp, &a, (c.flags & 4) ? nullptr : y.data(), y.size(),
                                          mask.data(), mask.size());
    }
    if (st != QLINEAR_OK) return CheckRejected(st, {&y, &mask});
    Check(info_ok && y.size() >= needed && mask.size() >= mask_needed);
    QuantizePlan p;
    Check(PlanQuantize(&in.x, &in.s, in.zp, &a, &p) == QLINEAR_OK);
    std::vector<uint8_t> want(static_cast<size_t>(needed) + 1, 0);
    QuantizeReference(p, want.data(), 0, p.layout.count);
    Check(needed == 0 || std::memcmp(y.data(), want.data(), static_cast<size_t>(needed)) == 0);
    for (int64_t i = 0; i < p.layout.count; ++i) {
      Check(((mask.data()[i >> 3] >> (i & 7)) & 1) == (ClampedElement(p, i) ? 1 : 0));
    }
    return;
  }
  // Backward: dy in dy_dtype (float32/float16/bfloat16 by the low bits of a small code, else raw).
  int32_t dyt = e.dy_dtype;
  if (static_cast<uint32_t>(dyt) < 256) dyt = dyt % 3 == 0 ? QLINEAR_DTYPE_FLOAT : dyt % 3 == 1 ? QLINEAR_DTYPE_FLOAT16 : QLINEAR_DTYPE_BFLOAT16;
  const u128 dy_bytes = Bytes(dyt, in.n);
  std::vector<uint8_t> dy_payload;
  r->Fill(&dy_payload, Capped(dy_bytes, kPayloadCap));
  Blob dy(dy_payload, e.misalign & 7);
  const qlinear_tensor tdy{dyt, in.x.rank, in.x.shape, dy.data()};
  Blob dx(Claim(dy_bytes, c), out_offset, kSentinel);
  float lda;
  std::memcpy(&lda, &e.lda_bits, 4);
  const bool use_mask = e.runner & 1;
  if (use_mask) {  // the mask of the masked forward pass (same rules)
    Blob y(Claim(needed, c), 0, 0);
    if (qlinear_quantize_linear_masked(&in.x, &in.s, in.zp, &a, y.data(), y.size(), mask.data(), mask.size()) !=
        QLINEAR_OK) {
      return;
    }
  }
  qlinear_status st;
  {
    CallerMode mode(e.fp_mode);
    st = qlinear_quantize_linear_backward(&in.x, &in.s, in.zp, &a, &tdy, lda, use_mask ? mask.data() : nullptr,
                                          mask.size(), (c.flags & 4) ? nullptr : dx.data(), dx.size());
  }
  if (st != QLINEAR_OK) return CheckRejected(st, {&dx});
  Check(info_ok && dx.size() >= dy_bytes && dy_bytes <= kMaxBytes);
  QuantizePlan p;
  Check(PlanQuantize(&in.x, &in.s, in.zp, &a, &p) == QLINEAR_OK);
  std::vector<uint8_t> want(static_cast<size_t>(dy_bytes) + 1, 0);
  BackwardArgs b;
  b.dy_type = static_cast<DType>(dyt);
  b.dy = dy.data();
  b.lda = lda;
  b.dx = want.data();
  BackwardReference(p, b, 0, p.layout.count);
  Check(dy_bytes == 0 || std::memcmp(dx.data(), want.data(), static_cast<size_t>(dy_bytes)) == 0);
}

void FuzzDynamic(const Inputs& in) {
  const fuzz::FuzzCall& c = in.c;
  const bool hostile = c.flags & 0x80;
  Blob y((c.flags & 4) ? 0 : Claim(in.n, c), hostile ? (c.ext.misalign >> 3) & 7 : 0, kSentinel);
  float scale = 0;
  uint8_t zero = 0;
  qlinear_status st;
  {
    CallerMode mode(hostile ? c.ext.fp_mode : 0);
    st = qlinear_dynamic_quantize_linear(&in.x, (c.flags & 4) ? nullptr : y.data(), y.size(), &scale, &zero);
  }
  if (st != QLINEAR_OK) return CheckRejected(st, {&y});
  Check(in.x.dtype == QLINEAR_DTYPE_FLOAT && in.n > 0 && y.size() >= in.n && !in.truncated[0]);
  // The reference: the range of x (read unaligned), then QuantizeLinear with that scale/zero point.
  const size_t n = static_cast<size_t>(in.n);
  std::vector<float> xs(n);
  std::memcpy(xs.data(), in.x.data, n * 4);
  float want_scale;
  uint8_t want_zp;
  DynamicScaleReference(xs.data(), static_cast<int64_t>(n), &want_scale, &want_zp);
  Check(std::memcmp(&scale, &want_scale, 4) == 0 && zero == want_zp);
  const qlinear_tensor ts{QLINEAR_DTYPE_FLOAT, 0, nullptr, &want_scale};
  const qlinear_tensor tz{QLINEAR_DTYPE_UINT8, 0, nullptr, &want_zp};
  const qlinear_tensor tx{QLINEAR_DTYPE_FLOAT, in.x.rank, in.x.shape, xs.data()};
  QuantizePlan p;
  Check(PlanQuantize(&tx, &ts, &tz, nullptr, &p) == QLINEAR_OK);
  std::vector<uint8_t> want(n + 1);
  QuantizeReference(p, want.data(), 0, static_cast<int64_t>(n));
  Check(std::memcmp(y.data(), want.data(), n) == 0);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::Reader r(data, size);
  fuzz::FuzzCall c;
  c.op = r.U8() % 3;
  c.opset = r.U8();
  c.axis = static_cast<int8_t>(r.U8());
  c.block_size = static_cast<int8_t>(r.U8());
  c.output_dtype = r.U8();
  c.saturate = r.U8();
  c.precision = r.U8();
  c.flags = r.U8();
  r.Tensor(&c.x);
  r.Tensor(&c.scale);
  r.Tensor(&c.zp);
  const bool hostile = c.flags & 0x80;
  fuzz::HostileCall& e = c.ext;
  if (hostile) r.Extension(&e);
  fuzz::FuzzTensor* tensors[3] = {&c.x, &c.scale, &c.zp};
  Inputs in{c, {}, {}, {}, nullptr, 0, {false, false, false}};
  std::unique_ptr<Blob> blobs[3];
  for (int k = 0; k < 3; ++k) {
    fuzz::FuzzTensor& t = *tensors[k];
    if (hostile && (e.huge[k] & 0x80) && !t.dims.empty()) t.dims[(e.huge[k] & 7) % t.dims.size()] = e.huge_dim[k];
    const u128 bytes = Bytes(t.dtype, Count(t.dims));
    in.truncated[k] = bytes > kPayloadCap;
    r.Fill(&t.bytes, Capped(bytes, kPayloadCap));
    const size_t offset = !hostile ? 0 : k == 0 ? (e.misalign & 7) : (e.misalign >> 6);
    blobs[k].reset(new Blob(t.bytes, offset));
  }
  if (in.truncated[2] && (c.flags & 1)) return 0;  // zero points are read while validating
  in.x = qlinear_tensor{c.x.dtype, static_cast<int32_t>(c.x.dims.size()), c.x.dims.data(),
                        (c.flags & 2) ? nullptr : blobs[0]->data()};
  in.s = qlinear_tensor{c.scale.dtype, static_cast<int32_t>(c.scale.dims.size()), c.scale.dims.data(), blobs[1]->data()};
  in.z = qlinear_tensor{c.zp.dtype, static_cast<int32_t>(c.zp.dims.size()), c.zp.dims.data(), blobs[2]->data()};
  in.zp = (c.flags & 1) ? &in.z : nullptr;
  in.n = Count(c.x.dims);
  const int32_t opset = c.opset % 4 == 0 ? 0 : c.opset;  // often the newest, sometimes anything

  if (c.op == 2) {
    FuzzDynamic(in);
    return 0;
  }
  if (c.op == 0) {
    qlinear_quantize_attrs a;
    qlinear_quantize_attrs_init(&a);
    a.opset = hostile && (e.wide & 1) ? e.opset : opset;
    a.axis = hostile && (e.wide & 2) ? e.axis : c.axis;
    a.block_size = hostile && (e.wide & 4) ? e.block_size : c.block_size;
    a.output_dtype = hostile && (e.wide & 8) ? e.output_dtype : c.output_dtype % 32;
    a.saturate = hostile && (e.wide & 16) ? e.saturate : c.saturate & 1;
    a.precision = hostile && (e.wide & 32) ? e.precision : c.precision % 20;
    if (hostile && (e.entry == fuzz::Entry::kMasked || e.entry == fuzz::Entry::kBackward)) {
      FuzzTraining(in, a, &r);
    } else {
      FuzzOp<QOps>(in, a);
    }
  } else {
    qlinear_dequantize_attrs a;
    qlinear_dequantize_attrs_init(&a);
    a.opset = hostile && (e.wide & 1) ? e.opset : opset;
    a.axis = hostile && (e.wide & 2) ? e.axis : c.axis;
    a.block_size = hostile && (e.wide & 4) ? e.block_size : c.block_size;
    a.output_dtype = hostile && (e.wide & 8) ? e.output_dtype : c.output_dtype % 32;
    a.reserved = hostile && (e.wide & 64) ? e.reserved : 0;
    FuzzOp<DQOps>(in, a);
  }
  return 0;
}
