// Running a view query and delivering its result as -output asks: text to a
// stream or file, JSON, protos, timelines or pprof.
#ifndef TFPROF_PROFILER_RENDER_EMIT_H_
#define TFPROF_PROFILER_RENDER_EMIT_H_

#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "profiler/model/model.h"
#include "profiler/views/options.h"
#include "profiler/views/result.h"
#include "profiler/views/views.h"
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

// Runs the query and writes its output. Returns the result tree (for a
// graph timeline of every step, the last step's).
absl::StatusOr<ResultTree> QueryAndEmit(Views* views, const Model& model,
                                        ViewKind view, const Options& opts,
                                        const EmitTarget& target);

}  // namespace tfprof

#endif  // TFPROF_PROFILER_RENDER_EMIT_H_
