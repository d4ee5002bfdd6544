// `qlinear check`: runs ONNX backend node tests (model.onnx + test_data_set_*/{input,output}_*.pb)
// for QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear through the public C API.
#include "tools/onnx_check.h"

#include <onnx/onnx_pb.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "fuzz/fuzz_input.h"
#include "lib/dtype.h"
#include "lib/minifloat.h"
#include "qlinear/qlinear.h"
#include "tools/commands.h"
#include "tools/onnx_reader.h"
#include "tools/progress.h"

namespace qlinear {
namespace tools {
namespace fs = std::filesystem;
namespace {

bool LoadTensorFile(const fs::path& path, Tensor* out, std::string* err) {
  std::string data;
  if (!ReadFileCapped(path.string(), path.filename().string(), &data, err)) return false;
  return DecodeTensorBytes(data.data(), data.size(), path.filename().string(), out, err);
}

// Element i of t as text, plus whether it is a float NaN (compared as NaN, whatever its sign
// and payload; float8/float4 codes are compared code for code: each format's NaN codes are
// part of the semantics).
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
  } else if (info.kind == Kind::kMiniFloat || info.kind == Kind::kScaleOnly) {
    const uint8_t code = info.bits == 4 ? static_cast<uint8_t>((b[i >> 1] >> (4 * (i & 1))) & 0xF)
                                        : b[i];
    const float v = DecodeMiniFloat(type, code);
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

enum class Outcome { kPassed, kFailed, kSkipped };

struct CaseResult {
  Outcome outcome;
  std::string message;
};

// The entries of dir, or an error; never throws (directory_iterator's ++ may).
bool ListDir(const fs::path& dir, std::vector<fs::path>* entries, std::string* err) {
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  for (; !ec && it != fs::directory_iterator(); it.increment(ec)) entries->push_back(it->path());
  if (ec) {
    *err = dir.string() + ": " + ec.message();
    return false;
  }
  std::sort(entries->begin(), entries->end());
  return true;
}

bool IsDirectory(const fs::path& p) {  // following symlinks
  struct stat st;
  return stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// Files named <prefix><k>.pb in dir (k: up to 9 digits), in order of k. They must be numbered
// 0, 1, ..., n - 1: with a gap or a number twice, *problem names the file and the result is empty
// (file k feeds input k: a missing one would shift the others into the wrong inputs).
std::vector<fs::path> NumberedFiles(const std::vector<fs::path>& entries, const std::string& prefix,
                                    std::string* problem) {
  std::vector<std::pair<long, fs::path>> found;
  for (const fs::path& e : entries) {
    const std::string f = e.filename().string();
    if (f.size() > prefix.size() + 3 && f.compare(0, prefix.size(), prefix) == 0 &&
        f.compare(f.size() - 3, 3, ".pb") == 0) {
      const std::string num = f.substr(prefix.size(), f.size() - prefix.size() - 3);
      const auto digit = [](char c) { return c >= '0' && c <= '9'; };
      if (!num.empty() && num.size() <= 9 && std::all_of(num.begin(), num.end(), digit)) {
        found.emplace_back(std::stol(num), e);
      }
    }
  }
  std::sort(found.begin(), found.end());
  std::vector<fs::path> out;
  for (size_t k = 0; k < found.size(); ++k) {
    if (found[k].first != static_cast<long>(k)) {
      *problem = found[k].second.filename().string() + ": the " + prefix + "*.pb files must be numbered 0, 1, ... (expected " +
                 prefix + std::to_string(k) + ".pb)";
      return {};
    }
    out.push_back(found[k].second);
  }
  problem->clear();
  return out;
}

CaseResult RunCase(const fs::path& dir, bool expect_error) {
  std::string data, err;
  if (!ReadFileCapped((dir / "model.onnx").string(), "model.onnx", &data, &err)) {
    return {Outcome::kFailed, err};
  }
  NodeCase node;
  switch (DecodeModelBytes(data.data(), data.size(), &node, &err)) {
    case ModelResult::kOk: break;
    case ModelResult::kSkip: return {Outcome::kSkipped, err};
    case ModelResult::kError: return {Outcome::kFailed, err};
  }

  std::vector<fs::path> entries, sets;
  if (!ListDir(dir, &entries, &err)) return {Outcome::kFailed, err};
  for (const fs::path& e : entries) {
    if (e.filename().string().rfind("test_data_set_", 0) != 0) continue;
    struct stat st;
    if (stat(e.c_str(), &st) != 0) {  // a dangling or looping link, a path too long
      return {Outcome::kFailed, e.filename().string() + ": " + std::strerror(errno)};
    }
    if (!S_ISDIR(st.st_mode)) return {Outcome::kFailed, e.filename().string() + ": not a folder"};
    sets.push_back(e);
  }
  if (sets.empty()) return {Outcome::kFailed, "no test_data_set_* folder"};

  std::string note;
  for (const fs::path& set : sets) {
    const std::string set_name = set.filename().string() + "/";
    std::vector<fs::path> files;
    if (!ListDir(set, &files, &err)) return {Outcome::kFailed, err};
    std::map<std::string, Tensor> values = node.initializers;
    std::string numbering;
    const std::vector<fs::path> inputs = NumberedFiles(files, "input_", &numbering);
    if (!numbering.empty()) return {Outcome::kFailed, set_name + numbering};
    if (inputs.size() != node.fed.size()) {
      return {Outcome::kFailed, set_name + ": " + std::to_string(inputs.size()) +
                                    " input files for " + std::to_string(node.fed.size()) +
                                    " graph inputs"};
    }
    for (size_t k = 0; k < inputs.size(); ++k) {
      Tensor t;
      if (!LoadTensorFile(inputs[k], &t, &err)) return {Outcome::kFailed, set_name + err};
      values[node.fed[k]] = std::move(t);
    }
    std::vector<const Tensor*> node_inputs;
    for (const std::string& name : node.inputs) {
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
    const bool ran = RunNode(node, node_inputs, &got, &rejected, &err);
    if (expect_error) {
      if (rejected) {
        note = err;
        continue;
      }
      return {Outcome::kFailed, ran ? set_name + ": expected an error, the call succeeded"
                                    : set_name + ": " + err};
    }
    if (!ran) return {Outcome::kFailed, set_name + ": " + err};
    const std::vector<fs::path> outputs = NumberedFiles(files, "output_", &numbering);
    if (!numbering.empty()) return {Outcome::kFailed, set_name + numbering};
    if (outputs.size() != node.results.size()) {
      return {Outcome::kFailed, set_name + ": " + std::to_string(outputs.size()) +
                                    " output files for " + std::to_string(node.results.size()) +
                                    " graph outputs"};
    }
    for (size_t k = 0; k < outputs.size(); ++k) {
      Tensor expected;
      if (!LoadTensorFile(outputs[k], &expected, &err)) return {Outcome::kFailed, set_name + err};
      const std::string diff = Compare(expected, got[node.results[k]]);
      if (!diff.empty()) {
        return {Outcome::kFailed, set_name + outputs[k].filename().string() + " " + diff};
      }
    }
  }
  return {Outcome::kPassed, note};
}

// The search for test folders: each directory is entered once (by device and inode, so symlink
// loops and repeated links end), at most kMaxSearchDepth levels below the root.
struct Search {
  std::set<std::pair<dev_t, ino_t>> seen;
  std::vector<fs::path> cases;
  std::vector<std::string> problems;  // FAIL lines
};

void FindCases(const fs::path& p, int depth, Search* s) {
  struct stat st;
  if (stat(p.c_str(), &st) != 0) {
    // A dangling link is no folder to search; a folder that cannot be examined (a path beyond
    // PATH_MAX, a link loop) is a FAIL line, not a silent hole in the search.
    if (errno != ENOENT) s->problems.push_back(p.string() + ": " + std::strerror(errno));
    return;
  }
  if (!S_ISDIR(st.st_mode)) return;
  if (!s->seen.insert({st.st_dev, st.st_ino}).second) return;
  struct stat model;
  if (lstat((p / "model.onnx").c_str(), &model) == 0) {  // whatever it is: RunCase judges it
    s->cases.push_back(p);
    return;
  }
  std::vector<fs::path> entries;
  std::string err;
  if (!ListDir(p, &entries, &err)) {
    s->problems.push_back(err);
    return;
  }
  for (const fs::path& e : entries) {
    struct stat es;
    if (stat(e.c_str(), &es) != 0) {
      if (errno != ENOENT) s->problems.push_back(e.string() + ": " + std::strerror(errno));
      continue;
    }
    if (!S_ISDIR(es.st_mode)) continue;
    if (depth == kMaxSearchDepth) {
      s->problems.push_back(p.string() + ": folders more than " + std::to_string(kMaxSearchDepth) +
                            " levels below the PATH are not searched");
      return;
    }
    FindCases(e, depth + 1, s);
  }
}

// Runnable seeds are for a fuzzer: a model and inputs of more bytes than this get none.
constexpr uint64_t kMaxRunnableSeedBytes = uint64_t{64} << 20;

// The model with the data set's inputs as initializers: a file that the reader fuzzer can run
// through the library by itself. Empty when the files do not fit the model or are too large.
std::string WithInputsAsInitializers(const std::string& model_bytes,
                                     const std::vector<fs::path>& inputs) {
  // The budgeted decoders vet the bytes first: a file they refuse (or one that would take more
  // memory than their budget) is never handed to an unbudgeted parse.
  std::string err;
  if (model_bytes.size() > kMaxRunnableSeedBytes) return "";
  uint64_t total = model_bytes.size();
  {
    NodeCase vetted;
    if (DecodeModelBytes(model_bytes.data(), model_bytes.size(), &vetted, &err) == ModelResult::kError) {
      return "";
    }
  }
  onnx::ModelProto model;
  if (!model.ParseFromString(model_bytes)) return "";
  onnx::GraphProto* g = model.mutable_graph();
  std::set<std::string> given;
  for (const auto& t : g->initializer()) given.insert(t.name());
  std::vector<std::string> fed;
  for (const auto& i : g->input()) {
    if (!given.count(i.name())) fed.push_back(i.name());
  }
  if (fed.size() != inputs.size()) return "";
  for (size_t k = 0; k < inputs.size(); ++k) {
    std::string pb;
    Tensor checked;
    onnx::TensorProto t;
    if (!ReadFileCapped(inputs[k].string(), "input", &pb, &err) ||
        (total += pb.size()) > kMaxRunnableSeedBytes ||
        !DecodeTensorBytes(pb.data(), pb.size(), "input", &checked, &err) || !t.ParseFromString(pb)) {
      return "";
    }
    t.set_name(fed[k]);
    g->add_initializer()->Swap(&t);
  }
  return model.SerializeAsString();
}

}  // namespace

int WriteFuzzSeeds(const std::vector<std::string>& paths, const std::string& out_dir,
                   SeedFormat format) {
  if (out_dir.empty()) {
    std::fprintf(stderr, "qlinear fuzz-seed: OUT_DIR is empty (the folder to write the seeds to)\n");
    return 1;
  }
  for (const std::string& root : paths) {
    if (!IsDirectory(root)) {
      struct stat st;
      std::fprintf(stderr, "qlinear fuzz-seed: %s: %s\n", root.c_str(),
                   lstat(root.c_str(), &st) == 0 ? "not a folder" : std::strerror(errno));
      return 1;
    }
  }
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  if (ec) {
    std::fprintf(stderr, "qlinear fuzz-seed: %s: %s\n", out_dir.c_str(), ec.message().c_str());
    return 1;
  }
  int written = 0, failed = 0;
  auto write = [&](const std::string& name, const std::string& bytes) {
    const fs::path path = fs::path(out_dir) / name;
    // Only a regular file is replaced: opening a FIFO there would wait for a reader forever.
    struct stat st;
    if (lstat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
      std::fprintf(stderr, "qlinear fuzz-seed: could not write %s: %s\n", path.c_str(),
                   S_ISDIR(st.st_mode) ? std::strerror(EISDIR) : "not a regular file");
      ++failed;
      return;
    }
    // A seed is whole or absent: a file that could not be written in full (a full disk) is
    // removed, so that a fuzzer never starts from a truncated seed.
    std::FILE* f = std::fopen(path.c_str(), "wb");
    int err = f == nullptr ? errno : 0;
    if (f != nullptr) {
      if (std::fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size()) err = errno != 0 ? errno : EIO;
      if (std::fclose(f) != 0 && err == 0) err = errno != 0 ? errno : EIO;  // the bytes reach the disk here
      if (err != 0) std::remove(path.c_str());
    }
    if (err != 0) {
      std::fprintf(stderr, "qlinear fuzz-seed: could not write %s: %s\n", path.c_str(), std::strerror(err));
      ++failed;
    } else {
      ++written;
    }
  };
  std::set<std::string> bases;  // cases with the same folder name get _2, _3, ...
  auto unique_base = [&](const fs::path& dir) {
    const fs::path named = dir.filename().empty() ? dir.parent_path() : dir;  // "cases/a/"
    std::string base = named.filename().string();
    if (base.empty() || base == "." || base == "..") base = "case";
    std::string name = base;
    for (int k = 2; !bases.insert(name).second; ++k) name = base + "_" + std::to_string(k);
    return name;
  };
  int skipped = 0;
  // A case that gives no seed: said on stderr, and the run goes on.
  auto skip = [&](const fs::path& dir, const std::string& why) {
    std::fprintf(stderr, "qlinear fuzz-seed: skipped %s: %s\n", dir.c_str(), why.c_str());
    ++skipped;
  };
  for (const std::string& root : paths) {  // every one a folder (checked above)
    Search search;
    FindCases(root, 0, &search);
    for (const std::string& problem : search.problems) {
      std::fprintf(stderr, "qlinear fuzz-seed: %s\n", problem.c_str());
      ++failed;
    }
    for (const fs::path& dir : search.cases) {
      try {
        std::string data, err, numbering;
        NodeCase node;
        if (!ReadFileCapped((dir / "model.onnx").string(), "model.onnx", &data, &err)) {
          skip(dir, err);
          continue;
        }
        std::vector<fs::path> files;
        if (!ListDir(dir / "test_data_set_0", &files, &err)) {
          skip(dir, err);
          continue;
        }
        const std::vector<fs::path> inputs = NumberedFiles(files, "input_", &numbering);
        const std::string base = unique_base(dir);
        if (format == SeedFormat::kReader) {  // the files, and the model with its inputs inside
          write(base + "_model.onnx", data);
          for (const fs::path& f : files) {
            std::string pb;
            if (ReadFileCapped(f.string(), f.filename().string(), &pb, &err)) {
              write(base + "_" + f.filename().string(), pb);
            }
          }
          const std::string runnable = WithInputsAsInitializers(data, inputs);
          if (!runnable.empty()) write(base + "_runnable.onnx", runnable);
          continue;
        }
        const ModelResult model = DecodeModelBytes(data.data(), data.size(), &node, &err);
        if (model == ModelResult::kError) skip(dir, err);
        if (model != ModelResult::kOk) continue;  // kSkip: a valid model of another kind (no seed, no noise)
        // The compact header holds attributes of a byte and dimensions up to 39 (fuzz_input.h):
        // a case beyond that would replay as another call.
        const qlinear_quantize_attrs& qa = node.quantize;
        const struct {
          const char* name;
          int64_t value, lo, hi;
        } fields[] = {{"opset", node.opset, 0, 255},          {"axis", qa.axis, -128, 127},
                      {"block_size", qa.block_size, -128, 127}, {"output_dtype", qa.output_dtype, 0, 255},
                      {"precision", qa.precision, 0, 255},      {"saturate", qa.saturate, 0, 255}};
        std::string misfit;
        for (const auto& f : fields) {
          if (misfit.empty() && (f.value < f.lo || f.value > f.hi)) {
            misfit = std::string(f.name) + " " + std::to_string(f.value) + " is outside the api seed format's [" +
                     std::to_string(f.lo) + ", " + std::to_string(f.hi) + "]";
          }
        }
        if (!misfit.empty()) {
          skip(dir, misfit);
          continue;
        }
        fuzz::FuzzCall c;
        c.op = node.op == "QuantizeLinear" ? 0 : node.op == "DequantizeLinear" ? 1 : 2;
        c.opset = static_cast<uint8_t>(node.opset);
        c.axis = static_cast<int8_t>(node.quantize.axis);
        c.block_size = static_cast<int8_t>(node.quantize.block_size);
        c.output_dtype = static_cast<uint8_t>(node.quantize.output_dtype);
        c.saturate = static_cast<uint8_t>(node.quantize.saturate);
        c.precision = static_cast<uint8_t>(node.quantize.precision);
        fuzz::FuzzTensor* slots[3] = {&c.x, &c.scale, &c.zp};
        bool ok = true;
        for (size_t k = 0; k < inputs.size() && k < 3; ++k) {
          Tensor t;
          if (!LoadTensorFile(inputs[k], &t, &err)) {
            ok = false;
            break;
          }
          if (t.dims.size() > static_cast<size_t>(fuzz::kMaxRank) ||
              std::any_of(t.dims.begin(), t.dims.end(), [](int64_t d) { return d > fuzz::kMaxDim; })) {
            ok = false;
            err = inputs[k].filename().string() + ": a shape beyond the api seed format (rank 6, dimensions 39)";
            break;
          }
          slots[k]->dtype = t.dtype;
          slots[k]->dims = t.dims;
          slots[k]->bytes = t.bytes;
        }
        if (!ok) {
          skip(dir, err);
          continue;
        }
        if (inputs.size() >= 3) c.flags |= 1;
        write(base, fuzz::Encode(c));
      } catch (const std::exception& e) {  // std::bad_alloc from a hostile file: skip the case
        std::fprintf(stderr, "qlinear fuzz-seed: %s: %s\n", dir.c_str(), e.what());
        ++failed;
      }
    }
  }
  std::printf("%d seeds written to %s", written, out_dir.c_str());
  if (skipped > 0) std::printf(", %d cases skipped", skipped);
  std::printf("\n");
  if (written == 0 && skipped == 0 && failed == 0) {
    std::fprintf(stderr,
                 "qlinear fuzz-seed: no single-node QuantizeLinear, DequantizeLinear or DynamicQuantizeLinear test "
                 "(a folder with model.onnx and test_data_set_*/) under the PATHs\n");
  }
  return written > 0 && failed == 0 ? 0 : 1;
}

int RunCheck(const std::vector<std::string>& paths, bool expect_error, bool verbose) {
  // Settings that make calls fail would pass the cases they reach under --expect-error.
  const std::string broken = CallsFailBecause();
  if (!broken.empty()) {
    std::printf("FAIL the environment: calls fail: %s\n", broken.c_str());
    return 1;
  }
  int passed = 0, failed = 0, skipped = 0;
  for (const std::string& root : paths) {
    if (!IsDirectory(root)) {
      struct stat st;
      const bool examined = lstat(root.c_str(), &st) == 0;
      std::printf("FAIL %s: %s\n", root.c_str(),
                  examined ? "not a folder" : errno == ENOENT ? "no such file or folder" : std::strerror(errno));
      ++failed;
      continue;
    }
    Search search;
    FindCases(root, 0, &search);
    for (const std::string& p : search.problems) {
      std::printf("FAIL %s\n", p.c_str());
      ++failed;
    }
    if (search.cases.empty()) {
      std::printf("FAIL %s: no test folder (model.onnx) found\n", root.c_str());
      ++failed;
      continue;
    }
    ProgressLine progress;
    for (size_t i = 0; i < search.cases.size(); ++i) {
      const fs::path& c = search.cases[i];
      progress.Show("[%zu/%zu] %s", i + 1, search.cases.size(), c.c_str());
      CaseResult r;
      try {
        r = RunCase(c, expect_error);
      } catch (const std::exception& e) {
        r = {Outcome::kFailed, std::string("exception: ") + e.what()};
      }
      progress.Clear();
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
      std::fflush(stdout);
    }
  }
  if (skipped > 0) {
    std::printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
  } else {
    std::printf("%d passed, %d failed\n", passed, failed);
  }
  if (passed + failed == 0) {
    std::printf("no test case ran\n");
    return 1;
  }
  return failed == 0 ? 0 : 1;
}

}  // namespace tools
}  // namespace qlinear
