// One-liners (per-tensor int8, packed int4), blocked int4 through a view, and an error.
#include <qlinear/qlinear.hpp>

#include <cstdio>
#include <vector>

int main() {
  using qlinear::DataType;
  const std::vector<float> x{-1.0f, -0.25f, 0.0f, 0.35f, 1.0f, 2.5f, 3.0f, -4.0f};
  std::vector<int8_t> q8(x.size());
  std::vector<uint8_t> q4(qlinear::StorageBytes(DataType::kInt4, x.size()));  // 2 per byte
  qlinear::Status s = qlinear::QuantizeLinear(x.data(), x.size(), 0.1f, 0, q8.data());
  if (s) s = qlinear::QuantizeLinearTo(DataType::kInt4, x.data(), x.size(), 0.5f, 0, q4.data(), q4.size());

  // x as 2x4, blocks of 2 along the last axis: two scales per row.
  const std::vector<float> scales{0.25f, 0.5f, 1.0f, 2.0f};
  qlinear::QuantizeAttrs attrs;
  attrs.block_size = 2;
  attrs.output_dtype = DataType::kInt4;
  const qlinear::TensorView tx(DataType::kFloat, {2, 4}, x.data());
  std::vector<uint8_t> blocked(4);
  if (s) s = qlinear::QuantizeLinear(tx, {DataType::kFloat, {2, 2}, scales.data()}, nullptr, attrs,
                                     blocked.data(), blocked.size());
  if (!s) return std::fprintf(stderr, "%s\n", s.message().c_str()), 1;
  std::printf("int8 %d %d, int4 %02x, blocked %02x (target %s)\n", q8[1], q8[3], q4[0], blocked[0],
              qlinear::ActiveTarget());

  // A wrong scale shape is rejected with a message naming the argument and the rule.
  s = qlinear::QuantizeLinear(tx, {DataType::kFloat, {2, 3}, x.data()}, nullptr, attrs,
                              blocked.data(), blocked.size());
  std::printf("rejected: %s\n", s.message().c_str());
  return s.ok() || q8[1] != -2 || q4[0] != 0x0E ? 1 : 0;
}
