// Importing today's trace files into the model.
//
// Three trace formats are read, and written into a Model through its
// building API (ImportTraceStreamed); ImportTrace exports the same trace as
// TensorFlow's TF1 profiler inputs instead (a GraphDef, one RunMetadata per
// step and an OpLogProto, what --graph_path / --run_meta_path /
// --op_log_path read):
//
//  * TensorFlow timelines: Chrome Trace Format JSON written by
//    tensorflow.python.client.timeline (and tf.train.ProfilerHook);
//  * PyTorch profiler traces (Kineto, "*.pt.trace.json[.gz]");
//  * TF2 / JAX profiler XSpaces ("*.xplane.pb").
//
// The format is detected from the content; gzip input is decompressed first.
// See g3doc/traces.md for how each format maps and what is left out.
#ifndef TFPROF_PROFILER_IMPORTERS_TRACE_IMPORT_H_
#define TFPROF_PROFILER_IMPORTERS_TRACE_IMPORT_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "profiler/base/protos.h"
#include "profiler/importers/common/trace_format.h"
#include "profiler/model/activity.h"

namespace tfprof {

struct ImportedTrace {
  TraceFormat format = TraceFormat::kTfTimeline;
  // One NodeDef per trace node (name, op, and for TF timelines the inputs).
  tfcore::GraphDef graph;
  // (step, RunMetadata with step_stats), sorted by step, steps unique.
  std::vector<std::pair<int64_t, tfcore::RunMetadata>> steps;
  // Python call stacks (code view) and float ops, where the trace has them.
  tfpb::OpLogProto op_log;
  // What could not be mapped (listed, not guessed), one line each.
  std::vector<std::string> notes;
  // Steps' own spans, accelerator work and memory in use, in nanoseconds.
  Activity activity;
};

class ModelBuilder;
namespace trace_internal {
class TraceBuilder;
}  // namespace trace_internal

// An imported trace, written into a model in two parts (LoadProfile adds an
// op log and checkpoint between them): the nodes, then the steps, each
// step's records freed once written.
class StreamedTrace {
 public:
  explicit StreamedTrace(std::unique_ptr<trace_internal::TraceBuilder> b);
  StreamedTrace(StreamedTrace&&) noexcept;
  StreamedTrace& operator=(StreamedTrace&&) noexcept;
  ~StreamedTrace();

  TraceFormat format() const;
  // What could not be mapped, one line each (complete from the start).
  const std::vector<std::string>& notes() const;
  // Once: the nodes (inputs, attributes, float ops, call stacks) and the
  // activity record (steps' spans, accelerator work, memory in use).
  void WriteNodes(ModelBuilder* builder);
  // Once, after WriteNodes with the same builder: every step's executions
  // (nothing is left after it but the notes).
  void WriteSteps(ModelBuilder* builder);

 private:
  std::unique_ptr<trace_internal::TraceBuilder> builder_;
};

// Reads and converts trace files. All files must be of one format. TF
// timelines give one step per file (in the order given); Kineto and XSpace
// files carry their own steps (ProfilerStep#N, step groups), else file i is
// step i. Errors name the file and what is wrong.
absl::StatusOr<ImportedTrace> ImportTrace(
    const std::vector<std::string>& paths);

// Same, to be written into a model (see StreamedTrace); the same errors.
// `run_of_file[i]`, when given (one per path), says which run file i is
// of (the ranks of a job are different runs): two files of one run may not
// hold the same step (two captures of a process have their own clocks and
// step numbers; their union would be meaningless), which is an error.
absl::StatusOr<StreamedTrace> ImportTraceStreamed(
    const std::vector<std::string>& paths,
    const std::vector<size_t>& run_of_file = {});

// Same, for contents already in memory: `names[i]` is used in messages for
// `contents[i]` (which may still be gzip-compressed).
absl::StatusOr<ImportedTrace> ImportTraceContents(
    const std::vector<std::string>& names,
    const std::vector<std::string>& contents);

// The simdjson kernel that indexes JSON traces (stage 1 of the on-demand
// parser): the fastest one this CPU supports, chosen at run time by simdjson
// ("icelake", "haswell", "westmere" or "fallback").
const std::string& JsonKernelName();

// Whether a file may be a trace, from its name and first bytes: gzip or JSON
// data, or an ".xplane.pb" name. Cheap; DetectTraceFormat decides.
bool MayBeTrace(const std::string& name, absl::string_view head);

// The format of one trace (gzip is decompressed first); the error says which
// formats are expected.
absl::StatusOr<TraceFormat> DetectTraceFormat(const std::string& name,
                                              const std::string& contents);

}  // namespace tfprof

#endif  // TFPROF_PROFILER_IMPORTERS_TRACE_IMPORT_H_
