#include "profiler/importers/xspace/xla_programs.h"

#include <simdjson.h>

#include <algorithm>
#include <climits>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "profiler/base/saturate.h"
#include "proto/hlo.pb.h"

namespace tfprof {
namespace trace_internal {
namespace {

namespace hlo = ::tfprof::xla;

// --- Name stacks.

// JAX's transformations, which wrap a level's name: "jvp(block0)".
bool IsWrapper(absl::string_view f) {
  static const auto* kWrappers = new absl::flat_hash_set<absl::string_view>{
      "jit",       "pjit",           "jvp",       "vjp",
      "transpose", "vmap",           "pmap",      "xmap",
      "remat",     "checkpoint",     "shard_map", "custom_jvp_call",
      "linearize", "custom_vjp_call"};
  return kWrappers->contains(f);
}

// Splits on '/' outside parentheses and brackets.
std::vector<absl::string_view> SplitLevels(absl::string_view s) {
  std::vector<absl::string_view> out;
  int depth = 0;
  size_t begin = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '(' || c == '[') ++depth;
    if ((c == ')' || c == ']') && depth > 0) --depth;
    if (c == '/' && depth == 0) {
      out.push_back(s.substr(begin, i - begin));
      begin = i + 1;
    }
  }
  out.push_back(s.substr(begin));
  return out;
}

// One level, its wrappers removed (recursively), as scopes.
void Unwrap(absl::string_view level, NameStack* out, int depth = 0) {
  level = absl::StripAsciiWhitespace(level);
  const size_t open = level.find('(');
  if (depth < 32 && open != absl::string_view::npos && open > 0 &&
      absl::EndsWith(level, ")") && IsWrapper(level.substr(0, open))) {
    if (level.substr(0, open) == "transpose") out->backward = true;
    absl::string_view inner = level.substr(open + 1, level.size() - open - 2);
    for (absl::string_view l : SplitLevels(inner)) Unwrap(l, out, depth + 1);
    return;
  }
  if (!level.empty()) out->scopes.emplace_back(level);
}

// "[a-z_][a-z0-9_]*" with an optional "[...]" suffix; the op type without
// the suffix, or "" when the level does not read as an op type.
std::string OpTypeOf(absl::string_view level) {
  const size_t bracket = level.find('[');
  absl::string_view head = level.substr(0, bracket);
  if (bracket != absl::string_view::npos && !absl::EndsWith(level, "]")) {
    return "";
  }
  if (head.empty() || absl::ascii_isdigit(head[0])) return "";
  for (char c : head) {
    if (!(absl::ascii_islower(c) || absl::ascii_isdigit(c) || c == '_')) {
      return "";
    }
  }
  return std::string(head);
}

// --- Shapes and FLOPs.

int64_t Product(const google::protobuf::RepeatedField<int64_t>& dims) {
  int64_t p = 1;
  for (int64_t d : dims) p = SatMul(p, std::max<int64_t>(d, 0));
  return p;
}

// The array shape of a result: the first element of a tuple (custom calls
// return (result, workspace)).
const hlo::ShapeProto& ArrayShape(const hlo::ShapeProto& shape) {
  constexpr int kTuple = 13;
  if (shape.element_type() == kTuple && shape.tuple_shapes_size() > 0) {
    return ArrayShape(shape.tuple_shapes(0));
  }
  return shape;
}

// Bytes per element of XLA's PrimitiveType (0: not an array type).
int64_t ElementBytes(int32_t type) {
  if (IsXlaFp8(type)) return 1;
  switch (type) {
    case 1:
    case 2:
    case 6:
      return 1;  // pred, s8, u8
    case 3:
    case 7:
    case 10:
    case 16:
      return 2;  // s16, u16, f16, bf16
    case 4:
    case 8:
    case 11:
      return 4;  // s32, u32, f32
    case 5:
    case 9:
    case 12:
    case 15:
      return 8;  // s64, u64, f64, c64
    case 18:
      return 16;  // c128
    default:
      return 0;
  }
}

int64_t ArrayBytes(const hlo::ShapeProto& shape) {
  const hlo::ShapeProto& a = ArrayShape(shape);
  return SatMul(Product(a.dimensions()), ElementBytes(a.element_type()));
}

int64_t Dim(const hlo::ShapeProto& shape, int64_t d) {
  if (d < 0 || d >= shape.dimensions_size()) return 0;
  return std::max<int64_t>(shape.dimensions(static_cast<int>(d)), 0);
}

// 2 x (result elements) x (product of the contracting dimensions).
int64_t DotFlops(const hlo::ShapeProto& result, const hlo::ShapeProto& lhs,
                 const std::vector<int64_t>& lhs_contracting) {
  int64_t k = 1;
  for (int64_t d : lhs_contracting) k = SatMul(k, Dim(lhs, d));
  return SatMul(SatMul(2, Product(ArrayShape(result).dimensions())), k);
}

// 2 x (output elements) x (input features per group) x (kernel window).
int64_t ConvFlops(const hlo::ShapeProto& output, const hlo::ShapeProto& kernel,
                  const hlo::ConvolutionDimensionNumbers& dn) {
  int64_t per_output = Dim(kernel, dn.kernel_input_feature_dimension());
  for (int64_t d : dn.kernel_spatial_dimensions()) {
    per_output = SatMul(per_output, Dim(kernel, d));
  }
  return SatMul(SatMul(2, Product(ArrayShape(output).dimensions())),
                per_output);
}

// The lhs contracting dimensions of a cuBLAS call's backend config (JSON:
// {"gemm_backend_config": {"dot_dimension_numbers":
// {"lhs_contracting_dimensions": ["1"], ...}}}); nullopt if absent.
std::optional<std::vector<int64_t>> GemmContracting(absl::string_view json) {
  simdjson::dom::parser parser;
  simdjson::padded_string padded(json.data(), json.size());
  simdjson::dom::element doc;
  if (parser.parse(padded).get(doc) != simdjson::SUCCESS) return std::nullopt;
  simdjson::dom::array dims;
  if (doc.at_pointer("/gemm_backend_config/dot_dimension_numbers/"
                     "lhs_contracting_dimensions")
          .get(dims) != simdjson::SUCCESS) {
    return std::nullopt;
  }
  std::vector<int64_t> out;
  for (simdjson::dom::element d : dims) {
    int64_t v = 0;
    std::string_view text;
    if (d.get(text) == simdjson::SUCCESS) {
      if (!absl::SimpleAtoi(absl::string_view(text.data(), text.size()), &v)) {
        return std::nullopt;
      }
    } else if (d.get(v) != simdjson::SUCCESS) {
      return std::nullopt;
    }
    out.push_back(v);
  }
  return out;
}

// A while loop's trip count when XLA recorded it in the backend config
// ({"known_trip_count": {"n": "8"}}).
std::optional<int64_t> KnownTripCount(absl::string_view json) {
  if (json.empty()) return std::nullopt;
  simdjson::dom::parser parser;
  simdjson::padded_string padded(json.data(), json.size());
  simdjson::dom::element doc, n;
  if (parser.parse(padded).get(doc) != simdjson::SUCCESS ||
      doc.at_pointer("/known_trip_count/n").get(n) != simdjson::SUCCESS) {
    return std::nullopt;
  }
  int64_t v = 0;
  std::string_view text;
  if (n.get(text) == simdjson::SUCCESS) {
    if (!absl::SimpleAtoi(absl::string_view(text.data(), text.size()), &v)) {
      return std::nullopt;
    }
  } else if (n.get(v) != simdjson::SUCCESS) {
    return std::nullopt;
  }
  if (v < 0) return std::nullopt;
  return v;
}

bool PassThrough(absl::string_view opcode) {
  return opcode == "bitcast" || opcode == "get-tuple-element" ||
         opcode == "tuple" || opcode == "parameter" || opcode == "constant" ||
         opcode == "after-all" || opcode == "add-dependency" ||
         opcode == "opt-barrier" || opcode == "domain";
}

// XLA names a kernel after its instruction, with every character other
// than [A-Za-z0-9_] made '_'.
std::string KernelName(absl::string_view instruction) {
  std::string s(instruction);
  for (char& c : s) {
    if (!absl::ascii_isalnum(c) && c != '_') c = '_';
  }
  return s;
}

}  // namespace

