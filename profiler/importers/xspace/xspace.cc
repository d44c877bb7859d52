// TF2 / JAX profiler XSpaces (*.xplane.pb): a "/host:CPU" plane whose lines
// (threads) hold TensorFlow op events named "<node>:<OpType>" plus memory
// and CUDA launch events, an optional "/host:python-tracer" plane with one
// line per thread of Python function events ("$file.py:LINE function"), and
// "/device:GPU:N" planes whose "Stream #S(...)" lines hold kernels and
// copies, linked to their op by the correlation id of the launch or by the
// op annotation TensorFlow attaches. "Steps" lines on device planes give the
// step groups.
#include "profiler/importers/xspace/xspace.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "profiler/importers/common/nesting.h"
#include "profiler/importers/common/steps.h"
#include "profiler/importers/xspace/xla_attribution.h"
#include "profiler/importers/xspace/xspace_names.h"
#include "profiler/importers/xspace/xspace_reader.h"

namespace tfprof {
namespace trace_internal {
namespace {

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

// Host paths deeper than this extend the deepest kept level.
constexpr int32_t kMaxPathDepth = 64;

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

absl::Status XSpaceImport::Parse(absl::string_view contents) {
  bool known_planes = false;
  std::vector<std::string> errors;
  std::string rest;
  bool planes_ok = true;
  XPlane scratch;
  const bool split =
      SplitField(contents, 1, &rest, [&](absl::string_view plane) {
        PlaneRef& p = planes_.emplace_back();
        planes_ok = planes_ok && ParsePlane(plane, &p, &scratch);
      });
  XSpace others;  // errors, warnings, hostnames
  const bool parsed = split && planes_ok && ParseBytes(rest, &others);
  if (parsed) {
    for (const PlaneRef& plane : planes_) {
      known_planes |= absl::StartsWith(plane.name, "/host:") ||
                      absl::StartsWith(plane.name, "/device:");
    }
  }
  if (!known_planes) {
    // Named as an XSpace: say what is wrong with it.
    if (absl::StrContains(file_, ".xplane.pb")) {
      return absl::InvalidArgumentError(absl::StrCat(
          file_, parsed ? ": an XSpace with no /host: or /device: plane "
                          "(nothing to profile)"
                        : ": not a readable XSpace: its protobuf does not "
                          "parse (truncated or corrupt?)"));
    }
    return absl::InvalidArgumentError(
        absl::StrCat(file_, ": not a known trace format", kExpectedFormats));
  }
  if (others.hostnames_size() > 0 &&
      builder_->activity()->rank().host.empty()) {
    RankInfo rank = builder_->activity()->rank();
    rank.host = others.hostnames(0);
    builder_->activity()->set_rank(rank);
  }
  for (const std::string& e : others.errors()) {
    builder_->Note(file_,
                   absl::StrCat("profiler error recorded in the trace: ", e));
  }
  return absl::OkStatus();
}

void XSpaceImport::ClassifyPlanes() {
  for (const PlaneRef& plane : planes_) {
    const std::string lower = absl::AsciiStrToLower(plane.name);
    if (lower == "/host:cpu") {
      hosts_.push_back(&plane);
    } else if (lower == "/host:python-tracer") {
      python_plane_ = &plane;
      for (const LineRef& line : plane.lines) {
        python_lines_.emplace(line.header.id(), &line);
      }
    } else if (absl::StartsWith(lower, "/device:gpu:")) {
      gpus_.push_back(&plane);
    } else if (lower == "/host:metadata") {
      metadata_plane_ = &plane;
    } else if (lower == "/host:__scoperangecallstack__") {
      scope_plane_ = &plane;
    } else {
      int64_t events = 0;
      for (const LineRef& line : plane.lines) events += CountEvents(line);
      if (events > 0) {
        builder_->Count(
            file_,
            absl::StrCat("events on plane \"", plane.name, "\" not mapped"),
            events);
      }
    }
  }
  if (python_plane_ != nullptr) {
    corrupt_ |= !ParseMeta(*python_plane_, &python_meta_);
    py_stats_ = std::make_unique<PlaneStats>(python_meta_);
  }
}

void XSpaceImport::LoadXlaPlanes() {
  if (metadata_plane_ != nullptr) {
    XPlane meta;
    corrupt_ |= !ParseMeta(*metadata_plane_, &meta);
    PlaneStats stats(meta);
    for (const XStat& s : meta.stats()) {
      for (const char* name : {"jax_version", "jaxlib_version"}) {
        jax_ |= stats.Id(name) == s.metadata_id();
      }
    }
    if (!xla_.AddModules(meta)) {
      builder_->Note(file_,
                     "an XLA module's HloProto does not decode; its events "
                     "are linked as other events");
    }
  }
  if (scope_plane_ != nullptr) {
    XPlane meta;
    corrupt_ |= !ParseMeta(*scope_plane_, &meta);
    xla_.AddScopeRanges(meta);
  }
}

bool XSpaceImport::FindRootSteps() {
  struct Root {
    int64_t start = 0, start_ns = 0, end_ns = 0;
    std::optional<int64_t> number;
  };
  std::vector<Root> roots;
  for (const PlaneRef* plane : hosts_) {
    XPlane meta;
    corrupt_ |= !ParseMeta(*plane, &meta);
    PlaneStats stats(meta);
    if (!stats.Id("_r").has_value()) continue;
    for (const LineRef& ref : plane->lines) {
      int64_t open_end = INT64_MIN;  // a root nested in another is not one
      corrupt_ |= !ForEachEvent(ref, [&](const XEvent& ev) {
        const XEventMetadata* md = Metadata(meta, ev);
        int64_t start, duration;
        if (stats.Find(ev, md, "_r") == nullptr ||
            !TimeOf(ref.header, ev, &start, &duration)) {
          return;
        }
        Root r{start, StartNs(ref.header, ev), 0,
               stats.Int(ev, md, "step_num")};
        r.end_ns = SatAdd(r.start_ns, DurationNs(ev));
        if (!r.number.has_value()) r.number = stats.Int(ev, md, "iter_num");
        if (r.start_ns < open_end) return;
        open_end = r.end_ns;
        roots.push_back(r);
      });
    }
  }
  if (roots.empty()) return false;
  std::sort(roots.begin(), roots.end(),
            [](const Root& a, const Root& b) { return a.start < b.start; });
  for (size_t i = 0; i < roots.size(); ++i) {
    // Negative steps mean "average" to tfprof: such a root is numbered.
    const int64_t step = roots[i].number.value_or(-1) >= 0
                             ? *roots[i].number
                             : static_cast<int64_t>(i);
    steps_.Add(roots[i].start, step);
    builder_->activity()->AddStepSpan(step, roots[i].start_ns, roots[i].end_ns);
  }
  steps_.Sort();
  root_steps_ = true;
  return true;
}

void XSpaceImport::FindSteps() {
  absl::flat_hash_map<int64_t, int64_t> first_start;
  // A step's span is its longest marker, as xprof's step time is: with
  // several GPUs each marks the step, and their markers need not overlap
  // (replicas that ran the step at different times).
  std::map<int64_t, std::pair<int64_t, int64_t>> longest;  // group -> span
  for (const PlaneRef* plane : gpus_) {
    XPlane meta;
    corrupt_ |= !ParseMeta(*plane, &meta);
    PlaneStats stats(meta);
    for (const LineRef& ref : plane->lines) {
      const XLine& line = ref.header;
      if (line.name() != "Steps") continue;
      corrupt_ |= !ForEachEvent(ref, [&](const XEvent& ev) {
        std::optional<int64_t> group =
            stats.Int(ev, Metadata(meta, ev), "group_id");
        std::optional<int64_t> start = StartMicros(line, ev);
        // Negative steps mean "average" to tfprof: not a step.
        if (!group.has_value() || *group < 0 || !start.has_value()) return;
        auto [it, inserted] = first_start.emplace(*group, *start);
        if (!inserted) it->second = std::min(it->second, *start);
        const int64_t start_ns = StartNs(line, ev);
        const int64_t end_ns = SatAdd(start_ns, DurationNs(ev));
        auto [span, first] =
            longest.emplace(*group, std::pair(start_ns, end_ns));
        if (!first &&
            end_ns - start_ns > span->second.second - span->second.first) {
          span->second = {start_ns, end_ns};
        }
      });
    }
  }
  for (const auto& [group, span] : longest) {
    builder_->activity()->AddStepSpan(group, span.first, span.second);
  }
  for (const auto& [group, start] : first_start) {
    steps_.Add(start, group);
    groups_.insert(group);
  }
  steps_.Sort();
}

void XSpaceImport::ImportHostPlane(const PlaneRef& plane) {
  XPlane meta;
  corrupt_ |= !ParseMeta(plane, &meta);
  PlaneStats stats(meta);
  // Threads are named by their lines; a name two lines share (two python3
  // threads) gets each line's id, or their busy times would be one lane's.
  absl::flat_hash_map<std::string, int> named;
  for (const LineRef& ref : plane.lines) ++named[ref.header.name()];
  XLine line, python;  // one line's events at a time (nesting needs them all)
  for (const LineRef& ref : plane.lines) {
    if (!ParseBytes(ref.bytes, &line)) {
      corrupt_ = true;
      continue;
    }
    std::vector<HostEvent> events;
    events.reserve(line.events_size());
    for (const XEvent& ev : line.events()) {
      CollectHostEvent(stats, meta, line, ev, false, &events);
    }
    auto py = python_lines_.find(line.id());
    if (py != python_lines_.end()) {
      if (!ParseBytes(py->second->bytes, &python)) {
        corrupt_ = true;
      } else {
        for (const XEvent& ev : python.events()) {
          CollectHostEvent(*py_stats_, python_meta_, python, ev, true, &events);
        }
      }
    }
    std::string thread = absl::StrCat(
        plane.name, "/",
        line.name().empty() ? absl::StrCat(line.id()) : line.name());
    if (!line.name().empty() && named[line.name()] > 1) {
      absl::StrAppend(&thread, " #", line.id());
    }
    host_thread_ = builder_->activity()->Intern(thread);
    NestHostEvents(stats, &events);
    AddHostExecs(stats, events, thread);
  }
}

void XSpaceImport::CollectHostEvent(const PlaneStats& stats,
                                    const XPlane& plane, const XLine& line,
                                    const XEvent& ev, bool python,
                                    std::vector<HostEvent>* events) {
  HostEvent h;
  if (!TimeOf(line, ev, &h.start, &h.duration)) {
    ++bad_events_;
    return;
  }
  h.event = &ev;
  h.start_ns = StartNs(line, ev);
  h.duration_ns = DurationNs(ev);
  h.md = Metadata(plane, ev);
  const absl::string_view name =
      h.md != nullptr ? absl::string_view(h.md->name()) : "";
  if (python || (jax_ && absl::StartsWith(name, "$"))) {
    if (!absl::StartsWith(name, "$")) return;
    h.kind = HostKind::kPython;
    h.name = name;
  } else if (!jax_ && SplitTfOp(name, &h.name, &h.type)) {
    h.kind = HostKind::kOp;
  } else if (!jax_ && absl::StartsWith(name, kIteratorPrefix)) {
    h.kind = HostKind::kOp;  // a tf.data iterator: counted like an op
    h.name = name;
    h.type = kDatasetType;
  } else if (name == "MemoryAllocation" || name == "MemoryDeallocation") {
    h.kind = HostKind::kOther;
    h.memory = true;
    h.deallocation = name == "MemoryDeallocation";
  } else if (stats.Find(ev, h.md, "correlation_id") != nullptr) {
    h.kind = HostKind::kOther;
  } else if (jax_ && !name.empty() && name != "<UNKNOWN>") {
    h.kind = HostKind::kOp;  // a JAX capture's host events are its ops
    h.name = name;
    h.type = name;
  } else {
    return;  // other host activity: not an op
  }
  events->push_back(std::move(h));
}

void XSpaceImport::NestHostEvents(const PlaneStats& stats,
                                  std::vector<HostEvent>* events) {
  const int32_t n = static_cast<int32_t>(events->size());
  std::vector<int32_t> order(n);
  for (int32_t i = 0; i < n; ++i) order[i] = i;
  SortForNesting(
      *events, [](const HostEvent&) { return 0; }, &order);
  op_stack_.clear();
  py_stack_.clear();
  for (int32_t i : order) {
    const HostEvent& h = (*events)[i];
    PopEnded(*events, h.start, &op_stack_);
    PopEnded(*events, h.start, &py_stack_);
    switch (h.kind) {
      case HostKind::kPython:
        py_stack_.push_back(i);
        break;
      case HostKind::kOther:
        NestOther(stats, i, events);
        break;
      case HostKind::kOp:
        NestOp(stats, i, events);
        break;
    }
  }
}

void XSpaceImport::NestOther(const PlaneStats& stats, int32_t i,
                             std::vector<HostEvent>* events) {
  HostEvent& h = (*events)[i];
  int32_t owner = op_stack_.empty() ? -1 : op_stack_.back();
  if (jax_ && !h.memory && owner < 0) {
    // A launch outside any host op counts as an op of its own (the copy it
    // starts is its work), as a PyTorch runtime call outside any op does.
    h.kind = HostKind::kOp;
    h.name = h.md != nullptr ? absl::string_view(h.md->name()) : "";
    h.type = h.name;
    NestOp(stats, i, events);
    owner = i;
  }
  if (h.memory) {
    AddMemorySample(stats, h, owner < 0 ? -1 : (*events)[owner].node);
    if (owner < 0) {
      ++orphan_memory_;
    } else if (jax_) {
      // A JAX capture's allocations are the XLA programs' buffers, made by
      // the runtime while it dispatches: samples of the allocators' bytes
      // in use (with the host event around them as their op), not bytes of
      // that host event.
      ++program_memory_;
    } else {
      (*events)[owner].memory_events.push_back(i);
    }
    return;
  }
  const std::string ctx = stats.Text(*h.event, h.md, "context_id").value_or("");
  const std::string corr =
      stats.Text(*h.event, h.md, "correlation_id").value_or("");
  if (owner >= 0) {
    launches_[absl::StrCat(ctx, "/", corr)] = Launch{
        (*events)[owner].node, (*events)[owner].step, h.start_ns, host_thread_};
  } else if (root_steps_) {
    launches_[absl::StrCat(ctx, "/", corr)] =
        Launch{-1, StepOf(std::nullopt, h.start), DeviceWork::kNoLaunch, 0};
  }
}

void XSpaceImport::NestOp(const PlaneStats& stats, int32_t i,
                          std::vector<HostEvent>* events) {
  HostEvent& h = (*events)[i];
  h.exclusive_ns = h.duration_ns;
  if (!op_stack_.empty()) {
    HostEvent& parent = (*events)[op_stack_.back()];
    parent.exclusive_ns -= NestedNanos(h, parent);
  }
  if (jax_) {
    h.node = HostPathNode(&h, *events);
  } else {
    h.node = h.type == kDatasetType
                 ? builder_->TypedNode(DatasetNodeName(h.name), h.type)
                 : builder_->TypedNode(h.name, h.type);
  }
  h.step = StepOf(stats.Int(*h.event, h.md, "group_id"), h.start);
  if (!py_stack_.empty() && !builder_->HasCode(h.node)) {
    builder_->SetCode(h.node,
                      OpenFrames(*events, py_stack_, [](const HostEvent& py) {
                        return ParsePythonEvent(py.name);
                      }));
  }
  op_stack_.push_back(i);
}

int32_t XSpaceImport::HostPathNode(HostEvent* h,
                                   const std::vector<HostEvent>& events) {
  if (!op_stack_.empty()) {
    const HostEvent& parent = events[op_stack_.back()];
    if (parent.depth < kMaxPathDepth) {
      h->base = parent.node;
      h->depth = parent.depth + 1;
    } else {
      h->base = parent.base;
      h->depth = parent.depth;
    }
  } else {
    h->depth = 1;
  }
  const std::string component = ScopeComponent(h->name);
  return builder_->Node(
      h->base >= 0 ? absl::StrCat(builder_->NodeName(h->base), "/", component)
                   : component,
      h->type);
}

void XSpaceImport::AddMemorySample(const PlaneStats& stats, const HostEvent& h,
                                   int32_t node) {
  std::optional<int64_t> bytes = stats.Int(*h.event, h.md, "allocation_bytes");
  std::optional<int64_t> heap = stats.Int(*h.event, h.md, "bytes_allocated");
  if (!bytes.has_value() && !heap.has_value()) return;
  Activity* activity = builder_->activity();
  MemorySample m;
  m.time_ns = h.start_ns;
  m.bytes = h.deallocation ? -bytes.value_or(0) : bytes.value_or(0);
  m.bytes_in_use =
      heap.has_value()
          ? SatAdd(*heap,
                   stats.Int(*h.event, h.md, "bytes_reserved").value_or(0))
          : MemorySample::kNotRecorded;
  m.allocator = activity->Intern(stats.Text(*h.event, h.md, "allocator_name")
                                     .value_or("unknown_allocator"));
  // The op TensorFlow names on the event, else the op around it.
  const std::optional<std::string> tf_op = stats.Text(*h.event, h.md, "tf_op");
  if (tf_op.has_value() && !tf_op->empty()) {
    m.op = activity->Intern(*tf_op);
  } else if (node >= 0) {
    m.op = activity->Intern(builder_->NodeName(node));
  }
  m.address =
      static_cast<uint64_t>(stats.Int(*h.event, h.md, "addr").value_or(0));
  activity->AddMemorySample(m);
}

void XSpaceImport::AddHostExecs(const PlaneStats& stats,
                                const std::vector<HostEvent>& events,
                                const std::string& thread) {
  Activity* activity = builder_->activity();
  const uint32_t thread_id = activity->Intern(thread);
  for (const HostEvent& h : events) {
    if (h.kind != HostKind::kOp) continue;
    activity->AddHostSpan(HostSpan{
        h.start_ns, h.duration_ns, h.step,
        activity->Intern(h.md != nullptr ? h.md->name() : std::string()),
        activity->Intern(builder_->NodeName(h.node)), thread_id});
    const TraceBuilder::ExecRef exec =
        builder_->AddExec(h.step, kHostCpuDevice, h.node, h.start_ns,
                          std::max<int64_t>(h.exclusive_ns, 0));
    AddMemory(stats, events, h, exec);
  }
}

void XSpaceImport::AddMemory(const PlaneStats& stats,
                             const std::vector<HostEvent>& events,
                             const HostEvent& h, TraceBuilder::ExecRef exec) {
  ExecMemory memory(builder_, exec);
  for (int32_t m : h.memory_events) {
    const HostEvent& mem = events[m];
    std::optional<int64_t> bytes =
        stats.Int(*mem.event, mem.md, "allocation_bytes");
    if (!bytes.has_value()) {
      bytes = stats.Int(*mem.event, mem.md, "requested_bytes");
    }
    if (!bytes.has_value() || *bytes < 0) {
      builder_->Count(file_,
                      "memory events without allocation_bytes, "
                      "skipped");
      continue;
    }
    memory.Record(stats.Text(*mem.event, mem.md, "allocator_name")
                      .value_or("unknown_allocator"),
                  mem.deallocation ? -*bytes : *bytes, mem.start,
                  stats.Int(*mem.event, mem.md, "bytes_allocated"));
  }
}

void XSpaceImport::ImportGpuPlane(const PlaneRef& ref) {
  XPlane plane;
  corrupt_ |= !ParseMeta(ref, &plane);
  PlaneStats stats(plane);
  const int64_t gpu = GpuIndex(plane.name());
  builder_->activity()->AddDevice(GpuDevice(gpu));
  builder_->activity()->SetDeviceInfo(GpuDevice(gpu), DeviceInfoOf(plane));
  for (const LineRef& line_ref : ref.lines) {
    const XLine& line = line_ref.header;
    if (line.name() == "TensorFlow Ops") {
      CountDeviceOpRuns(stats, plane, line_ref, gpu);
      continue;
    }
    if (!absl::StartsWith(line.name(), "Stream #")) {
      const int64_t events = line.name() != "Steps" ? CountEvents(line_ref) : 0;
      if (events > 0) {
        builder_->Count(file_,
                        absl::StrCat("events on derived line \"", line.name(),
                                     "\" not mapped (summaries of the stream "
                                     "lines)"),
                        events);
      }
      continue;
    }
    const std::string stream_all = GpuStreamAllDevice(gpu);
    const std::string stream_device = GpuStreamDevice(gpu, StreamId(line));
    corrupt_ |= !ForEachEvent(line_ref, [&](const XEvent& ev) {
      ImportStreamEvent(stats, plane, line, ev, gpu, stream_all, stream_device);
    });
  }
}

void XSpaceImport::CountDeviceOpRuns(const PlaneStats& stats,
                                     const XPlane& plane, const LineRef& ref,
                                     int64_t gpu) {
  const XLine& line = ref.header;
  const std::string device = GpuDevice(gpu);
  corrupt_ |= !ForEachEvent(ref, [&](const XEvent& ev) {
    int64_t start, duration;
    const XEventMetadata* md = Metadata(plane, ev);
    absl::string_view name, type;
    if (md == nullptr || !SplitTfOp(md->name(), &name, &type) ||
        !TimeOf(line, ev, &start, &duration)) {
      return;
    }
    const int32_t node = builder_->TypedNode(name, type);
    const int64_t step = StepOf(stats.Int(ev, md, "group_id"), start);
    // An op that also ran on the host counts its runs there.
    if (builder_->FirstCanonicalExec(step, node)) return;
    builder_->AddExec(step, device, node, StartNs(line, ev), 0);
    ++device_op_runs_;
  });
}

void XSpaceImport::CountLinkedOpRuns() {
  std::vector<
      std::pair<std::pair<int64_t, int32_t>, std::pair<int64_t, int64_t>>>
      work(linked_work_.begin(), linked_work_.end());
  std::sort(work.begin(), work.end());  // a stable order of executions
  for (const auto& [key, first] : work) {
    const auto [step, node] = key;
    if (builder_->FirstCanonicalExec(step, node)) continue;
    builder_->AddExec(step, GpuDevice(first.first), node, first.second, 0);
    ++device_op_runs_;
  }
  // An op whose kernels all ran on one GPU belongs to it, as a RunMetadata
  // places a GPU op: its host part (the launch) counts on that GPU.
  absl::flat_hash_map<int32_t, std::string> move;
  for (const auto& [node, gpu] : linked_gpu_) {
    if (gpu >= 0) move.emplace(node, GpuDevice(gpu));
  }
  builder_->MoveExecs(kHostCpuDevice, move);
  if (!move.empty()) {
    builder_->Note(file_, absl::StrCat(move.size(),
                                       " ops that launched kernels on one GPU "
                                       "placed on that GPU (their host time "
                                       "counts there)"));
  }
}

void XSpaceImport::ImportStreamEvent(const PlaneStats& stats,
                                     const XPlane& plane, const XLine& line,
                                     const XEvent& ev, int64_t gpu,
                                     const std::string& stream_all,
                                     const std::string& stream_device) {
  int64_t start, duration;
  if (!TimeOf(line, ev, &start, &duration)) {
    ++bad_events_;
    return;
  }
  const XEventMetadata* md = Metadata(plane, ev);
  const std::string ctx = stats.Text(ev, md, "context_id").value_or("");
  const std::string corr = stats.Text(ev, md, "correlation_id").value_or("");
  auto launch = corr.empty() ? launches_.end()
                             : launches_.find(absl::StrCat(ctx, "/", corr));
  // The step of the launch where it was recorded, else the event's own.
  const int64_t step = launch != launches_.end()
                           ? launch->second.step
                           : StepOf(stats.Int(ev, md, "group_id"), start);
  int32_t node = -1;
  bool linked = true;
  std::optional<int32_t> xla = XlaNode(stats, ev, md, line, step, gpu);
  if (xla.has_value()) {
    node = *xla;
  } else if (launch != launches_.end() && launch->second.node >= 0) {
    node = launch->second.node;
    ++by_correlation_;
  } else {
    const int64_t before = unlinked_;
    node = NodeWithoutLaunch(stats, ev, md);
    linked = unlinked_ == before;
  }
  const int64_t start_ns = StartNs(line, ev);
  const int64_t duration_ns = DurationNs(ev);
  // (An XLA instruction's runs come from its module's executions.)
  if (linked && !xla.has_value()) {
    linked_work_.try_emplace({step, node}, gpu, start_ns);
    auto [it, added] = linked_gpu_.try_emplace(node, gpu);
    if (!added && it->second != gpu) it->second = -1;
  }
  builder_->AddExec(step, stream_all, node, start_ns, duration_ns);
  builder_->AddExec(step, stream_device, node, start_ns, duration_ns);
  AddWork(stats, line, ev, md, stream_device, linked ? node : -1, step,
          launch != launches_.end() ? &launch->second : nullptr);
}

std::optional<int32_t> XSpaceImport::XlaNode(const PlaneStats& stats,
                                             const XEvent& ev,
                                             const XEventMetadata* md,
                                             const XLine& line, int64_t step,
                                             int64_t gpu) {
  if (!xla_.has_programs()) return std::nullopt;
  std::optional<std::string> hlo_op = stats.Text(ev, md, "hlo_op");
  if (!hlo_op.has_value() || hlo_op->empty()) return std::nullopt;
  XlaEvent e;
  e.program_id = stats.Int(ev, md, "program_id");
  e.module = stats.Text(ev, md, "hlo_module").value_or("");
  e.hlo_op = std::move(*hlo_op);
  e.kernel = md != nullptr ? absl::string_view(md->name()) : "";
  e.scope_range_id = stats.Int(ev, md, "scope_range_id");
  e.step = step;
  e.gpu = gpu;
  e.stream = line.id();
  e.start_ns = StartNs(line, ev);
  e.duration_ns = DurationNs(ev);
  return xla_.NodeOf(e);
}

void XSpaceImport::AddWork(const PlaneStats& stats, const XLine& line,
                           const XEvent& ev, const XEventMetadata* md,
                           const std::string& stream, int32_t node,
                           int64_t step, const Launch* launch) {
  Activity* activity = builder_->activity();
  DeviceWork w;
  if (launch != nullptr && launch->start_ns != DeviceWork::kNoLaunch) {
    w.launch_ns = launch->start_ns;
    w.launch_thread = launch->thread;
  }
  w.start_ns = StartNs(line, ev);
  w.duration_ns = DurationNs(ev);
  w.step = step;
  const std::string_view name =
      md != nullptr ? std::string_view(md->name()) : "";
  w.name = activity->Intern(name);
  w.stream = activity->Intern(stream);
  if (node >= 0) w.op = activity->Intern(builder_->NodeName(node));
  w.kind = StreamWorkKind(md != nullptr ? md->name() : std::string(),
                          stats.Find(ev, md, "memcpy_details") != nullptr);
  if (w.kind == WorkKind::kKernel) {
    w.launch =
        activity->Intern(stats.Text(ev, md, "kernel_details").value_or(""));
  }
  activity->AddWork(w);
}

int32_t XSpaceImport::NodeWithoutLaunch(const PlaneStats& stats,
                                        const XEvent& ev,
                                        const XEventMetadata* md) {
  std::optional<std::string> annotation = stats.Text(ev, md, "annotation");
  const std::string op =
      annotation.has_value() ? InnermostAnnotation(*annotation) : "";
  if (!op.empty()) {
    ++by_annotation_;
    absl::string_view name, type;
    if (SplitTfOp(op, &name, &type)) return builder_->TypedNode(name, type);
    return builder_->TypedNode(op, op);
  }
  const std::string kind = StreamWorkKind(md != nullptr ? md->name() : "",
                                          false) == WorkKind::kKernel
                               ? "kernel"
                               : md->name();
  ++unlinked_;
  return builder_->UnlinkedNode(kind, kind);
}

void XSpaceImport::AddNotes() {
  if (root_steps_) {
    builder_->Note(file_,
                   absl::StrCat("steps from root markers (events with stat "
                                "_r, as jax.profiler.StepTraceAnnotation "
                                "writes): ",
                                steps_.size(),
                                "; a step's wall time is its marker's span; "
                                "device work joins the step of the host "
                                "call that launched it"));
  } else if (!steps_.empty()) {
    builder_->Note(
        file_, absl::StrCat("step groups on the Steps lines: ", steps_.size(),
                            " (step = group id); events of no step "
                            "group go to the step that started "
                            "last before them"));
  }
  steps_.NoteBeforeFirst(file_, "step", builder_);
  const std::pair<const char*, int64_t> counts[] = {
      {"GPU events without a recorded launch linked to their op by its "
       "annotation",
       by_annotation_},
      {"GPU events linked to no op: on nodes _unlinked/<kind>", unlinked_},
      {"memory events outside any op, not mapped", orphan_memory_},
      {"memory events of XLA programs' buffers, kept as the allocators' "
       "bytes in use (memory, steps), not as bytes of the host event around "
       "them",
       program_memory_},
      {"events without a usable time (aggregated, negative or out of range), "
       "skipped",
       bad_events_},
      {"GPU events linked to the op that launched them by correlation id",
       by_correlation_},
      {"runs of ops on the GPU (ops with no host event in the step: each "
       "event of the \"TensorFlow Ops\" line, else one per step with GPU "
       "work)",
       device_op_runs_}};
  for (const auto& [what, n] : counts) builder_->Count(file_, what, n);
  xla_.AddNotes();
}

}  // namespace

absl::Status ImportXSpace(absl::string_view contents, const std::string& file,
                          int64_t file_index, TraceBuilder* builder) {
  return XSpaceImport(file, file_index, builder).Run(contents);
}

}  // namespace trace_internal
}  // namespace tfprof
