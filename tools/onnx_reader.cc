// ONNX node-test files -> tensors and one node, for `qlinear check` and fuzz/reader_fuzzer.
#include "tools/onnx_reader.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/wire_format_lite.h>
#include <onnx/onnx_pb.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <fstream>
#include <memory>
#include <set>

#include "lib/dtype.h"

namespace qlinear {
namespace tools {
namespace {

std::string Mib(uint64_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

// The range an int32_data entry may hold for a type stored there: one element per entry (its
// value, or the bits of a 16-bit float), or one packed byte of a sub-byte type.
void EntryRange(const DTypeInfo& info, int64_t* lo, int64_t* hi) {
  if (info.kind == Kind::kInt && info.bits >= 8) {
    *lo = info.qmin;
    *hi = info.qmax;
    return;
  }
  *lo = 0;
  *hi = info.bits == 16 ? 0xFFFF : 0xFF;  // float16/bfloat16 bits; float8 codes; packed bytes
}

bool DecodeTensor(const onnx::TensorProto& t, const std::string& where, Tensor* out,
                  std::string* err) {
  out->name = t.name();
  out->dtype = t.data_type();
  out->dims.clear();
  out->bytes.clear();
  const DTypeInfo* info = FindDType(t.data_type());
  if (info == nullptr) {
    *err = where + ": unsupported or unknown dtype code " + std::to_string(t.data_type());
    return false;
  }
  if (t.has_data_location() && t.data_location() == onnx::TensorProto::EXTERNAL) {
    *err = where + ": external data is not supported";
    return false;
  }
  if (t.dims_size() > QLINEAR_MAX_RANK) {
    *err = where + ": rank " + std::to_string(t.dims_size()) + " is over " +
           std::to_string(QLINEAR_MAX_RANK);
    return false;
  }
  // Element count and storage, checked against the limit before anything is allocated (the
  // smallest type, 2 bits, packs four elements per byte).
  uint64_t n = 1;
  bool empty = false;
  for (int64_t d : t.dims()) {
    if (d < 0) {
      *err = where + ": dimension " + std::to_string(d) + " is negative";
      return false;
    }
    empty |= d == 0;
  }
  for (int64_t d : t.dims()) {
    if (empty) break;
    if (static_cast<uint64_t>(d) > kMaxTensorBytes * 4 / n) {
      *err = where + ": dims declare more elements than the " + Mib(kMaxTensorBytes) +
             " tensor limit allows";
      return false;
    }
    n *= static_cast<uint64_t>(d);
  }
  if (empty) n = 0;
  const uint64_t nbytes = StorageBytes(info->type, n);
  if (nbytes > kMaxTensorBytes) {
    *err = where + ": " + std::to_string(n) + " elements of " + info->name + " take " +
           std::to_string(nbytes) + " bytes, over the " + Mib(kMaxTensorBytes) + " tensor limit";
    return false;
  }
  out->dims.assign(t.dims().begin(), t.dims().end());
  // One source of values: ONNX forbids typed fields beside raw_data, and a segment (a piece of
  // a larger tensor) is not a whole input.
  const int typed = t.float_data_size() + t.int32_data_size() + t.int64_data_size() + t.double_data_size() +
                    t.uint64_data_size() + t.string_data_size();
  if (t.has_raw_data() && typed > 0) {
    *err = where + ": raw_data and typed data fields both hold values (ONNX allows one)";
    return false;
  }
  if (t.has_segment()) {
    *err = where + ": a segment of a tensor (TensorProto.segment) is not supported";
    return false;
  }
  if (t.has_raw_data()) {
    if (t.raw_data().size() != nbytes) {
      *err = where + ": raw_data has " + std::to_string(t.raw_data().size()) + " bytes, " +
             std::to_string(n) + " elements of " + info->name + " need " + std::to_string(nbytes);
      return false;
    }
    out->bytes.assign(t.raw_data().begin(), t.raw_data().end());
    return true;
  }
  auto count_error = [&](const char* field, int have, uint64_t want) {
    *err = where + ": " + field + " has " + std::to_string(have) + " entries, dims need " +
           std::to_string(want);
    return false;
  };
  if (info->type == DType::kFloat32) {
    if (static_cast<uint64_t>(t.float_data_size()) != n) {
      return count_error("float_data", t.float_data_size(), n);
    }
    out->bytes.resize(nbytes);
    if (nbytes > 0) std::memcpy(out->bytes.data(), t.float_data().data(), nbytes);
    return true;
  }
  // Everything else sits in int32_data: one element per entry, except the packed sub-byte
  // types, where each entry holds one packed byte. A value outside what the entry can hold is
  // an error, never truncated to its low bits.
  const uint64_t entries = info->bits < 8 ? nbytes : n;
  if (static_cast<uint64_t>(t.int32_data_size()) != entries) {
    return count_error("int32_data", t.int32_data_size(), entries);
  }
  int64_t lo = 0, hi = 0;
  EntryRange(*info, &lo, &hi);
  const int width = info->bits < 8 ? 1 : info->bits / 8;
  for (uint64_t i = 0; i < entries; ++i) {
    const int32_t v = t.int32_data(static_cast<int>(i));
    if (v < lo || v > hi) {
      *err = where + ": int32_data[" + std::to_string(i) + "] = " + std::to_string(v) +
             " is outside " + info->name + "'s range [" + std::to_string(lo) + ", " +
             std::to_string(hi) + "]" + (info->bits < 8 ? " (one packed byte per entry)" : "");
      return false;
    }
  }
  out->bytes.resize(nbytes);
  for (uint64_t i = 0; i < entries; ++i) {
    const uint32_t v = static_cast<uint32_t>(t.int32_data(static_cast<int>(i)));
    const uint8_t le[4] = {static_cast<uint8_t>(v), static_cast<uint8_t>(v >> 8),
                           static_cast<uint8_t>(v >> 16), static_cast<uint8_t>(v >> 24)};
    std::memcpy(out->bytes.data() + i * width, le, width);  // little-endian, as raw_data
  }
  return true;
}

// An int attribute's value, checked: type INT, and (int32_only) within int32.
bool IntAttribute(const onnx::AttributeProto& a, bool int32_only, int64_t* v, std::string* err) {
  if (a.has_type() && a.type() != onnx::AttributeProto::INT) {
    *err = "attribute " + a.name() + ": not an int (type " + std::to_string(a.type()) + ")";
    return false;
  }
  if (!a.has_i()) {
    *err = "attribute " + a.name() + ": has no int value";
    return false;
  }
  *v = a.i();
  if (int32_only && (*v < INT32_MIN || *v > INT32_MAX)) {
    *err = "attribute " + a.name() + ": " + std::to_string(*v) +
           " is outside the int32 range of the C attribute";
    return false;
  }
  return true;
}

// The node's attributes into the C structs: each known to the op, given once, in its domain.
bool DecodeAttributes(const onnx::NodeProto& node, NodeCase* c, std::string* err) {
  const bool q = c->op == "QuantizeLinear", dq = c->op == "DequantizeLinear";
  std::set<std::string> seen;
  for (const auto& a : node.attribute()) {
    const std::string& name = a.name();
    if (!seen.insert(name).second) {
      *err = "attribute " + name + ": given twice";
      return false;
    }
    const bool known = (q || dq) && (name == "axis" || name == "block_size" ||
                                     name == "output_dtype" || (q && (name == "saturate" ||
                                                                      name == "precision")));
    if (!known) {
      *err = "attribute " + name + ": " + c->op + " has no such attribute";
      return false;
    }
    int64_t v = 0;
    const bool wide = name == "axis" || name == "block_size";  // int64 in the C structs
    if (!IntAttribute(a, !wide, &v, err)) return false;
    if (name == "saturate" && v != 0 && v != 1) {
      *err = "attribute saturate: must be 0 or 1, got " + std::to_string(v);
      return false;
    }
    if (name == "axis") {
      c->quantize.axis = c->dequantize.axis = v;
    } else if (name == "block_size") {
      c->quantize.block_size = c->dequantize.block_size = v;
    } else if (name == "output_dtype") {
      c->quantize.output_dtype = c->dequantize.output_dtype = static_cast<int32_t>(v);
    } else if (name == "saturate") {
      c->quantize.saturate = static_cast<int32_t>(v);
    } else {
      c->quantize.precision = static_cast<int32_t>(v);
    }
  }
  return true;
}

}  // namespace

int64_t Tensor::count() const {
  // A zero dimension empties the tensor whatever the others are; DecodeTensor does not bound
  // the others then, and their product may overflow.
  for (int64_t d : dims) {
    if (d == 0) return 0;
  }
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

namespace {

// Protobuf turns each 2-byte empty entry (a node, a string) into an object of 30-150 bytes: a
// 512 MiB file could take 40 GB. Messages are parsed on an arena whose blocks come from a
// budget of 4 bytes per file byte plus 64 MiB, plus 4 times the memory of the repeated numbers
// (int32_data and the like: an int8 element is a 1-byte varint held in 4 bytes, in an array
// that doubles as it grows and whose old blocks stay in the arena); a parse that needs more
// stops and the file is rejected. What lives outside the arena is charged to the same budget
// before the parse, and the repeated numbers are counted then too (ChargeHeapFields).
struct ParseBudgetExceeded {};
thread_local uint64_t parse_budget = 0;

void* BudgetedBlock(size_t n) {
  if (n > parse_budget) throw ParseBudgetExceeded{};
  parse_budget -= n;
  return ::operator new(n);
}
void FreeBlock(void* p, size_t) { ::operator delete(p); }

google::protobuf::ArenaOptions BudgetedArenaOptions() {
  google::protobuf::ArenaOptions o;
  o.block_alloc = BudgetedBlock;
  o.block_dealloc = FreeBlock;
  return o;
}

// Protobuf keeps some of a message on the heap, outside the arena: fields this ONNX version does
// not know (a newer writer's, or a hostile file's), each a vector entry (twice that while the
// vector grows) and a string object; and the buffer of every string or bytes value longer than
// the 15 characters a string holds inline (with malloc's overhead: 48 bytes for 16 characters).
// Before the parse, the wire bytes are walked with the message's descriptor and those are
// charged: kUnknownFieldCost per unknown field, payload + kBufferCost per long value. Malformed
// bytes stop the walk; the parse then stops at the same place or fails.
constexpr uint64_t kUnknownFieldCost = 96;
constexpr uint64_t kBufferCost = 32;
constexpr int kMaxDepth = 100;  // protobuf's default recursion limit

struct HeapCharge {
  uint64_t heap = 0;    // bytes outside the arena
  uint64_t arrays = 0;  // bytes of the repeated numbers once parsed
  bool tensor_too_big = false;  // one TensorProto's repeated numbers beyond kMaxTensorBytes
};

bool ChargeHeapFields(google::protobuf::io::CodedInputStream* in, const google::protobuf::Descriptor* d,
                      int depth, HeapCharge* charge);

// The bytes one entry of a repeated numeric field takes once parsed (0: not such a field).
uint64_t NumberBytes(const google::protobuf::FieldDescriptor* f) {
  using google::protobuf::FieldDescriptor;
  if (f == nullptr || !f->is_repeated()) return 0;
  switch (f->cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32:
    case FieldDescriptor::CPPTYPE_UINT32:
    case FieldDescriptor::CPPTYPE_FLOAT:
    case FieldDescriptor::CPPTYPE_ENUM:
      return 4;
    case FieldDescriptor::CPPTYPE_INT64:
    case FieldDescriptor::CPPTYPE_UINT64:
    case FieldDescriptor::CPPTYPE_DOUBLE:
      return 8;
    case FieldDescriptor::CPPTYPE_BOOL:
      return 1;
    default:
      return 0;
  }
}

// Charges the heap parts of one message's fields (d null: a group of unknown fields) to
// *charge. Returns false where the walk stops: the end of the bytes or of the message, a
// group's end, malformed bytes, too deep.
bool ChargeFieldsOf(google::protobuf::io::CodedInputStream* in, const google::protobuf::Descriptor* d,
                    int depth, HeapCharge* charge) {
  using google::protobuf::FieldDescriptor;
  using WF = google::protobuf::internal::WireFormatLite;
  if (depth > kMaxDepth) return false;
  uint64_t* cost = &charge->heap;
  for (uint32_t tag; (tag = in->ReadTag()) != 0;) {
    const FieldDescriptor* f = d != nullptr ? d->FindFieldByNumber(WF::GetTagFieldNumber(tag)) : nullptr;
    const WF::WireType wire = WF::GetTagWireType(tag);
    // A known field with another wire type than its own (or packed) is kept as unknown too.
    if (f != nullptr && wire != WF::WireTypeForFieldType(static_cast<WF::FieldType>(f->type())) &&
        !(f->is_packable() && wire == WF::WIRETYPE_LENGTH_DELIMITED)) {
      f = nullptr;
    }
    if (f == nullptr) *cost += kUnknownFieldCost;
    // One entry of a repeated number, unpacked (a packed run is counted below).
    if (wire != WF::WIRETYPE_LENGTH_DELIMITED) charge->arrays += NumberBytes(f);
    switch (wire) {
      case WF::WIRETYPE_VARINT: {
        uint64_t v;
        if (!in->ReadVarint64(&v)) return false;
        // proto2 keeps an enum value it does not know as an unknown field.
        if (f != nullptr && f->type() == FieldDescriptor::TYPE_ENUM &&
            (v > static_cast<uint64_t>(INT_MAX) ||
             f->enum_type()->FindValueByNumber(static_cast<int>(v)) == nullptr)) {
          *cost += kUnknownFieldCost;
        }
        break;
      }
      case WF::WIRETYPE_FIXED64:
        if (!in->Skip(8)) return false;
        break;
      case WF::WIRETYPE_FIXED32:
        if (!in->Skip(4)) return false;
        break;
      case WF::WIRETYPE_LENGTH_DELIMITED: {
        uint32_t len;
        if (!in->ReadVarint32(&len) || len > static_cast<uint32_t>(INT_MAX)) return false;
        if (f != nullptr && f->type() == FieldDescriptor::TYPE_MESSAGE) {
          const auto limit = in->PushLimit(static_cast<int>(len));
          ChargeHeapFields(in, f->message_type(), depth + 1, charge);
          if (in->BytesUntilLimit() != 0) return false;
          in->PopLimit(limit);
        } else {
          if (const uint64_t bytes = NumberBytes(f); bytes != 0) {  // a packed run
            uint64_t entries = len;  // varints: one per byte below 0x80 (at most len)
            const void* p = nullptr;
            int avail = 0;
            const WF::WireType one = WF::WireTypeForFieldType(static_cast<WF::FieldType>(f->type()));
            if (one == WF::WIRETYPE_FIXED32) {
              entries = len / 4;
            } else if (one == WF::WIRETYPE_FIXED64) {
              entries = len / 8;
            } else if (in->GetDirectBufferPointer(&p, &avail) && static_cast<uint32_t>(avail) >= len) {
              const uint8_t* b = static_cast<const uint8_t*>(p);
              entries = static_cast<uint64_t>(std::count_if(b, b + len, [](uint8_t c) { return c < 0x80; }));
            }
            charge->arrays += entries * bytes;
          }
          if ((f == nullptr || f->type() == FieldDescriptor::TYPE_STRING ||
               f->type() == FieldDescriptor::TYPE_BYTES) && len > 15) {
            *cost += len + kBufferCost;
          }
          if (!in->Skip(static_cast<int>(len))) return false;
        }
        break;
      }
      case WF::WIRETYPE_START_GROUP:  // its fields are kept as a nested set of unknown fields
        ChargeHeapFields(in, nullptr, depth + 1, charge);
        if (!in->LastTagWas(WF::MakeTag(WF::GetTagFieldNumber(tag), WF::WIRETYPE_END_GROUP))) return false;
        break;
      default:  // END_GROUP, or an invalid wire type
        return false;
    }
  }
  return false;
}

// ChargeFieldsOf, and each tensor's repeated numbers against the tensor limit.
bool ChargeHeapFields(google::protobuf::io::CodedInputStream* in, const google::protobuf::Descriptor* d,
                      int depth, HeapCharge* charge) {
  const uint64_t before = charge->arrays;
  const bool more = ChargeFieldsOf(in, d, depth, charge);
  if (d == onnx::TensorProto::descriptor() && charge->arrays - before > kMaxTensorBytes) charge->tensor_too_big = true;
  return more;
}

enum class Parse { kOk, kFailed, kTooBig, kTooManyNumbers };

// *msg, on a new budgeted *arena, parsed from size bytes.
template <class Message>
Parse ParseBudgeted(const void* data, size_t size, std::unique_ptr<google::protobuf::Arena>* arena,
                    Message** msg) {
  if (size > static_cast<size_t>(INT_MAX)) return Parse::kFailed;
  HeapCharge charge;
  google::protobuf::io::CodedInputStream in(static_cast<const uint8_t*>(data), static_cast<int>(size));
  ChargeHeapFields(&in, Message::descriptor(), 0, &charge);
  // A tensor whose repeated numbers take more than a tensor may (kMaxTensorBytes): not parsed.
  if (charge.tensor_too_big) return Parse::kTooManyNumbers;
  parse_budget = 4 * static_cast<uint64_t>(size) + (uint64_t{64} << 20) + 4 * charge.arrays;
  if (charge.heap > parse_budget) return Parse::kTooBig;
  parse_budget -= charge.heap;
  try {
    arena->reset(new google::protobuf::Arena(BudgetedArenaOptions()));
    *msg = google::protobuf::Arena::CreateMessage<Message>(arena->get());
    return (*msg)->ParseFromArray(data, static_cast<int>(size)) ? Parse::kOk : Parse::kFailed;
  } catch (const ParseBudgetExceeded&) {
    return Parse::kTooBig;
  }
}

std::string TooBig(const std::string& where, size_t size) {
  return where + ": its " + std::to_string(size) +
         " bytes would take more than 4 bytes of memory each to parse (too many small or unknown entries)";
}
std::string TooManyNumbers(const std::string& where) {
  return where + ": a tensor's repeated numbers (int32_data, float_data, dims, ...) would take more than " +
         Mib(kMaxTensorBytes) + " once parsed (large tensors belong in raw_data)";
}

}  // namespace

bool DecodeTensorBytes(const void* data, size_t size, const std::string& where, Tensor* t,
                       std::string* err) {
  std::unique_ptr<google::protobuf::Arena> arena;
  onnx::TensorProto* proto = nullptr;
  switch (ParseBudgeted(data, size, &arena, &proto)) {
    case Parse::kOk: return DecodeTensor(*proto, where, t, err);
    case Parse::kTooBig: *err = TooBig(where, size); return false;
    case Parse::kTooManyNumbers: *err = TooManyNumbers(where); return false;
    case Parse::kFailed: break;
  }
  *err = where + ": not a TensorProto (parse failed)";
  return false;
}

ModelResult DecodeModelBytes(const void* data, size_t size, NodeCase* c, std::string* err) {
  *c = NodeCase{};
  qlinear_quantize_attrs_init(&c->quantize);
  qlinear_dequantize_attrs_init(&c->dequantize);
  if (size == 0) {
    *err = "model.onnx: the file is empty";
    return ModelResult::kError;
  }
  std::unique_ptr<google::protobuf::Arena> arena;
  onnx::ModelProto* parsed = nullptr;
  switch (ParseBudgeted(data, size, &arena, &parsed)) {
    case Parse::kOk: break;
    case Parse::kTooBig: *err = TooBig("model.onnx", size); return ModelResult::kError;
    case Parse::kTooManyNumbers: *err = TooManyNumbers("model.onnx"); return ModelResult::kError;
    case Parse::kFailed: *err = "model.onnx: not a ModelProto (parse failed)"; return ModelResult::kError;
  }
  const onnx::ModelProto& model = *parsed;
  const onnx::GraphProto& g = model.graph();
  if (g.node_size() == 0) {
    *err = "model.onnx: the graph has no node";
    return ModelResult::kError;
  }
  if (g.node_size() != 1) {
    *err = "graph has " + std::to_string(g.node_size()) + " nodes (only single-node tests run)";
    return ModelResult::kSkip;
  }
  const onnx::NodeProto& node = g.node(0);
  if (!node.domain().empty() && node.domain() != "ai.onnx") {
    *err = "node domain '" + node.domain() + "' is not ai.onnx";
    return ModelResult::kError;
  }
  c->op = node.op_type();
  if (c->op != "QuantizeLinear" && c->op != "DequantizeLinear" && c->op != "DynamicQuantizeLinear") {
    *err = "unsupported op '" + c->op +
           "' (qlinear runs QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear)";
    return ModelResult::kError;
  }
  bool have_opset = false;
  for (const auto& o : model.opset_import()) {
    if (!o.domain().empty() && o.domain() != "ai.onnx") continue;
    if (have_opset) {
      *err = "opset_import: ai.onnx is imported twice";
      return ModelResult::kError;
    }
    if (o.version() < 1 || o.version() > INT32_MAX) {
      *err = "opset_import: ai.onnx version " + std::to_string(o.version()) +
             " is outside [1, 2147483647]";
      return ModelResult::kError;
    }
    c->opset = static_cast<int32_t>(o.version());
    have_opset = true;
  }
  if (!have_opset) {
    *err = "model.onnx: no ai.onnx opset_import";
    return ModelResult::kError;
  }
  c->quantize.opset = c->dequantize.opset = c->opset;
  if (!DecodeAttributes(node, c, err)) return ModelResult::kError;

  const size_t max_inputs = c->op == "DynamicQuantizeLinear" ? 1 : 3;
  const size_t min_inputs = c->op == "DynamicQuantizeLinear" ? 1 : 2;
  if (static_cast<size_t>(node.input_size()) < min_inputs ||
      static_cast<size_t>(node.input_size()) > max_inputs) {
    *err = c->op + " takes " + std::to_string(min_inputs) + " to " + std::to_string(max_inputs) +
           " inputs, the node has " + std::to_string(node.input_size());
    return ModelResult::kError;
  }
  c->inputs.assign(node.input().begin(), node.input().end());
  // Every output of these operators is required: a node must name each one.
  const int outputs = c->op == "DynamicQuantizeLinear" ? 3 : 1;
  if (node.output_size() != outputs) {
    *err = c->op + " has " + std::to_string(outputs) + (outputs == 1 ? " output" : " outputs") +
           ", the node names " + std::to_string(node.output_size());
    return ModelResult::kError;
  }
  for (int k = 0; k < outputs; ++k) {
    if (node.output(k).empty()) {
      *err = c->op + ": output " + std::to_string(k) + " has no name (every output is required)";
      return ModelResult::kError;
    }
  }
  c->outputs = static_cast<size_t>(outputs);
  // output_k.pb holds graph output k (ONNX's test runner's convention), which names one of the
  // node's outputs.
  if (g.output_size() == 0) {
    *err = "model.onnx: the graph declares no outputs";
    return ModelResult::kError;
  }
  for (const auto& o : g.output()) {
    size_t k = 0;
    while (k < c->outputs && node.output(static_cast<int>(k)) != o.name()) ++k;
    if (k == c->outputs) {
      *err = "model.onnx: graph output '" + o.name() + "' is not an output of the node";
      return ModelResult::kError;
    }
    c->results.push_back(k);
  }
  for (const auto& t : g.initializer()) {
    Tensor v;
    if (!DecodeTensor(t, "initializer " + t.name(), &v, err)) return ModelResult::kError;
    c->initializers[t.name()] = std::move(v);
  }
  for (const auto& i : g.input()) {
    if (!c->initializers.count(i.name())) c->fed.push_back(i.name());
  }
  return ModelResult::kOk;
}

bool ReadFileCapped(const std::string& path, const std::string& name, std::string* out,
                    std::string* err) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    *err = name + ": " + std::strerror(errno);
    return false;
  }
  if (!S_ISREG(st.st_mode)) {
    *err = name + ": not a regular file";
    return false;
  }
  if (static_cast<uint64_t>(st.st_size) > kMaxFileBytes) {
    *err = name + ": " + std::to_string(st.st_size) + " bytes, over the " + Mib(kMaxFileBytes) +
           " file limit";
    return false;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *err = name + ": cannot open";
    return false;
  }
  out->clear();
  char buf[1 << 16];
  while (in) {
    in.read(buf, sizeof(buf));
    out->append(buf, static_cast<size_t>(in.gcount()));
    if (out->size() > kMaxFileBytes) {
      *err = name + ": grew beyond the " + Mib(kMaxFileBytes) + " file limit while read";
      out->clear();
      return false;
    }
  }
  if (in.bad()) {
    *err = name + ": read error";
    return false;
  }
  return true;
}

namespace {

std::string LastError(qlinear_status s) {
  return std::string(qlinear_status_name(s)) + ": " + qlinear_last_error();
}

bool OutputFits(size_t bytes, std::string* err) {
  if (bytes <= kMaxTensorBytes) return true;
  *err = "the output would take " + std::to_string(bytes) + " bytes, over the " +
         Mib(kMaxTensorBytes) + " tensor limit";
  return false;
}

}  // namespace

bool RunNode(const NodeCase& c, const std::vector<const Tensor*>& in, std::vector<Tensor>* out,
             bool* rejected, std::string* err) {
  *rejected = false;
  auto at = [&](size_t k) -> const Tensor* { return k < in.size() ? in[k] : nullptr; };
  if (c.op == "DynamicQuantizeLinear") {
    if (at(0) == nullptr) {
      *err = "missing input x";
      return false;
    }
    const qlinear_tensor x = at(0)->c();
    Tensor y, s, z;
    y.dtype = QLINEAR_DTYPE_UINT8;
    y.dims = at(0)->dims;
    if (!OutputFits(static_cast<size_t>(at(0)->count()), err)) return false;
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
  size_t bytes = 0;
  const bool quantize = c.op == "QuantizeLinear";
  qlinear_status st =
      quantize ? qlinear_quantize_output_info(&x, &scale, zpp, &c.quantize, &y.dtype, &bytes)
               : qlinear_dequantize_output_info(&x, &scale, zpp, &c.dequantize, &y.dtype, &bytes);
  if (st == QLINEAR_OK) {
    if (!OutputFits(bytes, err)) return false;
    y.bytes.assign(bytes, 0);
    st = quantize ? qlinear_quantize_linear(&x, &scale, zpp, &c.quantize, y.bytes.data(), bytes)
                  : qlinear_dequantize_linear(&x, &scale, zpp, &c.dequantize, y.bytes.data(), bytes);
  }
  if (st != QLINEAR_OK) {
    *rejected = true;
    *err = LastError(st);
    return false;
  }
  *out = {y};
  return true;
}

}  // namespace tools
}  // namespace qlinear
