// A job's ranks loaded one at a time: each rank's traces become a model,
// the model its RankProfile (profiler/views/ranks.h), and the model goes
// before the next rank loads, so that hundreds of ranks never sit in memory
// at once. Two ranks load side by side (one per core).
#ifndef TFPROF_PROFILER_SESSION_RANK_LOADER_H_
#define TFPROF_PROFILER_SESSION_RANK_LOADER_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "profiler/load/trace_files.h"
#include "profiler/views/ranks.h"
#include "profiler/views/steps.h"

namespace tfprof {

// Each rank's profile, in the order of `ranks`; the first error (naming its
// file) stops the rest. `progress` is told each rank's first file as it
// starts loading (from the loading threads, one at a time).
absl::StatusOr<std::vector<RankProfile>> ProfileRankFiles(
    const std::vector<RankFiles>& ranks, int threads,
    const std::function<void(const std::string&)>& progress = nullptr);

// The job's steps table from its ranks': per step, the wall time of the
// slowest rank (the job waits for it), the largest peak memory, and every
// other column the mean over the ranks that have the step. The float ops and
// MFU columns are left empty: they come from the merged model, against the
// peak the caller gives (Session::Steps).
StepTable CombineRankSteps(const std::vector<RankProfile>& ranks);

}  // namespace tfprof

#endif  // TFPROF_PROFILER_SESSION_RANK_LOADER_H_