NameStack ParseNameStack(absl::string_view op_name) {
  NameStack out;
  if (op_name.empty()) return out;
  std::vector<absl::string_view> levels = SplitLevels(op_name);
  absl::string_view last = absl::StripAsciiWhitespace(levels.back());
  std::string type = OpTypeOf(last);
  if (!type.empty()) levels.pop_back();
  for (absl::string_view level : levels) Unwrap(level, &out);
  out.op_type = std::move(type);
  return out;
}

// Reads one module: which computations run on their own (kernel level) and
// how often per execution, and each kernel-level instruction's FLOPs.
class XlaModuleBuilder {
 public:
  XlaModuleBuilder(const hlo::HloModuleProto& proto, XlaModule* out)
      : proto_(proto), out_(out) {}

  void Build() {
    for (const hlo::HloComputationProto& c : proto_.computations()) {
      computations_.emplace(c.id(), &c);
      for (const hlo::HloInstructionProto& i : c.instructions()) {
        instructions_.emplace(std::make_pair(c.id(), i.id()), &i);
      }
    }
    Walk(proto_.entry_computation_id(), 1, 0);
    IndexKernels();
    ReadStackFrames();
  }

 private:
  const hlo::HloInstructionProto* Operand(const hlo::HloComputationProto& c,
                                          const hlo::HloInstructionProto& i,
                                          int k) const {
    if (k >= i.operand_ids_size()) return nullptr;
    auto it = instructions_.find(std::make_pair(c.id(), i.operand_ids(k)));
    return it == instructions_.end() ? nullptr : it->second;
  }

