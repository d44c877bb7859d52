// Delivering a view query's result as its -output asks: text to a stream
// or file, JSON, CSV, protos, a Chrome-trace timeline or pprof. (Running the
// query is the session's: profiler/session/session.h.)
#ifndef TFPROF_PROFILER_RENDER_EMIT_H_
#define TFPROF_PROFILER_RENDER_EMIT_H_

#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "profiler/model/model.h"
#include "profiler/views/options.h"
#include "profiler/views/result.h"
#include "proto/profile.pb.h"

namespace tfprof {

struct EmitTarget {
  std::ostream* out;  // reports and messages for the user
  std::ostream* err;  // notes and warnings
  // Files never written over (the profile's inputs).
  std::vector<std::string> protected_paths;
};

// Writes a pprof profile gzipped to `path` and says so on target.out.
absl::Status WritePprofFile(const perftools::profiles::Profile& profile,
                            const std::string& path, const EmitTarget& target);

// Whether a view's result can be written as opts' -output (known type; no
// timeline of a flat view; pprof of the code or scope view only).
absl::Status CheckEmittable(ViewKind view, const Options& opts);

// Writes the result as its options' -output says; its notes go to
// target.err. A graph view's timeline is of the result's one step (-step
// >= 0; the session queries each step for -step -1).
absl::Status EmitResult(const ResultTree& result, const Model& model,
                        const EmitTarget& target);

}  // namespace tfprof

#endif  // TFPROF_PROFILER_RENDER_EMIT_H_
