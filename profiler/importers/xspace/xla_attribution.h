// Device events of XLA programs (JAX, TF2 with XLA) on the HLO
// instructions they ran: each kernel, copy or set that carries an `hlo_op`
// goes to a node for its innermost instruction (found by name in its
// module, or, inside a CUDA-graph command buffer, by the kernel's name),
// named by the framework's name stack; what matches no instruction stays on
// a node for the command buffer. Each execution of a module (told apart by
// the root of its scope-range ids) runs every device-level instruction once
// (loops multiply): those runs, with the instructions' FLOPs, are added
// after the last event, with the graph edges between instruction nodes.
// Not a public API.
#ifndef TFPROF_PROFILER_IMPORTERS_XSPACE_XLA_ATTRIBUTION_H_
#define TFPROF_PROFILER_IMPORTERS_XSPACE_XLA_ATTRIBUTION_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/string_view.h"
#include "profiler/importers/common/trace_builder.h"
#include "profiler/importers/xspace/xla_programs.h"
#include "profiler/importers/xspace/xspace_reader.h"

namespace tfprof {
namespace trace_internal {

// What a device event says about the XLA program it belongs to.
struct XlaEvent {
  std::optional<int64_t> program_id;
  std::string module;        // hlo_module
  std::string hlo_op;        // "a::b": nested ops, innermost last
  absl::string_view kernel;  // the event's name
  std::optional<int64_t> scope_range_id;
  int64_t step = 0;
  int64_t gpu = 0;
  int64_t stream = 0;  // the stream line's id
  int64_t start_ns = 0;
  int64_t duration_ns = 0;
};

class XlaAttribution {
 public:
  XlaAttribution(const std::string& file, TraceBuilder* builder)
      : file_(file), builder_(builder) {}

  // The "/host:metadata" plane: one event metadata per module with its
  // serialized HloProto ("Hlo Proto") and "program_id". False if a module
  // does not decode.
  bool AddModules(const XPlane& metadata);
  // The "/host:__ScopeRangeCallStack__" plane: plane stats whose metadata id
  // is a scope-range id and whose value is its parent's.
  void AddScopeRanges(const XPlane& plane);
  bool has_programs() const { return !programs_.empty(); }

  // The node of a device event with an `hlo_op`; nullopt when its module is
  // not in the capture.
  std::optional<int32_t> NodeOf(const XlaEvent& e);
  // Nodes made for instructions and command buffers (they get their runs
  // from module executions, see Finish()).
  bool IsInstructionNode(int32_t node) const {
    return instruction_nodes_.contains(node);
  }

  // After the last device event: a run (with its FLOPs) of every
  // device-level instruction per module execution, and the graph inputs of
  // the instruction nodes.
  void Finish();
  void AddNotes();

 private:
  // A module execution: module, root scope-range id (-1: none recorded),
  // step, GPU.
  using Execution = std::tuple<const XlaModule*, int64_t, int64_t, int64_t>;
  // Executions by module order (not the modules' addresses), then the rest.
  struct ExecutionLess {
    bool operator()(const Execution& a, const Execution& b) const {
      const size_t ma = std::get<0>(a)->order(), mb = std::get<0>(b)->order();
      if (ma != mb) return ma < mb;
      return std::tie(std::get<1>(a), std::get<2>(a), std::get<3>(a)) <
             std::tie(std::get<1>(b), std::get<2>(b), std::get<3>(b));
    }
    bool operator()(const std::pair<Execution, int64_t>& a,
                    const std::pair<Execution, int64_t>& b) const {
      if ((*this)(a.first, b.first)) return true;
      if ((*this)(b.first, a.first)) return false;
      return a.second < b.second;
    }
  };

  int32_t InstructionNode(const XlaModule& module, const HloInstruction& i);
  int32_t CommandBufferNode(const XlaModule& module, absl::string_view op);
  int64_t RootScope(int64_t id) const;
  // The names of the instruction nodes an instruction reads from, through
  // instructions that do no work of their own.
  std::vector<std::string> Inputs(const XlaModule& module,
                                  const HloInstruction& i) const;

  const std::string& file_;
  TraceBuilder* builder_;
  XlaPrograms programs_;
  absl::flat_hash_map<int64_t, int64_t> scope_parent_;
  absl::flat_hash_map<const HloInstruction*, int32_t> nodes_;
  absl::flat_hash_map<std::pair<const XlaModule*, std::string>, int32_t>
      command_buffers_;
  absl::flat_hash_set<int32_t> instruction_nodes_;
  // First start (ns) of each module execution.
  std::map<Execution, int64_t, ExecutionLess> executions_;
  // Inside command buffers: each module execution's place in the schedule,
  // per stream.
  std::map<std::pair<Execution, int64_t>, size_t, ExecutionLess> cursors_;
  int64_t by_op_ns_ = 0, by_kernel_name_ns_ = 0, command_buffer_ns_ = 0;
  int64_t by_op_ = 0, by_kernel_name_ = 0, command_buffer_ = 0;
  int64_t unknown_module_ = 0, capped_runs_ = 0;
  int64_t flop_instructions_ = 0;
};

}  // namespace trace_internal
}  // namespace tfprof

#endif  // TFPROF_PROFILER_IMPORTERS_XSPACE_XLA_ATTRIBUTION_H_
