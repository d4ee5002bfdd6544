// Reader fuzzer: arbitrary bytes through the decoder of `qlinear check` (tools/onnx_reader.h),
// as a TensorProto and as a ModelProto. A decode succeeds with a tensor that holds exactly its
// declared elements within the documented limit, or fails with a message; it never crashes,
// reads out of bounds or allocates beyond the limit (run under ASan with -malloc_limit_mb). A
// model whose node inputs all come from initializers is run through the C API.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "lib/dtype.h"
#include "tools/onnx_reader.h"

using namespace qlinear;
using namespace qlinear::tools;

namespace {

#define Check(ok) CheckAt((ok), #ok, __LINE__)
void CheckAt(bool ok, const char* what, int line) {
  if (ok) return;
  std::fprintf(stderr, "reader_fuzzer: check failed at line %d: %s\n", line, what);
  std::abort();
}

void CheckTensor(const Tensor& t) {
  const DTypeInfo* info = FindDType(t.dtype);
  Check(info != nullptr);
  Check(t.dims.size() <= QLINEAR_MAX_RANK);
  uint64_t n = 1;
  for (int64_t d : t.dims) {
    Check(d >= 0);
    n *= static_cast<uint64_t>(d);
  }
  Check(t.bytes.size() == StorageBytes(info->type, n));
  Check(t.bytes.size() <= kMaxTensorBytes);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Tensor t;
  std::string err;
  if (DecodeTensorBytes(data, size, "input", &t, &err)) {
    CheckTensor(t);
  } else {
    Check(!err.empty());
  }

  NodeCase c;
  err.clear();
  const ModelResult r = DecodeModelBytes(data, size, &c, &err);
  if (r != ModelResult::kOk) {
    Check(!err.empty());
    return 0;
  }
  Check(c.op == "QuantizeLinear" || c.op == "DequantizeLinear" || c.op == "DynamicQuantizeLinear");
  Check(c.opset >= 1);
  std::vector<const Tensor*> in;
  for (const auto& kv : c.initializers) CheckTensor(kv.second);
  for (const std::string& name : c.inputs) {
    if (name.empty()) {
      in.push_back(nullptr);
      continue;
    }
    auto it = c.initializers.find(name);
    if (it == c.initializers.end()) return 0;  // fed by data sets: nothing to run
    in.push_back(&it->second);
  }
  std::vector<Tensor> out;
  bool rejected = false;
  err.clear();
  if (RunNode(c, in, &out, &rejected, &err)) {
    for (const Tensor& o : out) CheckTensor(o);
  } else {
    Check(!err.empty());
  }
  return 0;
}
