// Per-tensor uint8, then blocked int4 with an error check, through the C++ layer.
#include <qlinear/qlinear.hpp>

#include <cstdio>
#include <vector>

int main() {
  const std::vector<float> x{-1.0f, -0.5f, 0.0f, 0.5f, 1.0f, 2.5f};
  std::vector<uint8_t> y(x.size());
  qlinear::Status s = qlinear::QuantizeLinear<uint8_t>(x.data(), x.size(), 0.01f, 128, y.data());
  if (!s) {
    std::fprintf(stderr, "%s\n", s.message().c_str());
    return 1;
  }
  std::printf("uint8: %d %d %d %d %d %d (target %s)\n", y[0], y[1], y[2], y[3], y[4], y[5],
              qlinear::ActiveTarget());

  // Blocked int4: blocks of 4 along the last axis of a 2x6 tensor, so ceil(6/4) = 2 scales per row.
  const std::vector<int64_t> shape{2, 6}, scale_shape{2, 2};
  std::vector<float> data(12);
  for (size_t i = 0; i < data.size(); ++i) data[i] = 0.25f * static_cast<float>(i) - 1.0f;
  const std::vector<float> scales{0.25f, 0.5f, 0.25f, 0.5f};
  qlinear::QuantizeAttrs attrs;
  attrs.block_size = 4;
  attrs.output_dtype = static_cast<int32_t>(qlinear::DataType::kInt4);
  std::vector<uint8_t> packed(6);  // 12 int4 values, two per byte
  s = qlinear::QuantizeLinear({qlinear::DataType::kFloat, shape, data.data()},
                              {qlinear::DataType::kFloat, scale_shape, scales.data()}, nullptr,
                              attrs, packed.data(), packed.size());
  if (!s) {
    std::fprintf(stderr, "%s\n", s.message().c_str());
    return 1;
  }
  std::printf("int4 bytes: %02x %02x %02x %02x %02x %02x\n", packed[0], packed[1], packed[2],
              packed[3], packed[4], packed[5]);

  // A wrong scale shape is rejected with a message naming the argument and the rule.
  const std::vector<int64_t> bad_shape{2, 3};
  s = qlinear::QuantizeLinear({qlinear::DataType::kFloat, shape, data.data()},
                              {qlinear::DataType::kFloat, bad_shape, data.data()}, nullptr, attrs,
                              packed.data(), packed.size());
  std::printf("rejected: %s\n", s.message().c_str());
  return s.ok() ? 1 : 0;
}
