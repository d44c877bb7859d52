// The steps table: one row per step with its wall time and what the
// accelerators did in it. Wall time comes from the step's own markers
// (ProfilerStep#N ranges, XSpace step groups) where the input has them, else
// from the step's first execution start to its last execution end: over all
// of its RunMetadata's node stats when it was read from RunMetadata, else
// over the model's executions (a ProfileProto). All times are nanoseconds.
#ifndef TFPROF_PROFILER_VIEWS_STEPS_H_
#define TFPROF_PROFILER_VIEWS_STEPS_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "profiler/model/model.h"

namespace tfprof {

struct StepRow {
  int64_t step = 0;
  int64_t start_ns = 0;  // on the input's clock
  int64_t wall_ns = 0;
  bool from_markers = false;  // wall time from the step's own markers
  // Time in which any accelerator work ran (overlaps counted once), and its
  // parts: kernels other than collectives', and copies or sets.
  int64_t accelerator_ns = 0;
  int64_t compute_ns = 0;
  int64_t memcpy_ns = 0;
  // Time in communication: collective kernels (NCCL/RCCL) and host
  // transfers (gloo), overlaps counted once; the part of it during which no
  // compute kernel ran.
  int64_t communication_ns = 0;
  int64_t exposed_communication_ns = 0;
  // Wall time with neither accelerator work nor communication (0 in a step
  // without either; StepTable::Known says whether the input has any).
  int64_t idle_ns = 0;
  int64_t kernels = 0;  // kernel launches
  // From the first kernel's start to the last kernel's end (0 without
  // kernels): the step as the device saw it.
  int64_t device_span_ns = 0;
  // The most bytes any one allocator had in use during the step, and which;
  // -1 when the input recorded no allocator bytes in use.
  int64_t peak_bytes = -1;
  std::string peak_allocator;
  // Float ops by the extended rule and MFU against the peak of the devices
  // that ran kernels in the step (-1: n/a); filled by AddStepFlops
  // (views/flops.h).
  int64_t flops = 0;
  double mfu = -1;
};

struct StepTable {
  std::vector<StepRow> rows;  // by step
  // Where the wall times came from, for the user.
  std::string wall_source;
  // The peak MFU is measured against (views/flops.h's MfuText); empty
  // until AddStepFlops.
  std::string mfu_text;
  // False when the input has accelerator time in its nodes' statistics but
  // no records of the kernels (a ProfileProto keeps none, a RunMetadata
  // with only stream:all lanes neither): the rows' kernels and device span
  // are then unknown, not zero; copy_records likewise for memcpy (known
  // from a RunMetadata's memcpy lane).
  bool kernel_records = true;
  bool copy_records = true;
  // False when no step has any accelerator work or communication (a
  // CPU-only capture): idle, the wall time without either, is then not
  // known rather than 0.
  bool accelerator_work = true;

  // Whether the rows' `member` is known (kernels, device_span_ns,
  // memcpy_ns and idle_ns may not be).
  bool Known(int64_t StepRow::*member) const {
    if (member == &StepRow::kernels || member == &StepRow::device_span_ns) {
      return kernel_records;
    }
    if (member == &StepRow::idle_ns) return accelerator_work;
    return member != &StepRow::memcpy_ns || copy_records;
  }
};

StepTable ComputeSteps(const Model& model);

// The length of the union of [start, end) intervals (sorts them).
int64_t UnionLength(std::vector<std::pair<int64_t, int64_t>>* intervals);

// The median; for an even count, the mean of the two middle values
// (rounded toward zero). 0 for none.
int64_t Median(std::vector<int64_t> v);

// Mean (rounded down), median, min and max of the rows' wall times; all 0
// without rows.
struct WallStats {
  int64_t mean_ns = 0, median_ns = 0, min_ns = 0, max_ns = 0;
};
WallStats StepWallStats(const StepTable& table);

}  // namespace tfprof

#endif  // TFPROF_PROFILER_VIEWS_STEPS_H_
