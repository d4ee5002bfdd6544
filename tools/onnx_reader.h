// Decoding of ONNX node-test files (TensorProto and ModelProto bytes) for `qlinear check` and
// the reader fuzzer: bytes in, a decoded value or an error message out. Hostile input is
// expected: every declared size is checked against the bytes present and against the limits
// below before anything is allocated, and every attribute against its domain.
#ifndef QLINEAR_TOOLS_ONNX_READER_H_
#define QLINEAR_TOOLS_ONNX_READER_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "qlinear/qlinear.h"

namespace qlinear {
namespace tools {

// The largest tensor the reader decodes or a node may produce (its data, packed), the largest
// file it reads, and how deep below a PATH it searches for test folders.
constexpr uint64_t kMaxTensorBytes = uint64_t{256} << 20;
constexpr uint64_t kMaxFileBytes = uint64_t{512} << 20;
constexpr int kMaxSearchDepth = 32;

struct Tensor {
  std::string name;
  int32_t dtype = 0;
  std::vector<int64_t> dims;
  std::vector<uint8_t> bytes;  // packed, host byte order
  int64_t count() const;       // 0 if a dimension is 0; otherwise dims are validated: the product fits
  qlinear_tensor c() const {
    return qlinear_tensor{dtype, static_cast<int32_t>(dims.size()), dims.data(), bytes.data()};
  }
};

// A serialized TensorProto -> t. `where` prefixes the error messages.
bool DecodeTensorBytes(const void* data, size_t size, const std::string& where, Tensor* t,
                       std::string* err);

// The single node of a node-test model, with its attributes checked and converted.
struct NodeCase {
  std::string op;                    // QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear
  int32_t opset = 0;                 // the model's ai.onnx opset import
  qlinear_quantize_attrs quantize;   // QuantizeLinear's attributes
  qlinear_dequantize_attrs dequantize;
  std::vector<std::string> inputs;   // the node's input names; "" = an omitted optional input
  size_t outputs = 0;                // the node's output count
  std::vector<size_t> results;       // per graph output (output_k.pb): its node output index
  std::vector<std::string> fed;      // graph inputs the data sets feed, in order
  std::map<std::string, Tensor> initializers;
};

enum class ModelResult { kOk, kSkip, kError };

// A serialized ModelProto -> c. kSkip: a valid model that is not one runnable node (e.g. an
// expanded function body of many nodes); *err says why.
ModelResult DecodeModelBytes(const void* data, size_t size, NodeCase* c, std::string* err);

// Runs c's node on `in` (by input position; nullptr = absent) through the C API. false: *err,
// and *rejected when the library refused the call (rather than the inputs being unusable).
bool RunNode(const NodeCase& c, const std::vector<const Tensor*>& in, std::vector<Tensor>* out,
             bool* rejected, std::string* err);

// The file at path, if it is a regular file of at most kMaxFileBytes (read with that cap, so a
// file that grows meanwhile cannot make it allocate more). Messages start with `name`.
bool ReadFileCapped(const std::string& path, const std::string& name, std::string* out,
                    std::string* err);

}  // namespace tools
}  // namespace qlinear

#endif  // QLINEAR_TOOLS_ONNX_READER_H_
