// The API fuzzer's input format: a compact call description followed by payload bytes. The
// same code writes seeds (`qlinear fuzz-seed`, from ONNX node tests) and reads fuzz inputs.
//
// Header: op, opset, axis, block_size, output_dtype, saturate, precision, flags (one byte each),
// then per tensor (x, scale, zero point) dtype, rank and one byte per dimension (0..39, or from
// 0xC0 on a power of two up to 2^63). With flags bit 7 an extension follows (HostileCall below:
// entry point, attribute values over their whole range, huge dimensions, odd addresses, range
// and thread arguments, the caller's FP mode).
// The rest of the input, cycled, is the tensors' payload.
#ifndef QLINEAR_FUZZ_FUZZ_INPUT_H_
#define QLINEAR_FUZZ_FUZZ_INPUT_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace qlinear {
namespace fuzz {

struct FuzzTensor {
  int32_t dtype = 1;
  std::vector<int64_t> dims;  // each 0..39 or a power of two (Reader::Tensor), or a huge one
  std::vector<uint8_t> bytes;
};

// Entry points of the extension.
enum class Entry : uint8_t { kPlain, kRange, kParallel, kMasked, kBackward, kInfo, kCount };

// Attribute values across their whole range: a field is used when its bit in `wide` is set.
struct HostileCall {
  Entry entry = Entry::kPlain;
  uint8_t wide = 0;  // bits: 0 opset, 1 axis, 2 block_size, 3 output_dtype, 4 saturate, 5 precision, 6 reserved
  int32_t opset = 0, output_dtype = 0, saturate = 1, precision = 0, reserved = 0;
  int64_t axis = 1, block_size = 0;
  // Per tensor (x, scale, zero point): 0, or 0x80 | dimension index (mod rank) that becomes
  // huge_dim[k]: 2^exponent + adjust (adjust in [-2, 1]), or the raw int64 when bit 6 is set.
  uint8_t huge[3] = {0, 0, 0};
  int64_t huge_dim[3] = {0, 0, 0};
  uint8_t misalign = 0;     // bits 0-2: x, 3-5: y (and dx, mask), 6-7: scale and zero point
  uint8_t short_by = 0;     // the output capacity is this much below what the call needs
  int32_t max_threads = 0;  // parallel
  int64_t min_elements_per_task = 0;
  uint8_t runner = 0;       // parallel: 0 the harness's runner, 1 OpenMP (small max_threads only)
  int64_t first = 0, count = 0;  // range
  uint32_t lda_bits = 0x3F800000u;  // backward
  int32_t dy_dtype = 1;
  uint8_t fp_mode = 0;      // the caller's floating-point mode during the call (api_fuzzer.cc)
};

// The header's tensor shapes: a rank byte is taken mod kMaxRank + 1, a dimension byte below 0xC0
// mod kMaxDim + 1.
constexpr int kMaxRank = 6;
constexpr int kMaxDim = 39;

struct FuzzCall {
  uint8_t op = 0;  // 0 QuantizeLinear, 1 DequantizeLinear, 2 DynamicQuantizeLinear
  uint8_t opset = 25;
  int8_t axis = 1;
  int8_t block_size = 0;
  uint8_t output_dtype = 0, saturate = 1, precision = 0;
  // bit 0: zero point present; bit 1: NULL x data; bit 2: NULL y; bit 3: short y; bit 7: extension
  uint8_t flags = 0;
  FuzzTensor x, scale, zp;
  HostileCall ext;  // read and written when flags bit 7 is set
};

namespace detail {
template <class T>
void PutLE(T v, std::string* out) {
  for (size_t k = 0; k < sizeof(T); ++k) out->push_back(static_cast<char>(static_cast<uint64_t>(v) >> (8 * k)));
}
}  // namespace detail

inline void PutTensorHeader(const FuzzTensor& t, std::string* out) {
  out->push_back(static_cast<char>(t.dtype));
  out->push_back(static_cast<char>(t.dims.size()));
  for (int64_t d : t.dims) out->push_back(static_cast<char>(d));
}

inline void PutExtension(const HostileCall& e, std::string* out) {
  using detail::PutLE;
  out->push_back(static_cast<char>(e.entry));
  out->push_back(static_cast<char>(e.wide));
  if (e.wide & 1) PutLE(e.opset, out);
  if (e.wide & 2) PutLE(e.axis, out);
  if (e.wide & 4) PutLE(e.block_size, out);
  if (e.wide & 8) PutLE(e.output_dtype, out);
  if (e.wide & 16) PutLE(e.saturate, out);
  if (e.wide & 32) PutLE(e.precision, out);
  if (e.wide & 64) PutLE(e.reserved, out);
  for (int k = 0; k < 3; ++k) {
    const uint8_t h = (e.huge[k] & 0x80) ? static_cast<uint8_t>(e.huge[k] | 0x40) : e.huge[k];
    out->push_back(static_cast<char>(h));
    if (h & 0x80) PutLE(e.huge_dim[k], out);
  }
  out->push_back(static_cast<char>(e.misalign));
  out->push_back(static_cast<char>(e.short_by));
  out->push_back(static_cast<char>(e.fp_mode));
  switch (e.entry) {
    case Entry::kRange:
      PutLE(e.first, out);
      PutLE(e.count, out);
      break;
    case Entry::kParallel:
      PutLE(e.max_threads, out);
      PutLE(e.min_elements_per_task, out);
      out->push_back(static_cast<char>(e.runner));
      break;
    case Entry::kBackward:
      PutLE(e.lda_bits, out);
      PutLE(e.dy_dtype, out);
      break;
    default:
      break;
  }
}

// Header, then the payloads of x, scale and zero point in order. Each dimension is written as
// its byte: callers write only ranks up to 6 and dimensions up to 39 (qlinear fuzz-seed skips
// other cases), which read back as themselves.
inline std::string Encode(const FuzzCall& c) {
  std::string out;
  for (uint8_t b : {c.op, c.opset, static_cast<uint8_t>(c.axis), static_cast<uint8_t>(c.block_size),
                    c.output_dtype, c.saturate, c.precision, c.flags}) {
    out.push_back(static_cast<char>(b));
  }
  PutTensorHeader(c.x, &out);
  PutTensorHeader(c.scale, &out);
  PutTensorHeader(c.zp, &out);
  if (c.flags & 0x80) PutExtension(c.ext, &out);
  for (const FuzzTensor* t : {&c.x, &c.scale, &c.zp}) out.append(t->bytes.begin(), t->bytes.end());
  return out;
}

class Reader {
 public:
  Reader(const uint8_t* d, size_t n) : d_(d), n_(n) {}
  uint8_t U8() { return i_ < n_ ? d_[i_++] : 0; }
  template <class T>
  T LE() {
    uint64_t v = 0;
    for (size_t k = 0; k < sizeof(T); ++k) v |= static_cast<uint64_t>(U8()) << (8 * k);
    return static_cast<T>(v);
  }
  // A dimension byte is its value mod 40, or from 0xC0 on 2^(byte & 63): one byte away from a
  // shape whose element count fits while a byte count of some input or output overflows.
  void Tensor(FuzzTensor* t) {
    t->dtype = U8();
    const int rank = U8() % (kMaxRank + 1);
    t->dims.clear();
    for (int k = 0; k < rank; ++k) {
      const uint8_t b = U8();
      t->dims.push_back(b >= 0xC0 ? static_cast<int64_t>(uint64_t{1} << (b & 63)) : b % (kMaxDim + 1));
    }
  }
  void Extension(HostileCall* e) {
    e->entry = static_cast<Entry>(U8() % static_cast<uint8_t>(Entry::kCount));
    e->wide = U8();
    if (e->wide & 1) e->opset = LE<int32_t>();
    if (e->wide & 2) e->axis = LE<int64_t>();
    if (e->wide & 4) e->block_size = LE<int64_t>();
    if (e->wide & 8) e->output_dtype = LE<int32_t>();
    if (e->wide & 16) e->saturate = LE<int32_t>();
    if (e->wide & 32) e->precision = LE<int32_t>();
    if (e->wide & 64) e->reserved = LE<int32_t>();
    for (int k = 0; k < 3; ++k) {
      e->huge[k] = U8();
      if (!(e->huge[k] & 0x80)) continue;
      if (e->huge[k] & 0x40) {
        e->huge_dim[k] = LE<int64_t>();
      } else {  // 2^(1..63) + adjust: the sizes where byte counts wrap
        const uint8_t b = U8();
        const int exponent = 1 + b % 63;
        const int64_t adjust = static_cast<int64_t>(b >> 6) - 2;
        e->huge_dim[k] = static_cast<int64_t>((uint64_t{1} << exponent) + static_cast<uint64_t>(adjust));
      }
    }
    e->misalign = U8();
    e->short_by = U8();
    e->fp_mode = U8();
    switch (e->entry) {
      case Entry::kRange:
        e->first = LE<int64_t>();
        e->count = LE<int64_t>();
        break;
      case Entry::kParallel:
        e->max_threads = LE<int32_t>();
        e->min_elements_per_task = LE<int64_t>();
        e->runner = U8();
        break;
      case Entry::kBackward:
        e->lda_bits = LE<uint32_t>();
        e->dy_dtype = LE<int32_t>();
        break;
      default:
        break;
    }
  }
  // Payload: the remaining input, cycled, or zeros when there is none.
  void Fill(std::vector<uint8_t>* b, size_t n) {
    b->assign(n, 0);
    for (size_t k = 0; k < n && n_ > 0; ++k) b->at(k) = d_[(i_ + k) % n_];
    if (n_ > 0) i_ = (i_ + n) % n_;
  }

 private:
  const uint8_t* d_;
  size_t n_, i_ = 0;
};

}  // namespace fuzz
}  // namespace qlinear

#endif  // QLINEAR_FUZZ_FUZZ_INPUT_H_
