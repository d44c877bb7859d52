// How PyTorch's profiler lays out a training step, and what the importer
// does about it: backward runs on the autograd engine's own threads while the
// step's thread waits, and record_function ranges begin inside the
// profiler's own Python frames. Not a public API.
#ifndef TFPROF_PROFILER_IMPORTERS_KINETO_TORCH_STRUCTURE_H_
#define TFPROF_PROFILER_IMPORTERS_KINETO_TORCH_STRUCTURE_H_

#include <cstdint>
#include <vector>

#include "absl/strings/string_view.h"
#include "profiler/importers/common/trace_builder.h"

namespace tfprof {
namespace trace_internal {

// The scope component under a ProfilerStep that holds the ranges of the
// autograd threads, and the op type of its own time (the step thread's wait
// outside any of those ranges).
inline constexpr absl::string_view kBackwardComponent = "backward";
inline constexpr absl::string_view kBackwardWaitType = "backward_wait";

// Whether an op is one the autograd engine records on its own thread:
// "autograd::engine::evaluate_function: XBackward0" (PyTorch >= 1.10), a bare
// "XBackward" / "XBackward1" node (older releases), or AccumulateGrad.
bool IsAutogradEngineOp(absl::string_view name);

// A time range in nanoseconds, [start, end).
struct NanoRange {
  int64_t start = 0;
  int64_t end = 0;
};

// The step thread's wait for backward inside one ProfilerStep span: the
// window runs from the first adopted range's start to the last one's end
// (within the span); `wait_ns` is the span's own time in the window (not in
// the step thread's nested ops), `covered_ns` the part of it during which an
// adopted range ran.
struct BackwardWait {
  int64_t start_ns = 0;
  int64_t wait_ns = 0;
  int64_t covered_ns = 0;
};

// `children`: the ranges nested directly in the span on its own thread;
// `adopted`: the autograd threads' top-level ranges that start in the span.
BackwardWait MeasureBackwardWait(NanoRange span,
                                 std::vector<NanoRange> children,
                                 std::vector<NanoRange> adopted);

// "path/file.py(123): function" -> a frame; any other text is a function
// name.
Frame ParseFrame(absl::string_view text);

// A "Call stack" arg: frames joined by ';', innermost first -> outermost
// first, at most kMaxFrames (the innermost).
std::vector<Frame> ParseCallStack(absl::string_view text);

// Drops the innermost frames that belong to the profiler's own machinery
// (torch/profiler/, torch/autograd/profiler*.py, and the torch frames they
// call): a record_function range starts inside its __enter__, and is the
// code of the line that opened it, not of __enter__.
void DropProfilerFrames(std::vector<Frame>* frames);

}  // namespace trace_internal
}  // namespace tfprof

#endif  // TFPROF_PROFILER_IMPORTERS_KINETO_TORCH_STRUCTURE_H_
