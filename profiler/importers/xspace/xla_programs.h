// The compiled XLA programs of a JAX or TF2 capture (the HloProtos on an
// XSpace's "/host:metadata" plane), as the XSpace importer uses them: the
// instructions that run on the device ("kernel level": outside fusions),
// found by name or by the name of the kernel XLA generated for them; each
// one's scope from the framework's name stack (JAX's transformation
// wrappers stripped, backward marked), its framework op type, its HLO
// category, its Python call stack, its operands, its FLOPs per execution
// (dots, convolutions and cuBLAS/cuDNN calls, fused ones included) and how
// many times it runs per execution of its module (loops). Not a public API.
#ifndef TFPROF_PROFILER_IMPORTERS_XSPACE_XLA_PROGRAMS_H_
#define TFPROF_PROFILER_IMPORTERS_XSPACE_XLA_PROGRAMS_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "profiler/importers/common/trace_builder.h"

namespace tfprof {
namespace trace_internal {

// Whether XLA's PrimitiveType `type` is one of its 8-bit float kinds.
bool IsXlaFp8(int32_t type);

// A name stack ("jit(train_step)/transpose(jvp(block0))/mlp/dot_general")
// read as tfprof shows it.
struct NameStack {
  // The scopes, outermost first, with transformation wrappers (jit, jvp,
  // transpose, vmap, remat, checkpoint, pmap, ...) stripped and empty
  // levels dropped: {"train_step", "block0", "mlp"}.
  std::vector<std::string> scopes;
  // Some level was inside transpose(...): the op is part of a backward pass.
  bool backward = false;
  // The framework op type: the last level when it reads as one
  // ([a-z_][a-z0-9_]* with an optional [...] suffix, which is dropped),
  // else "" (and that level stays a scope).
  std::string op_type;
};
NameStack ParseNameStack(absl::string_view op_name);

// One instruction of a module.
struct HloInstruction {
  std::string name;         // "gemm_fusion_dot.125"
  int64_t computation = 0;  // the id of its computation
  std::string category;  // "fusion(kCustom)", "custom-call(__cublas$lt$matmul)"
  std::string op_name;   // the framework's name stack, "" when none
  int32_t stack_frame_id = 0;
  std::vector<int64_t> operands;  // ids of instructions of its computation
  int64_t flops = 0;              // per execution
  // XLA's PrimitiveType of the float ops' operands (11 f32, 16 bf16, ...;
  // 0 without float ops), and the bytes read and written per execution.
  int32_t flop_type = 0;
  int64_t bytes = 0;
  // Executions per execution of the module: the product of the known trip
  // counts of the loops around it (1 outside loops).
  int64_t runs_per_execution = 1;
  bool kernel_level = false;  // in a computation that is not fused or applied
  // Equal for instructions XLA compiles to the same kernel: opcode, kinds,
  // shapes and, for fusions, the fused computation's structure.
  uint64_t fingerprint = 0;
  bool pass_through = false;  // no work of its own (bitcast, tuple, ...)
  bool parameter = false;
};

class XlaModule {
 public:
  // Reads a serialized HloProto; false when it does not decode.
  bool Parse(absl::string_view hlo_proto);

  const std::string& name() const { return name_; }
  // Its place among the capture's modules (in metadata id order).
  size_t order() const { return order_; }
  // The module's function, for instructions without a name stack:
  // "jit_train_step" -> "train_step".
  std::string FunctionName() const;

  // A kernel-level instruction by name; null if none.
  const HloInstruction* Find(absl::string_view name) const;
  // The kernel-level instruction a kernel was generated for, by XLA's naming
  // ("gemm_fusion_dot_125" for "gemm_fusion_dot.125"); null if none.
  const HloInstruction* FindByKernelName(absl::string_view kernel) const;
  // The same for a kernel launched inside a command buffer, where launches
  // follow the schedule: XLA compiles identical instructions once, names the
  // kernel after one of them and launches it for each. So a launch of kernel
  // K is the first instruction at or after `*cursor` in the schedule that is
  // identical to K's namesake (the namesake itself when none is left);
  // `*cursor` moves past it. Null if no instruction is named K.
  const HloInstruction* NextByKernelName(absl::string_view kernel,
                                         size_t* cursor) const;
  // The operand of `of` with instruction id `id`; null if none.
  const HloInstruction* Operand(const HloInstruction& of, int64_t id) const;
  const std::vector<HloInstruction>& instructions() const { return instrs_; }

  // The Python call stack of a stack frame id, outermost first; empty if
  // the module has no such frame.
  std::vector<Frame> CallStack(int32_t stack_frame_id) const;
  // Loops whose trip count is not recorded (their bodies count one run).
  int64_t unknown_trip_counts() const { return unknown_trip_counts_; }

 private:
  struct FileLocation {
    int32_t file = 0, function = 0, line = 0;
  };
  struct StackFrame {
    int32_t location = 0, parent = 0;
  };

  std::string name_;
  size_t order_ = 0;
  std::vector<HloInstruction> instrs_;
  // (computation id, instruction id) -> index.
  absl::flat_hash_map<std::pair<int64_t, int64_t>, size_t> by_id_;
  absl::flat_hash_map<std::string, size_t> by_name_;  // kernel level only
  absl::flat_hash_map<std::string, size_t> by_kernel_name_;
  // Device-level instructions (indices) in the order they run, and for each
  // fingerprint its places in that order.
  std::vector<size_t> schedule_;
  absl::flat_hash_map<uint64_t, std::vector<size_t>> by_fingerprint_;
  std::vector<std::string> files_, functions_;
  std::vector<FileLocation> locations_;
  std::vector<StackFrame> frames_;
  int64_t unknown_trip_counts_ = 0;

  friend class XlaModuleBuilder;
  friend class XlaPrograms;
};

// The modules of one capture, by program id and by name.
class XlaPrograms {
 public:
  // Adds a module from its serialized HloProto; false if it does not decode.
  bool Add(int64_t program_id, absl::string_view hlo_proto);
  // The module of a device event: by its program id, else by its module
  // name; null if neither is known.
  const XlaModule* Find(std::optional<int64_t> program_id,
                        absl::string_view module_name) const;
  bool empty() const { return modules_.empty(); }
  const std::vector<std::unique_ptr<XlaModule>>& modules() const {
    return modules_;
  }
  size_t size() const { return modules_.size(); }

 private:
  std::vector<std::unique_ptr<XlaModule>> modules_;
  absl::flat_hash_map<int64_t, const XlaModule*> by_program_;
  absl::flat_hash_map<std::string, const XlaModule*> by_name_;
};

}  // namespace trace_internal
}  // namespace tfprof

#endif  // TFPROF_PROFILER_IMPORTERS_XSPACE_XLA_PROGRAMS_H_
