// `qlinear check`: runs ONNX backend node tests (model.onnx + test_data_set_*/{input,output}_*.pb)
// for QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear through the public C API.
#include "onnx_check.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "fuzz/fuzz_input.h"
#include "lib/dtype.h"
#include "lib/minifloat.h"
#include "qlinear/qlinear.h"

namespace qlinear {
namespace tools {
namespace fs = std::filesystem;
namespace {

struct Tensor {
  std::string name;
  int32_t dtype = 0;
  std::vector<int64_t> dims;
  std::vector<uint8_t> bytes;  // packed, little-endian
  int64_t count() const {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    return n;
  }
  qlinear_tensor c() const {
    return qlinear_tensor{dtype, static_cast<int32_t>(dims.size()), dims.data(), bytes.data()};
  }
};

bool ReadFile(const fs::path& path, std::string* out, std::string* err) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *err = "cannot open " + path.string();
    return false;
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  *out = ss.str();
  return true;
}

// TensorProto -> Tensor, checking that the data matches dims and dtype.
bool DecodeTensor(const onnx::TensorProto& t, const std::string& where, Tensor* out,
                  std::string* err) {
  out->name = t.name();
  out->dtype = t.data_type();
  const DTypeInfo* info = FindDType(t.data_type());
  if (info == nullptr) {
    *err = where + ": unsupported or unknown dtype code " + std::to_string(t.data_type());
    return false;
  }
  if (t.has_data_location() && t.data_location() == onnx::TensorProto::EXTERNAL) {
    *err = where + ": external data is not supported";
    return false;
  }
  out->dims.assign(t.dims().begin(), t.dims().end());
  uint64_t n = 1;
  for (int64_t d : out->dims) {
    if (d < 0 || (d > 0 && n > (uint64_t{1} << 40) / static_cast<uint64_t>(d))) {
      *err = where + ": bad dims";
      return false;
    }
    n *= static_cast<uint64_t>(d);
  }
  const uint64_t nbytes = StorageBytes(info->type, n);
  if (t.has_raw_data()) {
    if (t.raw_data().size() != nbytes) {
      *err = where + ": raw_data has " + std::to_string(t.raw_data().size()) + " bytes, " +
             std::to_string(n) + " elements of " + info->name + " need " + std::to_string(nbytes);
      return false;
    }
    out->bytes.assign(t.raw_data().begin(), t.raw_data().end());
    return true;
  }
  out->bytes.assign(nbytes, 0);
  auto count_error = [&](const char* field, int have, uint64_t want) {
    *err = where + ": " + field + " has " + std::to_string(have) + " entries, dims need " +
           std::to_string(want);
    return false;
  };
  if (info->type == DType::kFloat32) {
    if (static_cast<uint64_t>(t.float_data_size()) != n) {
      return count_error("float_data", t.float_data_size(), n);
    }
    std::memcpy(out->bytes.data(), t.float_data().data(), nbytes);
    return true;
  }
  // Everything else sits in int32_data: one element per entry (low 8/16/32 bits), except the
  // packed sub-byte types, where each entry holds one packed byte.
  const uint64_t entries = info->bits < 8 ? nbytes : n;
  if (static_cast<uint64_t>(t.int32_data_size()) != entries) {
    return count_error("int32_data", t.int32_data_size(), entries);
  }
  const int width = info->bits < 8 ? 1 : info->bits / 8;
  for (uint64_t i = 0; i < entries; ++i) {
    const uint32_t v = static_cast<uint32_t>(t.int32_data(static_cast<int>(i)));
    std::memcpy(out->bytes.data() + i * width, &v, width);  // little-endian low bytes
  }
  return true;
}

bool LoadTensorFile(const fs::path& path, Tensor* out, std::string* err) {
  std::string data;
  if (!ReadFile(path, &data, err)) return false;
  onnx::TensorProto t;
  if (!t.ParseFromString(data)) {
    *err = path.filename().string() + ": not a TensorProto (parse failed)";
    return false;
  }
  return DecodeTensor(t, path.filename().string(), out, err);
}

// Element i of t as text, plus whether it is a NaN (for NaN-tolerant comparison).
std::string ElementText(const Tensor& t, int64_t i, bool* is_nan) {
  const DType type = static_cast<DType>(t.dtype);
  const DTypeInfo& info = Info(type);
  char buf[64];
  *is_nan = false;
  const uint8_t* b = t.bytes.data();
  if (info.kind == Kind::kFloat) {
    float v;
    uint32_t bits;
    if (type == DType::kFloat32) {
      std::memcpy(&bits, b + 4 * i, 4);
      v = FloatOf(bits);
    } else {
      uint16_t h;
      std::memcpy(&h, b + 2 * i, 2);
      bits = h;
      v = type == DType::kFloat16 ? Half::Decode(h) : BFloat16::Decode(h);
    }
    *is_nan = std::isnan(v);
    std::snprintf(buf, sizeof(buf), "%.9g (0x%x)", v, bits);
  } else if (info.kind == Kind::kMiniFloat) {
    const uint8_t code = info.bits == 4 ? static_cast<uint8_t>((b[i >> 1] >> (4 * (i & 1))) & 0xF)
                                        : b[i];
    const float v = DecodeMiniFloat(type, code);
    *is_nan = std::isnan(v);
    std::snprintf(buf, sizeof(buf), "%g (0x%x)", v, code);
  } else {
    int64_t v = 0;
    switch (info.bits) {
      case 2: v = (b[i >> 2] >> (2 * (i & 3))) & 3; if (info.is_signed) v = (v ^ 2) - 2; break;
      case 4: v = (b[i >> 1] >> (4 * (i & 1))) & 15; if (info.is_signed) v = (v ^ 8) - 8; break;
      case 8: v = info.is_signed ? static_cast<int8_t>(b[i]) : b[i]; break;
      case 16: {
        uint16_t u;
        std::memcpy(&u, b + 2 * i, 2);
        v = info.is_signed ? static_cast<int16_t>(u) : u;
        break;
      }
      default: {
        int32_t s;
        std::memcpy(&s, b + 4 * i, 4);
        v = s;
      }
    }
    std::snprintf(buf, sizeof(buf), "%lld", static_cast<long long>(v));
  }
  return buf;
}

// Empty when equal; else the first mismatch.
std::string Compare(const Tensor& expected, const Tensor& got) {
  if (expected.dtype != got.dtype) {
    return std::string("dtype: expected ") + qlinear_dtype_name(expected.dtype) + ", got " +
           qlinear_dtype_name(got.dtype);
  }
  if (expected.dims != got.dims) return "shape differs";
  for (int64_t i = 0; i < expected.count(); ++i) {
    bool nan_e, nan_g;
    const std::string e = ElementText(expected, i, &nan_e), g = ElementText(got, i, &nan_g);
    if (nan_e && nan_g) continue;
    if (e != g) return "index " + std::to_string(i) + ": expected " + e + ", got " + g;
  }
  return "";
}

int64_t IntAttr(const onnx::NodeProto& node, const char* name, int64_t def) {
  for (const auto& a : node.attribute()) {
    if (a.name() == name) return a.i();
  }
  return def;
}

enum class Outcome { kPassed, kFailed, kSkipped };

struct CaseResult {
  Outcome outcome;
  std::string message;
};

std::string LastError(qlinear_status s) {
  return std::string(qlinear_status_name(s)) + ": " + qlinear_last_error();
}

// Runs the node on the inputs; fills outputs or returns an error message (library rejection
// is reported with `rejected` set).
bool RunNode(const onnx::NodeProto& node, int opset, const std::vector<const Tensor*>& in,
             std::vector<Tensor>* out, bool* rejected, std::string* err) {
  *rejected = false;
  const std::string& op = node.op_type();
  auto at = [&](size_t k) -> const Tensor* { return k < in.size() ? in[k] : nullptr; };
  if (op == "DynamicQuantizeLinear") {
    if (at(0) == nullptr) {
      *err = "missing input x";
      return false;
    }
    const qlinear_tensor x = at(0)->c();
    Tensor y, s, z;
    y.dtype = QLINEAR_DTYPE_UINT8;
    y.dims = at(0)->dims;
    y.bytes.assign(static_cast<size_t>(at(0)->count()), 0);
    s.dtype = QLINEAR_DTYPE_FLOAT;
    s.bytes.assign(4, 0);
    z.dtype = QLINEAR_DTYPE_UINT8;
    z.bytes.assign(1, 0);
    float scale = 0;
    const qlinear_status st = qlinear_dynamic_quantize_linear(&x, y.bytes.data(), y.bytes.size(),
                                                              &scale, z.bytes.data());
    if (st != QLINEAR_OK) {
      *rejected = true;
      *err = LastError(st);
      return false;
    }
    std::memcpy(s.bytes.data(), &scale, 4);
    *out = {y, s, z};
    return true;
  }
  if (at(0) == nullptr || at(1) == nullptr) {
    *err = "missing input " + std::string(at(0) == nullptr ? "x" : "scale");
    return false;
  }
  const qlinear_tensor x = at(0)->c(), scale = at(1)->c();
  qlinear_tensor zp{};
  if (at(2) != nullptr) zp = at(2)->c();
  const qlinear_tensor* zpp = at(2) != nullptr ? &zp : nullptr;
  Tensor y;
  y.dims = at(0)->dims;
  qlinear_status st;
  size_t bytes = 0;
  if (op == "QuantizeLinear") {
    qlinear_quantize_attrs a;
    qlinear_quantize_attrs_init(&a);
    a.opset = opset;
    a.axis = IntAttr(node, "axis", 1);
    a.block_size = IntAttr(node, "block_size", 0);
    a.output_dtype = static_cast<int32_t>(IntAttr(node, "output_dtype", 0));
    a.saturate = static_cast<int32_t>(IntAttr(node, "saturate", 1));
    a.precision = static_cast<int32_t>(IntAttr(node, "precision", 0));
    st = qlinear_quantize_output_info(&x, &scale, zpp, &a, &y.dtype, &bytes);
    if (st == QLINEAR_OK) {
      y.bytes.assign(bytes, 0);
      st = qlinear_quantize_linear(&x, &scale, zpp, &a, y.bytes.data(), bytes);
    }
  } else if (op == "DequantizeLinear") {
    qlinear_dequantize_attrs a;
    qlinear_dequantize_attrs_init(&a);
    a.opset = opset;
    a.axis = IntAttr(node, "axis", 1);
    a.block_size = IntAttr(node, "block_size", 0);
    a.output_dtype = static_cast<int32_t>(IntAttr(node, "output_dtype", 0));
    st = qlinear_dequantize_output_info(&x, &scale, zpp, &a, &y.dtype, &bytes);
    if (st == QLINEAR_OK) {
      y.bytes.assign(bytes, 0);
      st = qlinear_dequantize_linear(&x, &scale, zpp, &a, y.bytes.data(), bytes);
    }
  } else {
    *err = "unsupported op '" + op + "' (qlinear runs QuantizeLinear, DequantizeLinear, "
           "DynamicQuantizeLinear)";
    return false;
  }
  if (st != QLINEAR_OK) {
    *rejected = true;
    *err = LastError(st);
    return false;
  }
  *out = {y};
  return true;
}

// Files named <prefix><k>.pb in dir, in order of k.
std::vector<fs::path> NumberedFiles(const fs::path& dir, const std::string& prefix) {
  std::vector<std::pair<long, fs::path>> found;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string f = e.path().filename().string();
    if (f.size() > prefix.size() + 3 && f.compare(0, prefix.size(), prefix) == 0 &&
        f.compare(f.size() - 3, 3, ".pb") == 0) {
      const std::string num = f.substr(prefix.size(), f.size() - prefix.size() - 3);
      if (!num.empty() && std::all_of(num.begin(), num.end(), ::isdigit)) {
        found.emplace_back(std::stol(num), e.path());
      }
    }
  }
  std::sort(found.begin(), found.end());
  std::vector<fs::path> out;
  for (auto& f : found) out.push_back(f.second);
  return out;
}

CaseResult RunCase(const fs::path& dir, bool expect_error) {
  std::string data, err;
  if (!ReadFile(dir / "model.onnx", &data, &err)) return {Outcome::kFailed, err};
  onnx::ModelProto model;
  if (!model.ParseFromString(data)) {
    return {Outcome::kFailed, "model.onnx: not a ModelProto (parse failed)"};
  }
  const onnx::GraphProto& g = model.graph();
  if (g.node_size() != 1) {
    return {Outcome::kSkipped,
            "graph has " + std::to_string(g.node_size()) + " nodes (only single-node tests run)"};
  }
  const onnx::NodeProto& node = g.node(0);
  if (!node.domain().empty() && node.domain() != "ai.onnx") {
    return {Outcome::kFailed, "node domain '" + node.domain() + "' is not ai.onnx"};
  }
  int opset = 0;
  for (const auto& o : model.opset_import()) {
    if (o.domain().empty() || o.domain() == "ai.onnx") opset = static_cast<int>(o.version());
  }
  if (opset == 0) return {Outcome::kFailed, "model.onnx: no ai.onnx opset_import"};

  // Graph inputs that are fed by the data sets (initializers are not).
  std::map<std::string, Tensor> initializers;
  for (const auto& t : g.initializer()) {
    Tensor v;
    if (!DecodeTensor(t, "initializer " + t.name(), &v, &err)) return {Outcome::kFailed, err};
    initializers[t.name()] = v;
  }
  std::vector<std::string> fed;
  for (const auto& i : g.input()) {
    if (!initializers.count(i.name())) fed.push_back(i.name());
  }

  std::vector<fs::path> sets;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0) {
      sets.push_back(e.path());
    }
  }
  std::sort(sets.begin(), sets.end());
  if (sets.empty()) return {Outcome::kFailed, "no test_data_set_* folder"};

  std::string note;
  for (const fs::path& set : sets) {
    const std::string set_name = set.filename().string() + "/";
    std::map<std::string, Tensor> values = initializers;
    const std::vector<fs::path> inputs = NumberedFiles(set, "input_");
    if (inputs.size() != fed.size()) {
      return {Outcome::kFailed, set_name + ": " + std::to_string(inputs.size()) +
                                    " input files for " + std::to_string(fed.size()) +
                                    " graph inputs"};
    }
    for (size_t k = 0; k < inputs.size(); ++k) {
      Tensor t;
      if (!LoadTensorFile(inputs[k], &t, &err)) return {Outcome::kFailed, set_name + err};
      values[fed[k]] = t;
    }
    std::vector<const Tensor*> node_inputs;
    for (const std::string& name : node.input()) {
      if (name.empty()) {
        node_inputs.push_back(nullptr);
        continue;
      }
      auto it = values.find(name);
      if (it == values.end()) return {Outcome::kFailed, "node input '" + name + "' has no data"};
      node_inputs.push_back(&it->second);
    }
    while (!node_inputs.empty() && node_inputs.back() == nullptr) node_inputs.pop_back();

    std::vector<Tensor> got;
    bool rejected = false;
    const bool ran = RunNode(node, opset, node_inputs, &got, &rejected, &err);
    if (expect_error) {
      if (rejected) {
        note = err;
        continue;
      }
      return {Outcome::kFailed, ran ? set_name + ": expected an error, the call succeeded"
                                    : set_name + ": " + err};
    }
    if (!ran) return {Outcome::kFailed, set_name + ": " + err};
    const std::vector<fs::path> outputs = NumberedFiles(set, "output_");
    if (outputs.size() != got.size()) {
      return {Outcome::kFailed, set_name + ": " + std::to_string(outputs.size()) +
                                    " output files, the op has " + std::to_string(got.size())};
    }
    for (size_t k = 0; k < outputs.size(); ++k) {
      Tensor expected;
      if (!LoadTensorFile(outputs[k], &expected, &err)) return {Outcome::kFailed, set_name + err};
      const std::string diff = Compare(expected, got[k]);
      if (!diff.empty()) {
        return {Outcome::kFailed, set_name + outputs[k].filename().string() + " " + diff};
      }
    }
  }
  return {Outcome::kPassed, note};
}