  // The FLOPs of one execution of an instruction of computation `c`.
  int64_t Flops(const hlo::HloComputationProto& c,
                const hlo::HloInstructionProto& i, int depth) {
    const std::string& op = i.opcode();
    if (op == "dot") {
      const hlo::HloInstructionProto* lhs = Operand(c, i, 0);
      if (lhs == nullptr) return 0;
      const auto& dn = i.dot_dimension_numbers().lhs_contracting_dimensions();
      return DotFlops(i.shape(), lhs->shape(), {dn.begin(), dn.end()});
    }
    if (op == "convolution") {
      const hlo::HloInstructionProto* kernel = Operand(c, i, 1);
      if (kernel == nullptr) return 0;
      return ConvFlops(i.shape(), kernel->shape(),
                       i.convolution_dimension_numbers());
    }
    if (op == "custom-call") return CustomCallFlops(c, i);
    if (op == "fusion" && depth < 16) {
      int64_t sum = 0;
      for (int64_t id : i.called_computation_ids()) {
        auto it = computations_.find(id);
        if (it == computations_.end()) continue;
        for (const hlo::HloInstructionProto& f : it->second->instructions()) {
          sum = SatAdd(sum, Flops(*it->second, f, depth + 1));
        }
      }
      return sum;
    }
    return 0;
  }

  // The element type of an instruction's float ops: its first dot's,
  // convolution's or library call's left operand (0 when none).
  int32_t FlopType(const hlo::HloComputationProto& c,
                   const hlo::HloInstructionProto& i, int depth) {
    const std::string& op = i.opcode();
    if (op == "dot" || op == "convolution" || op == "custom-call") {
      const hlo::HloInstructionProto* lhs = Operand(c, i, 0);
      return lhs != nullptr ? ArrayShape(lhs->shape()).element_type() : 0;
    }
    if (op != "fusion" || depth >= 16) return 0;
    for (int64_t id : i.called_computation_ids()) {
      auto it = computations_.find(id);
      if (it == computations_.end()) continue;
      for (const hlo::HloInstructionProto& f : it->second->instructions()) {
        if (Flops(*it->second, f, depth + 1) > 0) {
          return FlopType(*it->second, f, depth + 1);
        }
      }
    }
    return 0;
  }

