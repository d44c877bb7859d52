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
#include "profiler/importers/common/steps.h"
#include "profiler/importers/xspace/xspace_import.h"
#include "profiler/importers/xspace/xspace_names.h"
#include "profiler/importers/xspace/xspace_reader.h"

namespace tfprof {
namespace trace_internal {

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
  if (!known_planes) return NotAKnownTrace(file_, parsed);
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

absl::Status ImportXSpace(absl::string_view contents, const std::string& file,
                          int64_t file_index, TraceBuilder* builder) {
  return XSpaceImport(file, file_index, builder).Run(contents);
}

}  // namespace trace_internal
}  // namespace tfprof
