// One XSpace's import, shared by its files: the host plane's ops, nested
// per thread (xspace_host.cc), and the planes, steps and GPU streams
// (xspace.cc). Not a public API.
#ifndef TFPROF_PROFILER_IMPORTERS_XSPACE_XSPACE_IMPORT_H_
#define TFPROF_PROFILER_IMPORTERS_XSPACE_XSPACE_IMPORT_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "profiler/importers/common/steps.h"
#include "profiler/importers/common/trace_builder.h"
#include "profiler/importers/xspace/xla_attribution.h"
#include "profiler/importers/xspace/xspace_reader.h"

namespace tfprof {
namespace trace_internal {

enum class HostKind : uint8_t { kPython = 0, kOp = 1, kOther = 2 };

struct HostEvent {
  HostKind kind = HostKind::kOther;
  int64_t start = 0;
  int64_t start_ns = 0;
  int64_t duration = 0;
  int64_t duration_ns = 0;
  const XEvent* event = nullptr;
  const XEventMetadata* md = nullptr;
  absl::string_view name;  // op: node name; python: event name
  absl::string_view type;  // op: op type
  bool memory = false;
  bool deallocation = false;
  // Ops, after the sweep.
  int64_t exclusive_ns = 0;
  int32_t node = -1;
  int64_t step = 0;
  std::vector<int32_t> memory_events;
  // Host events of XLA programs (JAX): the node whose name this event's
  // path extends, and the path's depth.
  int32_t base = -1;
  int32_t depth = 0;
};

// One XSpace's import: planes classified, steps from the step groups, host
// ops nested per line, then the GPU stream lines linked to their ops.
class XSpaceImport {
 public:
  XSpaceImport(const std::string& file, int64_t file_index,
               TraceBuilder* builder)
      : file_(file),
        builder_(builder),
        xla_(file, builder),
        steps_(file_index) {}

  absl::Status Run(absl::string_view contents) {
    absl::Status parsed = Parse(contents);
    if (!parsed.ok()) return parsed;
    ClassifyPlanes();
    LoadXlaPlanes();
    if (!FindRootSteps()) FindSteps();
    for (const PlaneRef* plane : hosts_) ImportHostPlane(*plane);
    for (const PlaneRef* plane : gpus_) ImportGpuPlane(*plane);
    if (corrupt_) {
      return absl::InvalidArgumentError(absl::StrCat(
          file_, ": corrupt XSpace (an event or line that does not decode)"));
    }
    xla_.Finish();
    CountLinkedOpRuns();
    AddNotes();
    return absl::OkStatus();
  }

 private:
  absl::Status Parse(absl::string_view contents);
  void ClassifyPlanes();
  // The XLA programs ("/host:metadata") and their scope-range tree; a JAX
  // capture (the metadata names jax's version) has no TensorFlow ops: its
  // host events are nodes of their own.
  void LoadXlaPlanes();
  // Steps from root markers (jax.profiler.StepTraceAnnotation and other
  // events with stat "_r"): each root's span is its step, numbered by its
  // step_num (or iter_num) stat, else by its order. False if there are none.
  bool FindRootSteps();
  // Steps: the groups marked on the device planes' "Steps" lines.
  void FindSteps();
  // The step of an event: its step group where it has a known one, else the
  // step that started last before it.
  int64_t StepOf(std::optional<int64_t> group, int64_t t) {
    if (group.has_value() && groups_.contains(*group)) return *group;
    return steps_.At(t);
  }

  // --- Host ops: nested per line; memory and launches go to the innermost
  // op; Python frames enclosing an op form its call stack.
  void ImportHostPlane(const PlaneRef& plane);
  void CollectHostEvent(const PlaneStats& stats, const XPlane& plane,
                        const XLine& line, const XEvent& ev, bool python,
                        std::vector<HostEvent>* events);
  void NestHostEvents(const PlaneStats& stats, std::vector<HostEvent>* events);
  // Memory and launch events belong to the innermost open op.
  void NestOther(const PlaneStats& stats, int32_t i,
                 std::vector<HostEvent>* events);
  void NestOp(const PlaneStats& stats, int32_t i,
              std::vector<HostEvent>* events);
  // The node of a host event of a JAX capture: the path of the events it
  // nests in ("train/PjitFunction(train_step)/...").
  int32_t HostPathNode(HostEvent* h, const std::vector<HostEvent>& events);
  // The allocator's bytes in use after memory event `h` (heap allocated
  // plus stack reserved, as xprof's memory profile counts them).
  void AddMemorySample(const PlaneStats& stats, const HostEvent& h,
                       int32_t node);
  // `thread`: the line's name for the activity record.
  void AddHostExecs(const PlaneStats& stats,
                    const std::vector<HostEvent>& events,
                    const std::string& thread);
  void AddMemory(const PlaneStats& stats, const std::vector<HostEvent>& events,
                 const HostEvent& h, TraceBuilder::ExecRef exec);

