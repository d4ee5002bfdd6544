// One quantization-aware training step for a weight vector: fake-quantize (QuantizeLinear with
// its clamp mask, then DequantizeLinear), take a loss gradient, and send it back through the
// quantizer with the straight-through estimator.
#include <qlinear/qlinear.hpp>

#include <cstdio>
#include <vector>

int main() {
  std::vector<float> w{0.12f, -0.5f, 0.9f, 2.0f, -3.0f};  // 2.0 and -3.0 saturate int8 at s = 0.01
  const std::vector<float> target{0.1f, -0.4f, 1.0f, 1.0f, -1.0f};
  const std::vector<int64_t> shape{static_cast<int64_t>(w.size())};
  const float scale = 0.01f;
  const int8_t zero_point = 0;
  const qlinear::TensorView s(qlinear::DataType::kFloat, nullptr, 0, &scale);
  const qlinear::TensorView zp(qlinear::DataType::kInt8, nullptr, 0, &zero_point);
  const qlinear::QuantizeAttrs attrs;

  // Forward: q = Q(w) and the clamp mask; w_hat = DQ(q).
  std::vector<int8_t> q(w.size());
  std::vector<uint8_t> mask((w.size() + 7) / 8);
  qlinear::Status st = qlinear::QuantizeLinearMasked({qlinear::DataType::kFloat, shape, w.data()}, s, &zp,
                                                     attrs, q.data(), q.size(), mask.data(), mask.size());
  std::vector<float> w_hat(w.size());
  if (st) st = qlinear::DequantizeLinear<int8_t>(q.data(), q.size(), scale, zero_point, w_hat.data());
  if (!st) {
    std::fprintf(stderr, "%s\n", st.message().c_str());
    return 1;
  }

  // Loss 0.5 * |w_hat - target|^2: dL/dw_hat = w_hat - target. DequantizeLinear's derivative
  // with respect to q is the scale; QuantizeLinear's backward divides by it again.
  std::vector<float> dq(w.size()), dw(w.size());
  for (size_t i = 0; i < w.size(); ++i) dq[i] = (w_hat[i] - target[i]) * scale;
  st = qlinear::QuantizeLinearBackward({qlinear::DataType::kFloat, shape, w.data()}, s, &zp, attrs,
                                       {qlinear::DataType::kFloat, shape, dq.data()}, /*lda=*/1.0f,
                                       mask.data(), mask.size(), dw.data(), dw.size() * sizeof(float));
  if (!st) {
    std::fprintf(stderr, "%s\n", st.message().c_str());
    return 1;
  }
  const float lr = 0.5f;
  for (size_t i = 0; i < w.size(); ++i) {
    std::printf("w %6.3f  q %4d  w_hat %6.3f  dw %7.4f\n", w[i], q[i], w_hat[i], dw[i]);
    w[i] -= lr * dw[i];
  }
  return dw[3] == 0.0f && dw[4] == 0.0f && dw[0] != 0.0f ? 0 : 1;  // saturated weights get no gradient
}
