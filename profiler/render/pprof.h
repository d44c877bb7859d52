// pprof output of the code view: a perftools.profiles.Profile with one
// sample per graph node and its Python call stack.
#ifndef TFPROF_PROFILER_RENDER_PPROF_H_
#define TFPROF_PROFILER_RENDER_PPROF_H_

#include <string>

#include "absl/status/statusor.h"
#include "profiler/base/gzip.h"
#include "profiler/base/protos.h"
#include "profiler/views/result.h"
#include "proto/profile.pb.h"

namespace tfprof {

// The attributes pprof output can carry (exactly one must be selected).
bool PprofSupports(Attr select);

// Builds the profile from a code-view result. Errors: another view, or not
// exactly one supported attribute selected.
absl::StatusOr<perftools::profiles::Profile> BuildPprof(
    const ResultTree& result);

// A differential profile: `current`'s samples and `base`'s with negated
// values (same view and attribute), so that pprof shows each function's
// change and a flame graph of it, as `pprof -diff_base` does.
absl::StatusOr<perftools::profiles::Profile> BuildDiffPprof(
    const ResultTree& base, const ResultTree& current);

// (pprof files are gzipped protos: Gzip and Gunzip are in base/gzip.h.)

}  // namespace tfprof

#endif  // TFPROF_PROFILER_RENDER_PPROF_H_
