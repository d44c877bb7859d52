// Reading tfprof's input files into a Model.
#ifndef TFPROF_PROFILER_LOAD_LOADER_H_
#define TFPROF_PROFILER_LOAD_LOADER_H_

#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "google/protobuf/message.h"
#include "profiler/base/file.h"
#include "profiler/importers/common/trace_format.h"
#include "profiler/load/checkpoint.h"
#include "profiler/load/trace_files.h"
#include "profiler/model/model.h"

namespace tfprof {

enum class ProtoFormat { kBinary, kText };

// Parses `contents` (read from `path`, used in messages) into `msg`, trying
// the formats in the given order. Returns the format that worked.
absl::StatusOr<ProtoFormat> ParseProto(const std::string& path,
                                       const std::string& contents,
                                       bool text_first,
                                       google::protobuf::Message* msg);

// Reads and parses a file, binary or text.
absl::Status ReadProtoFile(const std::string& path, bool text_first,
                           google::protobuf::Message* msg);

// The inputs of a tfprof session, as given on the command line.
struct InputPaths {
  std::string profile_path;   // binary (or text) ProfileProto
  std::string graph_path;     // GraphDef, text or binary
  std::string run_meta_path;  // comma-separated RunMetadata files: steps 0..
  std::string op_log_path;    // OpLogProto
  std::string checkpoint_path;
  // Comma-separated trace files (TensorFlow timeline JSON, PyTorch profiler
  // / Kineto JSON, TF2/JAX .xplane.pb; gzip is read too), converted as
  // profiler/trace_import.h describes. Not with the three inputs above.
  std::string trace_path;
};

struct LoadedProfile {
  Model model;
  std::unique_ptr<Checkpoint> checkpoint;
  // The RunMetadata file of each step, when steps came from files.
  std::map<int64_t, std::string> run_meta_files;
  // Human-readable notes made while loading (e.g. run graph coverage).
  std::vector<std::string> notes;
  // A --trace_path load: its files grouped by rank (one group for a single
  // process's trace), as GroupByRank groups them; empty otherwise.
  std::vector<RankFiles> rank_groups;
  int64_t bytes_read = 0;
  double seconds = 0;
};

// The trace format of a file by its content (as --trace_path detects it);
// an error when it is not a trace tfprof imports (e.g. a ProfileProto).
// Reads the whole file only when its first bytes or name may be a trace's.
absl::StatusOr<TraceFormat> TraceFormatOfFile(const std::string& path);

// Inputs that cannot go together: --trace_path with the others,
// --profile_path with --graph_path or --run_meta_path. (LoadProfile checks
// it too; the command line checks it before anything is loaded.)
absl::Status CheckInputCombination(const InputPaths& paths);

// Loads everything named in `paths`. Either profile_path or the
// graph/run_meta/op_log group may be given, not both.
// Told the name of each file as loading starts on it (e.g. to show
// progress). May be called from the loading thread only.
using LoadProgress = std::function<void(const std::string& file)>;

absl::StatusOr<std::unique_ptr<LoadedProfile>> LoadProfile(
    const InputPaths& paths, const LoadProgress& progress = nullptr);

}  // namespace tfprof

#endif  // TFPROF_PROFILER_LOAD_LOADER_H_
