// Which files --trace_path names (a comma list of files, directories and
// globs) and which rank each one is, so that the traces of a job's ranks
// load as ranks while several files of one rank stay one run.
#ifndef TFPROF_PROFILER_LOAD_TRACE_FILES_H_
#define TFPROF_PROFILER_LOAD_TRACE_FILES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace tfprof {

// The files of a --trace_path value: each comma-separated item is a file, a
// directory (its regular files whose names look like traces: *.json,
// *.json.gz, *.pb, *.pb.gz; sorted, not recursive) or a glob (matches
// sorted). An item that names nothing is an error naming it; a file listed
// twice counts once.
absl::StatusOr<std::vector<std::string>> ExpandTracePath(
    const std::string& trace_path);

// The rank a trace file says it is, read from its first bytes where it can:
// a PyTorch (Kineto) trace's distributedInfo.rank (searched for in the first
// MiB), an XSpace's host name. Unknown: rank -1 and no host.
struct TraceRankTag {
  int64_t rank = -1;
  int64_t world_size = 0;
  std::string host;
};
TraceRankTag PeekTraceRank(const std::string& path);

// One rank's files.
struct RankFiles {
  int64_t rank = -1;  // -1: the files name none (an XSpace's host does)
  std::string host;
  std::vector<std::string> files;
};

// The files grouped by rank (PyTorch ranks, else XSpace hosts), ordered by
// rank, then host, then first file. A file naming no rank is its own group
// when others do; when no file names one, or all name the same, there is
// one group: one run, as before.
std::vector<RankFiles> GroupByRank(const std::vector<std::string>& files);

}  // namespace tfprof

#endif  // TFPROF_PROFILER_LOAD_TRACE_FILES_H_
