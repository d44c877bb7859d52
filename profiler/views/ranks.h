// Many ranks as one job: what each rank's trace says of its steps and
// collectives (RankProfile, small: made from one rank's model, which can go
// once it is made), and the job's account from all of them (RanksReport):
// each rank's clock offset from the collectives they share, per rank and
// step the wall, compute, communication (exposed or overlapped), waiting
// and idle time, and the stragglers: per step, the rank that arrived last
// at a collective, how long the others waited, and what it did instead.
//
// Clocks: a rank's times are its trace's wall clock (Activity::rank()'s
// base added). Collectives that end when the ranks meet (NCCL/RCCL kernels,
// gloo's host transfers; not the c10d enqueue ranges) are matched across
// ranks by process group and sequence number where the trace has them, else
// by process group, operation, step and order within the step. A rank's
// offset from the reference (the lowest rank) is the median of the matched
// end differences; its uncertainty is their spread (1.4826 x the median
// absolute deviation, a standard deviation for normal noise). Aligned time
// = wall-clock time - offset.
#ifndef TFPROF_PROFILER_VIEWS_RANKS_H_
#define TFPROF_PROFILER_VIEWS_RANKS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "profiler/model/model.h"
#include "profiler/views/steps.h"
#include "profiler/views/summary.h"

namespace tfprof {

// A collective one rank ran that ends when the ranks meet.
struct RankCollective {
  int64_t start_ns = 0;  // the rank's wall clock
  int64_t end_ns = 0;
  int64_t step = -1;  // the rank's step it started in; -1: outside the steps
  std::string name;   // as recorded
  std::string op;     // normalized ("all_reduce")
  std::string group;  // process group; "" when not recorded
  int64_t seq = -1;   // sequence number in the group; -1 when not recorded
  // Index into RankProfile::windows: what the rank did since the previous
  // collective ended.
  int32_t window = -1;
};

// Host time by op name (exclusive of nested ops and of collectives) in the
// stretch before a collective: the top ones.
struct OpTime {
  std::string name;
  int64_t ns = 0;
};

struct RankProfile {
  int64_t rank = -1;  // -1: the trace names none
  int64_t world_size = 0;
  std::string backend, host;
  std::vector<std::string> files;
  int64_t base_ns = 0;  // the activity's time + base_ns = wall clock
  // The rank's steps table (float ops and MFU filled in), times on the
  // activity's clock.
  StepTable steps;
  std::vector<RankCollective> collectives;  // by start
  std::vector<std::vector<OpTime>> windows;
  // Collectives seen only as enqueue ranges (c10d::*, nccl:*): they cannot
  // align clocks.
  int64_t enqueue_only = 0;
  int64_t kernels = 0;  // accelerator kernels of any kind
  // Its devices, lanes and allocator peaks, as its own summary lists them
  // (a job's summary shows each rank's).
  std::vector<DeviceSummary> devices;
};

// The profile of one rank's model (its trace files in `files`).
RankProfile ProfileRank(const Model& model, std::vector<std::string> files);

struct RankStepReport {
  int64_t step = 0;
  int64_t start_ns = 0;  // aligned: the reference rank's clock
  int64_t wall_ns = 0;
  int64_t compute_ns = 0;
  int64_t communication_ns = 0;
  int64_t exposed_communication_ns = 0;
  // Time inside collectives before the last rank arrived (overlaps counted
  // once).
  int64_t wait_ns = 0;
  int64_t idle_ns = 0;
};

struct RankReport {
  int64_t rank = 0;
  std::string host;
  std::vector<std::string> files;
  int64_t offset_ns = 0;
  int64_t offset_uncertainty_ns = 0;
  int64_t matched = 0;  // collectives its offset was estimated from
  // "reference", "collectives" or "wall clock" (nothing matched).
  std::string alignment;
  std::vector<RankStepReport> steps;
};

// A step across the ranks.
struct JobStep {
  int64_t step = 0;
  int64_t ranks = 0;  // ranks that have the step
  int64_t min_wall_ns = 0, max_wall_ns = 0;
  int64_t slowest_rank = -1;
  // The longest any rank kept the others waiting at a collective in the
  // step, who, and at which collective (0 / -1 / "" without one).
  int64_t max_delay_ns = 0;
  int64_t delayed_by = -1;
  std::string collective;
};

struct Straggler {
  int64_t step = 0;
  int64_t rank = 0;
  // Its arrival at `collective` after the median arrival of the others.
  int64_t delay_ns = 0;
  std::string collective;
  // The op it spent longer in than the other ranks (median) since the
  // previous collective: its time there, and the excess.
  std::string cause;
  int64_t cause_ns = 0;
  int64_t cause_excess_ns = 0;
};

struct RanksReport {
  std::vector<RankReport> ranks;  // by rank
  std::vector<JobStep> steps;     // by step
  std::vector<Straggler> stragglers;
  // A delay counts as a straggler from this much (see AnalyzeRanks).
  int64_t straggler_floor_ns = 0;
  int64_t collectives_matched = 0;  // distinct collectives seen on >= 2 ranks
  std::string backend;
  int64_t world_size = 0;
  std::vector<std::string> notes;
};

// The job's account. Ranks are ordered by rank (a profile with rank -1 takes
// the next free number). A step's straggler is reported when its delay is
// at least the floor: 3 x the largest offset uncertainty, and 20% of the
// median step wall time.
RanksReport AnalyzeRanks(std::vector<RankProfile> ranks);

// The report of one step: its job row, every rank's row of it and its
// straggler (offsets and notes as they are); an error when no rank has it.
absl::StatusOr<RanksReport> RanksReportOfStep(const RanksReport& report,
                                              int64_t step);

}  // namespace tfprof

#endif  // TFPROF_PROFILER_VIEWS_RANKS_H_