  // The bytes an instruction reads and writes: its operands' and result's
  // arrays.
  int64_t Bytes(const hlo::HloComputationProto& c,
                const hlo::HloInstructionProto& i) {
    int64_t bytes = ArrayBytes(i.shape());
    for (int k = 0; k < i.operand_ids_size(); ++k) {
      const hlo::HloInstructionProto* o = Operand(c, i, k);
      if (o != nullptr) bytes = SatAdd(bytes, ArrayBytes(o->shape()));
    }
    return bytes;
  }

  // cuBLAS gemms (dimension numbers in the backend config) and cuDNN
  // convolutions (dimension numbers on the instruction).
  int64_t CustomCallFlops(const hlo::HloComputationProto& c,
                          const hlo::HloInstructionProto& i) {
    const std::string& target = i.custom_call_target();
    if (absl::StrContains(target, "cublas")) {
      const hlo::HloInstructionProto* lhs = Operand(c, i, 0);
      std::optional<std::vector<int64_t>> k =
          GemmContracting(i.backend_config());
      if (lhs == nullptr || !k.has_value()) return 0;
      return DotFlops(i.shape(), lhs->shape(), *k);
    }
    if (!absl::StartsWith(target, "__cudnn$conv")) return 0;
    const hlo::HloInstructionProto* a = Operand(c, i, 0);
    const hlo::HloInstructionProto* b = Operand(c, i, 1);
    if (a == nullptr || b == nullptr) return 0;
    const auto& dn = i.convolution_dimension_numbers();
    if (absl::StrContains(target, "BackwardInput")) {
      return ConvFlops(a->shape(), b->shape(), dn);  // (d output, kernel)
    }
    if (absl::StrContains(target, "BackwardFilter")) {
      return ConvFlops(b->shape(), i.shape(), dn);  // (input, d output)
    }
    return ConvFlops(i.shape(), b->shape(), dn);  // (input, kernel)
  }

  // Records computation `id` as kernel level, run `runs` times per module
  // execution, and what it calls.
  void Walk(int64_t id, int64_t runs, int depth) {
    auto it = computations_.find(id);
    if (it == computations_.end() || depth > 64 || !walked_.insert(id).second) {
      return;
    }
    const hlo::HloComputationProto& c = *it->second;
    walk_order_.push_back(id);
    for (const hlo::HloInstructionProto& i : c.instructions()) {
      Add(c, i, runs, depth);
      const std::string& op = i.opcode();
      int64_t called_runs = runs;
      if (op == "while") {
        std::optional<int64_t> n = KnownTripCount(i.backend_config());
        if (n.has_value()) {
          called_runs = SatMul(runs, *n);
        } else {
          ++out_->unknown_trip_counts_;
        }
      } else if (op != "conditional" && op != "call" &&
                 !absl::StartsWith(op, "async-")) {
        continue;  // fused or applied computations run inside a kernel
      }
      for (int64_t callee : i.called_computation_ids()) {
        Walk(callee, called_runs, depth + 1);
      }
    }
  }

  void Add(const hlo::HloComputationProto& c, const hlo::HloInstructionProto& i,
           int64_t runs, int depth) {
    HloInstruction h;
    h.name = i.name();
    h.computation = c.id();
    h.category = i.opcode();
    if (!i.fusion_kind().empty()) {
      h.category = absl::StrCat(i.opcode(), "(", i.fusion_kind(), ")");
    } else if (!i.custom_call_target().empty()) {
      h.category = absl::StrCat(i.opcode(), "(", i.custom_call_target(), ")");
    }
    h.op_name = i.metadata().op_name();
    h.stack_frame_id = i.metadata().stack_frame_id();
    h.operands.assign(i.operand_ids().begin(), i.operand_ids().end());
    h.flops = Flops(c, i, depth);
    if (h.flops > 0) h.flop_type = FlopType(c, i, depth);
    h.bytes = Bytes(c, i);
    h.runs_per_execution = runs;
    h.kernel_level = true;
    h.pass_through = PassThrough(i.opcode());
    h.parameter = i.opcode() == "parameter";
    const size_t index = out_->instrs_.size();
    out_->by_id_.emplace(std::make_pair(c.id(), i.id()), index);
    out_->by_name_.emplace(h.name, index);
    out_->instrs_.push_back(std::move(h));
  }