  // --- GPU activity on the stream lines.
  void ImportGpuPlane(const PlaneRef& plane);
  // The derived "TensorFlow Ops" line: one event per run of an op on the
  // GPU. Ops with no host execution in the step get a run on the GPU
  // (".../device:gpu:N", no time: their time is their kernels').
  void CountDeviceOpRuns(const PlaneStats& stats, const XPlane& plane,
                         const LineRef& line, int64_t gpu);
  // Ops with GPU work in a step but no run there yet (no host event, not
  // on a "TensorFlow Ops" line): one run on the GPU of their first work.
  void CountLinkedOpRuns();
  void ImportStreamEvent(const PlaneStats& stats, const XPlane& plane,
                         const XLine& line, const XEvent& ev, int64_t gpu,
                         const std::string& stream_all,
                         const std::string& stream_device);
  // A launch call on a host line: its op's node and step (node -1: a
  // launch outside any op, kept with root steps for its step), and where
  // it is on the timeline (start_ns kNoLaunch: in no op drawn there).
  struct Launch {
    int32_t node = -1;
    int64_t step = 0;
    int64_t start_ns = DeviceWork::kNoLaunch;
    uint32_t thread = 0;  // activity string id of the host lane
  };
  // Records a stream event as accelerator work of `node` (-1: not known),
  // launched by `launch` when known.
  void AddWork(const PlaneStats& stats, const XLine& line, const XEvent& ev,
               const XEventMetadata* md, const std::string& stream,
               int32_t node, int64_t step, const Launch* launch);
  // The HLO instruction node of a GPU event of an XLA program, if it is one.
  std::optional<int32_t> XlaNode(const PlaneStats& stats, const XEvent& ev,
                                 const XEventMetadata* md, const XLine& line,
                                 int64_t step, int64_t gpu);
  // The node of a GPU event with no recorded launch: its annotation's op,
  // else _unlinked/<kind>.
  int32_t NodeWithoutLaunch(const PlaneStats& stats, const XEvent& ev,
                            const XEventMetadata* md);
  void AddNotes();

  const std::string& file_;
  TraceBuilder* builder_;
  std::vector<PlaneRef> planes_;
  std::vector<const PlaneRef*> hosts_, gpus_;
  const PlaneRef* metadata_plane_ = nullptr;
  const PlaneRef* scope_plane_ = nullptr;
  bool jax_ = false;
  bool root_steps_ = false;
  XlaAttribution xla_;
  absl::flat_hash_map<int64_t, const LineRef*> python_lines_;
  const PlaneRef* python_plane_ = nullptr;
  XPlane python_meta_;  // its metadata, decoded
  // An event or line did not decode (found while importing).
  bool corrupt_ = false;
  std::unique_ptr<PlaneStats> py_stats_;
  StepStarts steps_;
  absl::flat_hash_set<int64_t> groups_;
  // "<context>/<correlation>" of a launch -> the launch.
  absl::flat_hash_map<std::string, Launch> launches_;
  // The host line being nested (activity string id of its lane).
  uint32_t host_thread_ = 0;
  // The sweep's open ops and Python frames on the current line.
  std::vector<int32_t> op_stack_, py_stack_;
  int64_t orphan_memory_ = 0, program_memory_ = 0, bad_events_ = 0;
  int64_t by_correlation_ = 0, by_annotation_ = 0, unlinked_ = 0;
  int64_t device_op_runs_ = 0;
  // (step, node) -> (gpu, start ns) of the first GPU work linked to an op.
  absl::flat_hash_map<std::pair<int64_t, int32_t>, std::pair<int64_t, int64_t>>
      linked_work_;
  // node -> the GPU of all its linked work (-1: several GPUs).
  absl::flat_hash_map<int32_t, int64_t> linked_gpu_;
};

}  // namespace trace_internal
}  // namespace tfprof

#endif  // TFPROF_PROFILER_IMPORTERS_XSPACE_XSPACE_IMPORT_H_