void FindCases(const fs::path& p, std::vector<fs::path>* out) {
  std::error_code ec;
  if (fs::exists(p / "model.onnx", ec)) {
    out->push_back(p);
    return;
  }
  std::vector<fs::path> children;
  for (const auto& e : fs::directory_iterator(p, ec)) {
    if (e.is_directory(ec)) children.push_back(e.path());
  }
  std::sort(children.begin(), children.end());
  for (const auto& c : children) FindCases(c, out);
}

}  // namespace

int WriteFuzzSeeds(const std::vector<std::string>& paths, const std::string& out_dir) {
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  int written = 0;
  for (const std::string& root : paths) {
    std::vector<fs::path> cases;
    FindCases(root, &cases);
    for (const fs::path& dir : cases) {
      std::string data, err;
      onnx::ModelProto model;
      if (!ReadFile(dir / "model.onnx", &data, &err) || !model.ParseFromString(data) ||
          model.graph().node_size() != 1) {
        continue;
      }
      const onnx::NodeProto& node = model.graph().node(0);
      fuzz::FuzzCall c;
      c.op = node.op_type() == "QuantizeLinear" ? 0 : node.op_type() == "DequantizeLinear" ? 1 : 2;
      for (const auto& o : model.opset_import()) {
        if (o.domain().empty() || o.domain() == "ai.onnx") c.opset = static_cast<uint8_t>(o.version());
      }
      c.axis = static_cast<int8_t>(IntAttr(node, "axis", 1));
      c.block_size = static_cast<int8_t>(IntAttr(node, "block_size", 0));
      c.output_dtype = static_cast<uint8_t>(IntAttr(node, "output_dtype", 0));
      c.saturate = static_cast<uint8_t>(IntAttr(node, "saturate", 1));
      c.precision = static_cast<uint8_t>(IntAttr(node, "precision", 0));
      const std::vector<fs::path> inputs = NumberedFiles(dir / "test_data_set_0", "input_");
      fuzz::FuzzTensor* slots[3] = {&c.x, &c.scale, &c.zp};
      bool ok = true;
      for (size_t k = 0; k < inputs.size() && k < 3; ++k) {
        Tensor t;
        if (!LoadTensorFile(inputs[k], &t, &err)) {
          ok = false;
          break;
        }
        slots[k]->dtype = t.dtype;
        slots[k]->dims = t.dims;
        slots[k]->bytes = t.bytes;
      }
      if (!ok) continue;
      if (inputs.size() >= 3) c.flags |= 1;
      std::ofstream f(fs::path(out_dir) / dir.filename(), std::ios::binary);
      const std::string bytes = fuzz::Encode(c);
      f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
      ++written;
    }
  }
  std::printf("%d seeds written to %s\n", written, out_dir.c_str());
  return written > 0 ? 0 : 1;
}