  // The device-level instructions in the order they run (each computation's
  // schedule, else its order), their fingerprints and kernel names.
  void IndexKernels() {
    for (int64_t c : walk_order_) {
      auto seq = proto_.schedule().sequences().find(c);
      std::vector<int64_t> ids;
      if (seq != proto_.schedule().sequences().end()) {
        ids.assign(seq->second.instruction_ids().begin(),
                   seq->second.instruction_ids().end());
      } else {
        for (const auto& i : computations_.at(c)->instructions()) {
          ids.push_back(i.id());
        }
      }
      for (int64_t id : ids) {
        auto it = out_->by_id_.find(std::make_pair(c, id));
        auto proto = instructions_.find(std::make_pair(c, id));
        if (it == out_->by_id_.end() || proto == instructions_.end()) continue;
        HloInstruction& h = out_->instrs_[it->second];
        if (h.pass_through) continue;
        h.fingerprint =
            absl::HashOf(Structure(*computations_.at(c), *proto->second, 0));
        out_->by_kernel_name_.emplace(KernelName(h.name), it->second);
        out_->by_fingerprint_[h.fingerprint].push_back(out_->schedule_.size());
        out_->schedule_.push_back(it->second);
      }
    }
  }

  // What makes an instruction's kernel: everything but names, ids and
  // metadata (operands by their shapes, fused computations by structure).
  std::string Structure(const hlo::HloComputationProto& c,
                        const hlo::HloInstructionProto& i, int depth) {
    hlo::HloInstructionProto copy = i;
    copy.clear_name();
    copy.clear_id();
    copy.clear_metadata();
    copy.clear_operand_ids();
    copy.clear_called_computation_ids();
    copy.GetReflection()->MutableUnknownFields(&copy)->Clear();
    std::string out = copy.SerializeAsString();
    for (int k = 0; k < i.operand_ids_size(); ++k) {
      const hlo::HloInstructionProto* o = Operand(c, i, k);
      absl::StrAppend(
          &out, "|",
          o != nullptr ? o->shape().SerializeAsString() : std::string("?"));
    }
    if (depth > 8) return out;
    for (int64_t id : i.called_computation_ids()) {
      auto cc = computations_.find(id);
      if (cc == computations_.end()) continue;
      absl::StrAppend(&out, "{");
      // Operands inside a computation by their place in it.
      absl::flat_hash_map<int64_t, int> place;
      for (const auto& f : cc->second->instructions()) {
        const int at = static_cast<int>(place.size());
        place.emplace(f.id(), at);
        absl::StrAppend(&out, Structure(*cc->second, f, depth + 1), "<");
        for (int64_t o : f.operand_ids()) {
          auto p = place.find(o);
          absl::StrAppend(&out, p != place.end() ? p->second : -1, ",");
        }
        absl::StrAppend(&out, ">");
      }
      absl::StrAppend(&out, "}");
    }
    return out;
  }

  void ReadStackFrames() {
    const hlo::StackFrameIndexProto& s = proto_.stack_frame_index();
    out_->files_.assign(s.file_names().begin(), s.file_names().end());
    out_->functions_.assign(s.function_names().begin(),
                            s.function_names().end());
    for (const auto& l : s.file_locations()) {
      out_->locations_.push_back(
          {l.file_name_id(), l.function_name_id(), l.line()});
    }
    for (const auto& f : s.stack_frames()) {
      out_->frames_.push_back({f.file_location_id(), f.parent_frame_id()});
    }
  }

  const hlo::HloModuleProto& proto_;
  XlaModule* out_;
  absl::flat_hash_map<int64_t, const hlo::HloComputationProto*> computations_;
  // (computation id, instruction id) -> instruction.
  absl::flat_hash_map<std::pair<int64_t, int64_t>,
                      const hlo::HloInstructionProto*>
      instructions_;
  absl::flat_hash_set<int64_t> walked_;
  std::vector<int64_t> walk_order_;  // kernel-level computations
};

