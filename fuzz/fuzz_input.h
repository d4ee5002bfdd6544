// The API fuzzer's input format: a compact call description followed by payload bytes. The
// same code writes seeds (`qlinear fuzz-seed`, from ONNX node tests) and reads fuzz inputs.
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
  std::vector<int64_t> dims;  // each 0..255
  std::vector<uint8_t> bytes;
};

struct FuzzCall {
  uint8_t op = 0;  // 0 QuantizeLinear, 1 DequantizeLinear, 2 DynamicQuantizeLinear
  uint8_t opset = 25;
  int8_t axis = 1;
  int8_t block_size = 0;
  uint8_t output_dtype = 0, saturate = 1, precision = 0;
  uint8_t flags = 0;  // bit 0: zero point present; bit 1: NULL x data; bit 2: NULL y; bit 3: short y
  FuzzTensor x, scale, zp;
};

inline void PutTensorHeader(const FuzzTensor& t, std::string* out) {
  out->push_back(static_cast<char>(t.dtype));
  out->push_back(static_cast<char>(t.dims.size()));
  for (int64_t d : t.dims) out->push_back(static_cast<char>(d));
}

// Header, then the payloads of x, scale and zero point in order.
inline std::string Encode(const FuzzCall& c) {
  std::string out;
  for (uint8_t b : {c.op, c.opset, static_cast<uint8_t>(c.axis), static_cast<uint8_t>(c.block_size),
                    c.output_dtype, c.saturate, c.precision, c.flags}) {
    out.push_back(static_cast<char>(b));
  }
  PutTensorHeader(c.x, &out);
  PutTensorHeader(c.scale, &out);
  PutTensorHeader(c.zp, &out);
  for (const FuzzTensor* t : {&c.x, &c.scale, &c.zp}) out.append(t->bytes.begin(), t->bytes.end());
  return out;
}

class Reader {
 public:
  Reader(const uint8_t* d, size_t n) : d_(d), n_(n) {}
  uint8_t U8() { return i_ < n_ ? d_[i_++] : 0; }
  void Tensor(FuzzTensor* t) {
    t->dtype = U8();
    const int rank = U8() % 7;
    t->dims.clear();
    for (int k = 0; k < rank; ++k) t->dims.push_back(U8() % 40);
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
