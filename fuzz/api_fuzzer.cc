// API fuzzer: random calls (op, opset, attributes, ranks 0-6, shapes incl. zeros, dtypes,
// scale/zero-point shapes, buffer sizes, NULL pointers) into the C ABI. A call must succeed or
// return an error with a message; nothing may be written past y_bytes (the buffer is exactly
// that long, so ASan sees any overrun); a rejected call leaves y untouched; a successful one
// equals the scalar reference.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "fuzz/fuzz_input.h"
#include "lib/dtype.h"
#include "lib/plan.h"
#include "lib/reference.h"
#include "qlinear/qlinear.h"

using namespace qlinear;

namespace {

size_t Count(const fuzz::FuzzTensor& t) {
  size_t n = 1;
  for (int64_t d : t.dims) n *= static_cast<size_t>(d);
  return n;
}

size_t PayloadBytes(const fuzz::FuzzTensor& t) {
  const DTypeInfo* info = FindDType(t.dtype);
  const int bits = info ? info->bits : 8;
  const size_t n = Count(t);
  return bits >= 8 ? n * static_cast<size_t>(bits / 8) : (n * static_cast<size_t>(bits) + 7) / 8;
}

// Aborts (a libFuzzer crash with this input saved) naming the rule that failed.
#define Check(ok) CheckAt((ok), #ok, __LINE__)
void CheckAt(bool ok, const char* what, int line) {
  if (ok) return;
  std::fprintf(stderr, "api_fuzzer: check failed at line %d: %s\n", line, what);
  std::abort();
}

// One Q or DQ call: the output is exactly y_bytes long (+1 spare byte to catch an overrun);
// a rejected call has a message and leaves y untouched; an accepted one equals the reference.
template <class Plan, class Attrs, class InfoFn, class RunFn, class PlanFn, class RefFn>
void CheckCall(const qlinear_tensor& x, const qlinear_tensor& s, const qlinear_tensor* zp,
               const Attrs& a, InfoFn info, RunFn run, PlanFn plan_fn, RefFn reference, uint8_t flags) {
  size_t need = 0;
  const qlinear_status st = info(&x, &s, zp, &a, nullptr, &need);
  const size_t cap = (flags & 8) && need > 0 ? need - 1 : need;
  std::vector<uint8_t> y(cap + 1, 0x5A);
  const qlinear_status st2 = run(&x, &s, zp, &a, (flags & 4) ? nullptr : y.data(), cap);
  Check(st == QLINEAR_OK || st2 != QLINEAR_OK);
  Check(y[cap] == 0x5A);
  if (st2 != QLINEAR_OK) {
    Check(qlinear_last_error()[0] != '\0');
    for (uint8_t b : y) Check(b == 0x5A);
    return;
  }
  Plan plan;
  Check(plan_fn(&x, &s, zp, &a, &plan) == QLINEAR_OK);
  std::vector<uint8_t> want(need + 1, 0);
  reference(plan, want.data(), 0, plan.layout.count);
  Check(need == 0 || std::memcmp(y.data(), want.data(), need) == 0);
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
  if (Count(c.x) > 50000 || Count(c.scale) > 50000 || Count(c.zp) > 50000) return 0;
  r.Fill(&c.x.bytes, PayloadBytes(c.x));
  r.Fill(&c.scale.bytes, PayloadBytes(c.scale));
  r.Fill(&c.zp.bytes, PayloadBytes(c.zp));

  const qlinear_tensor x{c.x.dtype, static_cast<int32_t>(c.x.dims.size()), c.x.dims.data(),
                         (c.flags & 2) ? nullptr : c.x.bytes.data()};
  const qlinear_tensor s{c.scale.dtype, static_cast<int32_t>(c.scale.dims.size()), c.scale.dims.data(), c.scale.bytes.data()};
  const qlinear_tensor z{c.zp.dtype, static_cast<int32_t>(c.zp.dims.size()), c.zp.dims.data(), c.zp.bytes.data()};
  const qlinear_tensor* zp = (c.flags & 1) ? &z : nullptr;
  const int32_t opset = c.opset % 4 == 0 ? 0 : c.opset;  // often the newest, sometimes anything

  if (c.op == 2) {
    const size_t n = Count(c.x);
    std::vector<uint8_t> y((c.flags & 8) && n > 0 ? n - 1 : n, 0x5A);
    float scale = 0;
    uint8_t zero = 0;
    const qlinear_status st = qlinear_dynamic_quantize_linear(&x, (c.flags & 4) ? nullptr : y.data(), y.size(), &scale, &zero);
    if (st != QLINEAR_OK) {
      Check(qlinear_last_error()[0] != '\0');
      for (uint8_t b : y) Check(b == 0x5A);
    }
    return 0;
  }
  if (c.op == 0) {
    qlinear_quantize_attrs a;
    qlinear_quantize_attrs_init(&a);
    a.opset = opset;
    a.axis = c.axis;
    a.block_size = c.block_size;
    a.output_dtype = c.output_dtype % 32;
    a.saturate = c.saturate & 1;
    a.precision = c.precision % 20;
    CheckCall<QuantizePlan>(x, s, zp, a, qlinear_quantize_output_info, qlinear_quantize_linear,
                            PlanQuantize, QuantizeReference, c.flags);
  } else {
    qlinear_dequantize_attrs a;
    qlinear_dequantize_attrs_init(&a);
    a.opset = opset;
    a.axis = c.axis;
    a.block_size = c.block_size;
    a.output_dtype = c.output_dtype % 32;
    CheckCall<DequantizePlan>(x, s, zp, a, qlinear_dequantize_output_info, qlinear_dequantize_linear,
                              PlanDequantize, DequantizeReference, c.flags);
  }
  return 0;
}