bool XlaModule::Parse(absl::string_view hlo_proto) {
  hlo::HloProto proto;
  if (hlo_proto.size() > static_cast<size_t>(INT_MAX) ||
      !proto.ParseFromArray(hlo_proto.data(),
                            static_cast<int>(hlo_proto.size()))) {
    return false;
  }
  name_ = proto.hlo_module().name();
  XlaModuleBuilder(proto.hlo_module(), this).Build();
  return true;
}

std::string XlaModule::FunctionName() const {
  absl::string_view n = name_;
  absl::ConsumePrefix(&n, "jit_");
  return n.empty() ? name_ : std::string(n);
}

const HloInstruction* XlaModule::Find(absl::string_view name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : &instrs_[it->second];
}

const HloInstruction* XlaModule::FindByKernelName(
    absl::string_view kernel) const {
  auto it = by_kernel_name_.find(kernel);
  return it == by_kernel_name_.end() ? nullptr : &instrs_[it->second];
}

const HloInstruction* XlaModule::NextByKernelName(absl::string_view kernel,
                                                  size_t* cursor) const {
  const HloInstruction* named = FindByKernelName(kernel);
  if (named == nullptr) return nullptr;
  auto same = by_fingerprint_.find(named->fingerprint);
  if (same == by_fingerprint_.end()) return named;
  auto next =
      std::lower_bound(same->second.begin(), same->second.end(), *cursor);
  if (next == same->second.end()) return named;
  *cursor = *next + 1;
  return &instrs_[schedule_[*next]];
}

const HloInstruction* XlaModule::Operand(const HloInstruction& of,
                                         int64_t id) const {
  auto it = by_id_.find(std::make_pair(of.computation, id));
  return it == by_id_.end() ? nullptr : &instrs_[it->second];
}

std::vector<Frame> XlaModule::CallStack(int32_t stack_frame_id) const {
  std::vector<Frame> frames;
  // Ids are 1-based; each frame names its caller (0: none).
  for (int32_t id = stack_frame_id;
       id > 0 && static_cast<size_t>(id) <= frames_.size() &&
       frames.size() < kMaxFrames;
       id = frames_[id - 1].parent) {
    const StackFrame& f = frames_[id - 1];
    if (f.location <= 0 ||
        static_cast<size_t>(f.location) > locations_.size()) {
      break;
    }
    const FileLocation& l = locations_[f.location - 1];
    Frame frame;
    if (l.file > 0 && static_cast<size_t>(l.file) <= files_.size()) {
      frame.file = files_[l.file - 1];
    }
    if (l.function > 0 &&
        static_cast<size_t>(l.function) <= functions_.size()) {
      frame.function = functions_[l.function - 1];
    }
    frame.lineno = l.line;
    frames.push_back(std::move(frame));
    if (f.parent == id) break;
  }
  std::reverse(frames.begin(), frames.end());
  return frames;
}

bool XlaPrograms::Add(int64_t program_id, absl::string_view hlo_proto) {
  auto module = std::make_unique<XlaModule>();
  if (!module->Parse(hlo_proto)) return false;
  module->order_ = modules_.size();
  by_program_.emplace(program_id, module.get());
  by_name_.emplace(module->name(), module.get());
  modules_.push_back(std::move(module));
  return true;
}

const XlaModule* XlaPrograms::Find(std::optional<int64_t> program_id,
                                   absl::string_view module_name) const {
  if (program_id.has_value()) {
    auto it = by_program_.find(*program_id);
    if (it != by_program_.end()) return it->second;
  }
  auto it = by_name_.find(module_name);
  return it == by_name_.end() ? nullptr : it->second;
}

bool IsXlaFp8(int32_t type) {
  switch (type) {
    case 19:
    case 20:
    case 23:
    case 24:
    case 25:
    case 28:
    case 29:
    case 33:
      return true;
    default:
      return false;
  }
}

}  // namespace trace_internal
}  // namespace tfprof
