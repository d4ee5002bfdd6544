// The C++ layer as a C++14 program built without exceptions (-fno-exceptions), with
// std::vector's bounds annotated for ASan (_GLIBCXX_SANITIZE_VECTOR, set for this whole program
// only): it compiles, and its one-liners and views behave. Returns non-zero on a failed check.
#include <cstdint>
#include <cstdio>
#include <vector>

#include "qlinear/qlinear.hpp"

namespace {

int failures = 0;

void Check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "FAILED: %s\n", what);
    ++failures;
  }
}

}  // namespace

int main() {
  using qlinear::DataType;
  using qlinear::Status;
  using qlinear::TensorView;
  const float x[4] = {-1.0f, 0.25f, 2.0f, 100.0f};
  int8_t y[4] = {};
  Check(qlinear::QuantizeLinear(x, 4, 0.5f, 1, y).ok(), "QuantizeLinear");
  Check(y[0] == -1 && y[1] == 1 && y[2] == 5 && y[3] == 127, "QuantizeLinear values");
  float back[4] = {};
  Check(qlinear::DequantizeLinear(y, 4, 0.5f, 1, back).ok() && back[2] == 2.0f, "DequantizeLinear");
  // Counts beyond INT64_MAX are named, in every one-liner.
  uint8_t u = 0;
  float s = 0.0f;
  const Status a = qlinear::QuantizeLinear(x, SIZE_MAX, 0.5f, 0, y);
  const Status b = qlinear::DynamicQuantizeLinear(x, SIZE_MAX, &u, &s, &u);
  Check(a.code() == QLINEAR_INVALID_ARGUMENT && a.message().find("n: ") == 0, "QuantizeLinear n");
  Check(b.code() == QLINEAR_INVALID_ARGUMENT && b.message().find("n: ") == 0, "DynamicQuantizeLinear n");
  // A view given its own dims back as borrowed ones keeps a copy: it once cleared the vector it
  // then read (under ASan with the annotations: container-overflow).
  std::vector<int64_t> deep(10, 1);
  deep[9] = 4;
  TensorView v(DataType::kFloat, deep, x);
  v = TensorView(DataType::kFloat, v.shape, v.rank, x);
  const TensorView copy = v;
  Check(v.rank == 10 && v.shape[9] == 4 && copy.shape[9] == 4, "deep dims reassigned from themselves");
  TensorView flat(DataType::kFloat, {1, 4}, x);
  flat = TensorView(DataType::kFloat, flat.shape, flat.rank, x);
  Check(flat.shape[1] == 4, "inline dims reassigned from themselves");
  const TensorView scale(DataType::kFloat, nullptr, 0, &x[1]);
  uint8_t q[4] = {};
  Check(qlinear::QuantizeLinear(copy, scale, nullptr, qlinear::QuantizeAttrs(), q, sizeof q).ok(),
        "QuantizeLinear through the reassigned view");
  return failures == 0 ? 0 : 1;
}
