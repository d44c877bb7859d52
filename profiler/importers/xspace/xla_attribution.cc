#include "profiler/importers/xspace/xla_attribution.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace tfprof {
namespace trace_internal {
namespace {

// Runs of one instruction per module execution are capped (a loop with a
// huge recorded trip count would add that many records).
constexpr int64_t kMaxRunsPerExecution = 1 << 16;

absl::string_view Innermost(absl::string_view hlo_op) {
  const size_t sep = hlo_op.rfind("::");
  return sep == absl::string_view::npos ? hlo_op : hlo_op.substr(sep + 2);
}

// XLA's PrimitiveType as the peak table's element types.
Dtype DtypeOf(int32_t primitive_type) {
  if (IsXlaFp8(primitive_type)) return Dtype::kFp8;
  switch (primitive_type) {
    case 12:
      return Dtype::kFp64;
    case 11:
      return Dtype::kFp32;
    case 16:
      return Dtype::kBf16;
    case 10:
      return Dtype::kFp16;
    case 0:
    case 13:
    case 14:
    case 15:
    case 17:
    case 18:
      return Dtype::kUnknown;
    default:
      return Dtype::kInt;
  }
}

std::string Percent(int64_t part, int64_t whole) {
  return absl::StrFormat("%.1f%%", whole > 0 ? 100.0 * part / whole : 0.0);
}

}  // namespace

bool XlaAttribution::AddModules(const XPlane& metadata) {
  PlaneStats stats(metadata);
  const std::optional<int64_t> hlo_id = stats.Id("Hlo Proto");
  const std::optional<int64_t> program_id = stats.Id("program_id");
  if (!hlo_id.has_value()) return true;
  bool ok = true;
  // In id order: a protobuf map's own order changes from run to run, and
  // the modules' order decides which of two with one name a bare name
  // finds, and the order their nodes are made in.
  std::vector<std::pair<int64_t, const XEventMetadata*>> by_id;
  for (const auto& [id, md] : metadata.event_metadata()) {
    by_id.emplace_back(id, &md);
  }
  std::sort(by_id.begin(), by_id.end());
  for (const auto& [id, metadata_ptr] : by_id) {
    const XEventMetadata& md = *metadata_ptr;
    const XStat* hlo = nullptr;
    std::optional<int64_t> program;
    for (const XStat& s : md.stats()) {
      if (s.metadata_id() == *hlo_id) hlo = &s;
      if (program_id.has_value() && s.metadata_id() == *program_id) {
        program = PlaneStats::IntOf(s);
      }
    }
    if (hlo == nullptr) continue;
    const std::string& bytes = hlo->value_case() == XStat::kBytesValue
                                   ? hlo->bytes_value()
                                   : hlo->str_value();
    ok &= programs_.Add(program.value_or(-1 - id), bytes);
  }
  return ok;
}

void XlaAttribution::AddScopeRanges(const XPlane& plane) {
  for (const XStat& s : plane.stats()) {
    std::optional<int64_t> parent = PlaneStats::IntOf(s);
    if (parent.has_value()) scope_parent_[s.metadata_id()] = *parent;
  }
}

int64_t XlaAttribution::RootScope(int64_t id) const {
  // A bounded walk: a malformed tree may have cycles.
  for (int hops = 0; hops < 1024; ++hops) {
    auto it = scope_parent_.find(id);
    if (it == scope_parent_.end() || it->second == id) break;
    id = it->second;
  }
  return id;
}

std::optional<int32_t> XlaAttribution::NodeOf(const XlaEvent& e) {
  const XlaModule* module = programs_.Find(e.program_id, e.module);
  if (module == nullptr) {
    ++unknown_module_;
    return std::nullopt;
  }
  const Execution key{
      module,
      e.scope_range_id.has_value() ? RootScope(*e.scope_range_id) : int64_t{-1},
      e.step, e.gpu};
  auto [it, added] = executions_.try_emplace(key, e.start_ns);
  if (!added) it->second = std::min(it->second, e.start_ns);
  const absl::string_view op = Innermost(e.hlo_op);
  const HloInstruction* i = module->Find(op);
  if (i != nullptr && !i->pass_through) {
    ++by_op_;
    by_op_ns_ += e.duration_ns;
    return InstructionNode(*module, *i);
  }
  // Inside a command buffer: the kernel's name tells the instruction.
  size_t& cursor = cursors_[{key, e.stream}];
  if ((i = module->NextByKernelName(e.kernel, &cursor)) != nullptr) {
    ++by_kernel_name_;
    by_kernel_name_ns_ += e.duration_ns;
    return InstructionNode(*module, *i);
  }
  ++command_buffer_;
  command_buffer_ns_ += e.duration_ns;
  return CommandBufferNode(*module, op);
}

int32_t XlaAttribution::InstructionNode(const XlaModule& module,
                                        const HloInstruction& i) {
  auto it = nodes_.find(&i);
  if (it != nodes_.end()) return it->second;
  const NameStack stack = ParseNameStack(i.op_name);
  std::string path = stack.scopes.empty() ? module.FunctionName()
                                          : absl::StrJoin(stack.scopes, "/");
  if (stack.backward) path += "/backward";
  absl::StrAppend(&path, "/", i.name);
  const int32_t node =
      builder_->Node(path, stack.op_type.empty() ? i.category : stack.op_type);
  builder_->SetAttr(node, kXlaCategoryAttr, i.category);
  builder_->SetCode(node, module.CallStack(i.stack_frame_id));
  nodes_.emplace(&i, node);
  instruction_nodes_.insert(node);
  return node;
}

int32_t XlaAttribution::CommandBufferNode(const XlaModule& module,
                                          absl::string_view op) {
  auto key = std::make_pair(&module, std::string(op));
  auto it = command_buffers_.find(key);
  if (it != command_buffers_.end()) return it->second;
  const int32_t node = builder_->Node(
      absl::StrCat(module.FunctionName(), "/", op), "command_buffer");
  builder_->SetAttr(node, kXlaCategoryAttr, "command_buffer");
  command_buffers_.emplace(std::move(key), node);
  instruction_nodes_.insert(node);
  return node;
}

std::vector<std::string> XlaAttribution::Inputs(const XlaModule& module,
                                                const HloInstruction& i) const {
  std::vector<std::string> out;
  absl::flat_hash_set<const HloInstruction*> seen;
  std::vector<std::pair<const HloInstruction*, int64_t>> todo;
  for (auto it = i.operands.rbegin(); it != i.operands.rend(); ++it) {
    todo.emplace_back(&i, *it);
  }
  while (!todo.empty() && seen.size() < 4096) {
    auto [of, id] = todo.back();
    todo.pop_back();
    const HloInstruction* o = module.Operand(*of, id);
    if (o == nullptr || !seen.insert(o).second) continue;
    auto node = nodes_.find(o);
    if (node != nodes_.end()) {
      out.push_back(builder_->NodeName(node->second));
    } else if (o->pass_through && !o->parameter) {
      for (auto it = o->operands.rbegin(); it != o->operands.rend(); ++it) {
        todo.emplace_back(o, *it);
      }
    }
  }
  return out;
}

void XlaAttribution::Finish() {
  for (const auto& [execution, start] : executions_) {
    const auto& [module, root, step, gpu] = execution;
    const std::string device = GpuDevice(gpu);
    for (const HloInstruction& i : module->instructions()) {
      if (!i.kernel_level || i.pass_through) continue;
      auto it = nodes_.find(&i);
      if (it == nodes_.end() && i.flops <= 0) continue;
      const int32_t node =
          it != nodes_.end() ? it->second : InstructionNode(*module, i);
      int64_t runs = i.runs_per_execution;
      if (runs > kMaxRunsPerExecution) {
        runs = kMaxRunsPerExecution;
        ++capped_runs_;
      }
      for (int64_t r = 0; r < runs; ++r) {
        builder_->AddExec(step, device, node, start, 0);
        if (i.flops <= 0) continue;
        builder_->AddFloatOps(node, i.flops);
        builder_->AddOpCost(node, {0, i.bytes, DtypeOf(i.flop_type), i.flops});
      }
    }
    for (const auto& [key, node] : command_buffers_) {
      if (key.first == module) builder_->AddExec(step, device, node, start, 0);
    }
  }
  for (const auto& [instruction, node] : nodes_) {
    if (instruction->flops > 0) ++flop_instructions_;
  }
  for (const auto& m : programs_.modules()) {
    for (const HloInstruction& i : m->instructions()) {
      auto it = nodes_.find(&i);
      if (it != nodes_.end()) builder_->SetInputs(it->second, Inputs(*m, i));
    }
  }
}

void XlaAttribution::AddNotes() {
  if (programs_.empty()) return;
  builder_->Note(file_, absl::StrCat(programs_.size(),
                                     " XLA modules read from /host:metadata"));
  const int64_t linked_ns = by_op_ns_ + by_kernel_name_ns_ + command_buffer_ns_;
  builder_->Count(file_, "GPU events on the HLO instruction their hlo_op names",
                  by_op_);
  if (by_kernel_name_ + command_buffer_ > 0) {
    builder_->Note(
        file_,
        absl::StrCat(
            "CUDA-graph command buffers: ", by_kernel_name_,
            " kernels put on the HLO instruction their name matches (",
            Percent(by_kernel_name_ns_, linked_ns),
            " of the XLA device time); ", command_buffer_, " events (",
            Percent(command_buffer_ns_, linked_ns), ", ",
            command_buffer_ns_ / 1000,
            " us) match no instruction and stay on the command buffer's node"));
  }
  builder_->Count(file_,
                  "GPU events of XLA modules missing from the capture, linked "
                  "as other events",
                  unknown_module_);
  if (flop_instructions_ > 0) {
    builder_->Note(
        file_,
        absl::StrCat("float ops from the HLO of ", flop_instructions_,
                     " instructions (dots, convolutions, cuBLAS and cuDNN "
                     "calls), once per module execution"));
  }
  int64_t unknown_loops = 0;
  for (const auto& m : programs_.modules()) {
    unknown_loops += m->unknown_trip_counts();
  }
  builder_->Count(file_,
                  "XLA loops without a recorded trip count (their bodies count "
                  "one run per execution)",
                  unknown_loops);
  builder_->Count(file_,
                  "instructions with more than 65536 runs per execution, "
                  "capped",
                  capped_runs_);
}

}  // namespace trace_internal
}  // namespace tfprof