int RunCheck(const std::vector<std::string>& paths, bool expect_error, bool verbose) {
  int passed = 0, failed = 0, skipped = 0;
  for (const std::string& root : paths) {
    std::error_code ec;
    if (!fs::exists(root, ec)) {
      std::printf("FAIL %s: no such file or folder\n", root.c_str());
      ++failed;
      continue;
    }
    std::vector<fs::path> cases;
    FindCases(root, &cases);
    if (cases.empty()) {
      std::printf("FAIL %s: no test folder (model.onnx) found\n", root.c_str());
      ++failed;
      continue;
    }
    for (const fs::path& c : cases) {
      CaseResult r;
      try {
        r = RunCase(c, expect_error);
      } catch (const std::exception& e) {
        r = {Outcome::kFailed, std::string("exception: ") + e.what()};
      }
      switch (r.outcome) {
        case Outcome::kPassed:
          ++passed;
          if (verbose) {
            std::printf("PASS %s%s%s\n", c.string().c_str(), r.message.empty() ? "" : ": ",
                        r.message.c_str());
          }
          break;
        case Outcome::kFailed:
          ++failed;
          std::printf("FAIL %s: %s\n", c.string().c_str(), r.message.c_str());
          break;
        case Outcome::kSkipped:
          ++skipped;
          if (verbose) std::printf("SKIP %s: %s\n", c.string().c_str(), r.message.c_str());
          break;
      }
    }
  }
  if (skipped > 0) {
    std::printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
  } else {
    std::printf("%d passed, %d failed\n", passed, failed);
  }
  return failed == 0 ? 0 : 1;
}

}  // namespace tools
}  // namespace qlinear
