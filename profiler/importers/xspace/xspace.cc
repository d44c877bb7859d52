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
#include <iterator>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "profiler/base/wire.h"
#include "profiler/importers/common/nesting.h"
#include "profiler/importers/common/steps.h"
#include "proto/xplane.pb.h"

namespace tfprof {
namespace trace_internal {
namespace {

using ::tensorflow::profiler::XEvent;
using ::tensorflow::profiler::XEventMetadata;
using ::tensorflow::profiler::XLine;
using ::tensorflow::profiler::XPlane;
using ::tensorflow::profiler::XSpace;
using ::tensorflow::profiler::XStat;

// Start of an event in microseconds (rounded half up), or nullopt for
// aggregated events (num_occurrences instead of a time).
std::optional<int64_t> StartMicros(const XLine& line, const XEvent& ev) {
  if (ev.data_case() == XEvent::kNumOccurrences) return std::nullopt;
  const int64_t ns = line.timestamp_ns();
  const int64_t ns_q = FloorDiv(ns, 1000);
  const int64_t ns_r = ns - ns_q * 1000;  // [0, 999]
  const int64_t off = ev.offset_ps();
  const int64_t off_q = FloorDiv(off, 1000000);
  const int64_t off_r = off - off_q * 1000000;  // [0, 999999]
  const int64_t rem = ns_r * 1000 + off_r;      // picoseconds
  // ns_q and off_q are whole microseconds; rem is what is left, in ps.
  return SatAdd(SatAdd(ns_q, off_q), (rem + 500000) / 1000000);
}

std::optional<int64_t> DurationMicros(const XEvent& ev) {
  const int64_t ps = ev.duration_ps();
  if (ps < 0) return std::nullopt;
  return ps / 1000000 + ((ps % 1000000) >= 500000 ? 1 : 0);
}

// Start and duration in nanoseconds (rounded half up), for the activity
// record.
int64_t StartNs(const XLine& line, const XEvent& ev) {
  return SatAdd(line.timestamp_ns(),
                FloorDiv(SatAdd(ev.offset_ps(), 500), 1000));
}
int64_t DurationNs(const XEvent& ev) {
  return std::max<int64_t>(FloorDiv(SatAdd(ev.duration_ps(), 500), 1000), 0);
}

// Stat access by name within one plane.
class PlaneStats {
 public:
  explicit PlaneStats(const XPlane& plane) : plane_(plane) {
    for (const auto& [id, md] : plane.stat_metadata()) {
      ids_.emplace(md.name(), id);
    }
  }

  const XStat* Find(const XEvent& ev, const XEventMetadata* md,
                    absl::string_view name) const {
    auto it = ids_.find(name);
    if (it == ids_.end()) return nullptr;
    for (const XStat& s : ev.stats()) {
      if (s.metadata_id() == it->second) return &s;
    }
    if (md != nullptr) {
      for (const XStat& s : md->stats()) {
        if (s.metadata_id() == it->second) return &s;
      }
    }
    return nullptr;
  }

  std::optional<int64_t> Int(const XEvent& ev, const XEventMetadata* md,
                             absl::string_view name) const {
    const XStat* s = Find(ev, md, name);
    if (s == nullptr) return std::nullopt;
    switch (s->value_case()) {
      case XStat::kInt64Value:
        return s->int64_value();
      case XStat::kUint64Value:
        if (s->uint64_value() >
            static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
          return std::nullopt;
        }
        return static_cast<int64_t>(s->uint64_value());
      case XStat::kDoubleValue:
        return RoundToInt64(s->double_value());
      default:
        return std::nullopt;
    }
  }

  std::optional<std::string> Text(const XEvent& ev, const XEventMetadata* md,
                                  absl::string_view name) const {
    const XStat* s = Find(ev, md, name);
    if (s == nullptr) return std::nullopt;
    switch (s->value_case()) {
      case XStat::kStrValue:
        return s->str_value();
      case XStat::kRefValue: {
        auto it =
            plane_.stat_metadata().find(static_cast<int64_t>(s->ref_value()));
        if (it == plane_.stat_metadata().end()) return std::nullopt;
        return it->second.name();
      }
      case XStat::kInt64Value:
        return absl::StrCat(s->int64_value());
      case XStat::kUint64Value:
        return absl::StrCat(s->uint64_value());
      default:
        return std::nullopt;
    }
  }

 private:
  const XPlane& plane_;
  absl::flat_hash_map<std::string, int64_t> ids_;
};

// What a GPU plane's own stats say of the device (they pick a row of the
// peak table; the recorded clock is often the maximum boost, so it never
// gives a peak).
DeviceInfo DeviceInfoOf(const XPlane& plane) {
  DeviceInfo info;
  for (const XStat& s : plane.stats()) {
    auto md = plane.stat_metadata().find(s.metadata_id());
    if (md == plane.stat_metadata().end()) continue;
    const std::string& name = md->second.name();
    const int64_t v = s.value_case() == XStat::kInt64Value ? s.int64_value()
                      : s.value_case() == XStat::kUint64Value
                          ? static_cast<int64_t>(
                                std::min<uint64_t>(s.uint64_value(), INT64_MAX))
                          : 0;
    if (name == "gpu_device_name") {
      if (s.value_case() == XStat::kStrValue) info.name = s.str_value();
      auto ref =
          plane.stat_metadata().find(static_cast<int64_t>(s.ref_value()));
      if (s.value_case() == XStat::kRefValue &&
          ref != plane.stat_metadata().end()) {
        info.name = ref->second.name();
      }
    } else if (name == "core_count") {
      info.units = v;
    } else if (name == "clock_rate") {
      info.clock_khz = v;
    } else if (name == "memory_bandwidth") {
      info.bytes_per_sec = v;
    } else if (name == "compute_cap_major") {
      info.cc_major = static_cast<int32_t>(v);
    } else if (name == "compute_cap_minor") {
      info.cc_minor = static_cast<int32_t>(v);
    }
  }
  return info;
}

const XEventMetadata* Metadata(const XPlane& plane, const XEvent& ev) {
  auto it = plane.event_metadata().find(ev.metadata_id());
  return it == plane.event_metadata().end() ? nullptr : &it->second;
}

bool IsIdentifier(absl::string_view s) {
  if (s.empty()) return false;
  if (!absl::ascii_isalpha(s[0]) && s[0] != '_') return false;
  for (char c : s) {
    if (!absl::ascii_isalnum(c) && c != '_') return false;
  }
  return true;
}

// "<node>:<OpType>" with exactly one ':' and no whitespace.
bool SplitTfOp(absl::string_view text, absl::string_view* name,
               absl::string_view* type) {
  const size_t colon = text.find(':');
  if (colon == absl::string_view::npos || colon == 0 ||
      text.find(':', colon + 1) != absl::string_view::npos) {
    return false;
  }
  absl::string_view n = text.substr(0, colon);
  absl::string_view t = text.substr(colon + 1);
  for (char c : n) {
    if (absl::ascii_isspace(c)) return false;
  }
  if (!IsIdentifier(t)) return false;
  *name = n;
  *type = t;
  return true;
}

// The innermost op of a TensorFlow annotation "a:A#k=v#::b:B#...#".
std::string InnermostAnnotation(absl::string_view annotation) {
  std::vector<absl::string_view> parts = absl::StrSplit(annotation, "::");
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
    absl::string_view p = *it;
    const size_t hash = p.find('#');
    if (hash != absl::string_view::npos) p = p.substr(0, hash);
    p = absl::StripAsciiWhitespace(p);
    if (!p.empty()) return std::string(p);
  }
  return "";
}

// "$file.py:123 function" or "$module function".
Frame ParsePythonEvent(absl::string_view name) {
  absl::ConsumePrefix(&name, "$");
  Frame f;
  const size_t space = name.rfind(' ');
  absl::string_view head = name;
  if (space != absl::string_view::npos) {
    f.function = std::string(name.substr(space + 1));
    head = name.substr(0, space);
  }
  const size_t colon = head.rfind(':');
  int32_t line = 0;
  if (colon != absl::string_view::npos &&
      absl::SimpleAtoi(head.substr(colon + 1), &line)) {
    f.file = std::string(head.substr(0, colon));
    f.lineno = line;
  } else {
    f.file = std::string(head);
  }
  return f;
}

int64_t GpuIndex(absl::string_view plane_name) {
  const size_t colon = plane_name.rfind(':');
  int64_t gpu = 0;
  if (colon != absl::string_view::npos &&
      absl::SimpleAtoi(plane_name.substr(colon + 1), &gpu)) {
    return gpu;
  }
  return 0;
}

// "Stream #13(Compute)" -> "13".
std::string StreamId(const XLine& line) {
  absl::string_view name = line.name();
  if (absl::ConsumePrefix(&name, "Stream #")) {
    size_t end = 0;
    while (end < name.size() && absl::ascii_isdigit(name[end])) ++end;
    if (end > 0) return std::string(name.substr(0, end));
  }
  return absl::StrCat(line.id());
}

// tf.data iterators run as host events named by their place in the input
// pipeline, "Iterator::Model::ParallelMapV2::Zip[0]::..."; xprof counts them
// as ops of type "Dataset". Their nodes name the stages as a scope path,
// "Iterator/Model/ParallelMapV2/Zip[0]/...", so the scope view shows the
// pipeline as a tree.
constexpr absl::string_view kIteratorPrefix = "Iterator::";
constexpr absl::string_view kDatasetType = "Dataset";

std::string DatasetNodeName(absl::string_view event_name) {
  return absl::StrReplaceAll(event_name, {{"::", "/"}});
}

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
};

// A usable time: start and duration present and far from the int64 limits.
bool TimeOf(const XLine& line, const XEvent& ev, int64_t* start,
            int64_t* duration) {
  std::optional<int64_t> s = StartMicros(line, ev);
  std::optional<int64_t> d = DurationMicros(ev);
  if (!s.has_value() || !d.has_value() || *s > INT64_MAX / 4 ||
      *s < INT64_MIN / 4 || *d > INT64_MAX / 4) {
    return false;
  }
  *start = *s;
  *duration = *d;
  return true;
}

// An XSpace decoded in place, without the whole message: each line's
// fields but its events are a message; a plane's fields but its lines (its
// metadata) are kept serialized and decoded while the plane is imported; a
// line's events stay as their bytes in the file, decoded one at a time
// while they are imported (or, for the host lines whose events are nested,
// one line at a time). So memory is the file, one plane's metadata and one
// line, and files past protobuf's 2 GiB limit load.
struct LineRef {
  XLine header;             // every field but the events
  absl::string_view bytes;  // the serialized line
};
struct PlaneRef {
  std::string name;
  std::string meta;  // every field but the lines, serialized
  std::vector<LineRef> lines;
};

// Splits the serialized message `bytes`: each occurrence of the
// length-delimited field `field` goes to on_field(value); the raw bytes of
// every other field to *rest (unless rest is null). False if the bytes are
// malformed.
template <typename F>
bool SplitField(absl::string_view bytes, uint32_t field, std::string* rest,
                F on_field) {
  wire::Reader r(std::string_view(bytes.data(), bytes.size()));
  uint32_t f;
  int w;
  while (true) {
    const uint8_t* start = r.pos();
    if (!r.Next(&f, &w)) break;
    if (f == field && w == wire::kBytes) {
      const std::string_view v = r.Bytes();
      if (!r.ok()) return false;
      on_field(absl::string_view(v.data(), v.size()));
      continue;
    }
    r.Skip(w);
    if (!r.ok()) return false;
    if (rest != nullptr) {
      rest->append(reinterpret_cast<const char*>(start),
                   static_cast<size_t>(r.pos() - start));
    }
  }
  return r.ok();
}

// Parses `bytes` into *m (cleared first). Sizes are within int: fields of a
// file are at most its size, and a field over 2 GiB is refused.
template <typename M>
bool ParseBytes(absl::string_view bytes, M* m) {
  m->Clear();
  return bytes.size() <= static_cast<size_t>(INT_MAX) &&
         m->ParseFromArray(bytes.data(), static_cast<int>(bytes.size()));
}

// Indexes one serialized plane. `scratch` checks that its metadata decodes
// (and gives its name); it is not kept.
bool ParsePlane(absl::string_view bytes, PlaneRef* plane, XPlane* scratch) {
  bool lines_ok = true;
  const bool split =
      SplitField(bytes, 3, &plane->meta, [&](absl::string_view line) {
        LineRef& l = plane->lines.emplace_back();
        l.bytes = line;
        std::string header;
        lines_ok = lines_ok &&
                   SplitField(line, 4, &header, [](absl::string_view) {}) &&
                   ParseBytes(header, &l.header);
      });
  if (!split || !lines_ok || !ParseBytes(plane->meta, scratch)) return false;
  plane->name = scratch->name();
  scratch->Clear();
  return true;
}

// Calls f(event) for each event of the line, decoded into one reused
// message; false (at the first) if an event is malformed.
template <typename F>
bool ForEachEvent(const LineRef& line, F f) {
  XEvent ev;
  bool ok = true;
  const bool split =
      SplitField(line.bytes, 4, nullptr, [&](absl::string_view e) {
        if (!ok) return;
        ok = ParseBytes(e, &ev);
        if (ok) f(static_cast<const XEvent&>(ev));
      });
  return split && ok;
}

int64_t CountEvents(const LineRef& line) {
  int64_t n = 0;
  (void)SplitField(line.bytes, 4, nullptr, [&](absl::string_view) { ++n; });
  return n;
}

// One XSpace's import: planes classified, steps from the step groups, host
// ops nested per line, then the GPU stream lines linked to their ops.
class XSpaceImport {
 public:
  XSpaceImport(const std::string& file, int64_t file_index,
               TraceBuilder* builder)
      : file_(file), builder_(builder), steps_(file_index) {}

  absl::Status Run(absl::string_view contents) {
    absl::Status parsed = Parse(contents);
    if (!parsed.ok()) return parsed;
    ClassifyPlanes();
    FindSteps();
    for (const PlaneRef* plane : hosts_) ImportHostPlane(*plane);
    for (const PlaneRef* plane : gpus_) ImportGpuPlane(*plane);
    if (corrupt_) {
      return absl::InvalidArgumentError(absl::StrCat(
          file_, ": corrupt XSpace (an event or line that does not decode)"));
    }
    CountLinkedOpRuns();
    AddNotes();
    return absl::OkStatus();
  }

 private:
  absl::Status Parse(absl::string_view contents);
  void ClassifyPlanes();
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
  // Records a stream event as accelerator work of `node` (-1: not known).
  void AddWork(const PlaneStats& stats, const XLine& line, const XEvent& ev,
               const XEventMetadata* md, const std::string& stream,
               int32_t node, int64_t step);
  // The node of a GPU event with no recorded launch: its annotation's op,
  // else _unlinked/<kind>.
  int32_t NodeWithoutLaunch(const PlaneStats& stats, const XEvent& ev,
                            const XEventMetadata* md);
  void AddNotes();

  const std::string& file_;
  TraceBuilder* builder_;
  std::vector<PlaneRef> planes_;
  std::vector<const PlaneRef*> hosts_, gpus_;
  absl::flat_hash_map<int64_t, const LineRef*> python_lines_;
  const PlaneRef* python_plane_ = nullptr;
  XPlane python_meta_;  // its metadata, decoded
  // An event or line did not decode (found while importing).
  bool corrupt_ = false;
  std::unique_ptr<PlaneStats> py_stats_;
  StepStarts steps_;
  absl::flat_hash_set<int64_t> groups_;
  // "<context>/<correlation>" of a launch -> (node, step) of its op.
  absl::flat_hash_map<std::string, std::pair<int32_t, int64_t>> launches_;
  // The sweep's open ops and Python frames on the current line.
  std::vector<int32_t> op_stack_, py_stack_;
  int64_t orphan_memory_ = 0, bad_events_ = 0;
  int64_t by_correlation_ = 0, by_annotation_ = 0, unlinked_ = 0;
  int64_t device_op_runs_ = 0;
  // (step, node) -> (gpu, start ns) of the first GPU work linked to an op.
  absl::flat_hash_map<std::pair<int64_t, int32_t>, std::pair<int64_t, int64_t>>
      linked_work_;
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
  if (split && planes_ok && ParseBytes(rest, &others)) {
    for (const PlaneRef& plane : planes_) {
      known_planes |= absl::StartsWith(plane.name, "/host:") ||
                      absl::StartsWith(plane.name, "/device:");
    }
  }
  if (!known_planes) {
    return absl::InvalidArgumentError(
        absl::StrCat(file_, ": not a known trace format", kExpectedFormats));
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
    corrupt_ |= !ParseBytes(python_plane_->meta, &python_meta_);
    py_stats_ = std::make_unique<PlaneStats>(python_meta_);
  }
}

void XSpaceImport::FindSteps() {
  absl::flat_hash_map<int64_t, int64_t> first_start;
  for (const PlaneRef* plane : gpus_) {
    XPlane meta;
    corrupt_ |= !ParseBytes(plane->meta, &meta);
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
        builder_->activity()->AddStepSpan(*group, start_ns,
                                          SatAdd(start_ns, DurationNs(ev)));
      });
    }
  }
  for (const auto& [group, start] : first_start) {
    steps_.Add(start, group);
    groups_.insert(group);
  }
  steps_.Sort();
}

void XSpaceImport::ImportHostPlane(const PlaneRef& plane) {
  XPlane meta;
  corrupt_ |= !ParseBytes(plane.meta, &meta);
  PlaneStats stats(meta);
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
    NestHostEvents(stats, &events);
    AddHostExecs(stats, events,
                 absl::StrCat(plane.name, "/",
                              line.name().empty() ? absl::StrCat(line.id())
                                                  : line.name()));
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
  if (python) {
    if (!absl::StartsWith(name, "$")) return;
    h.kind = HostKind::kPython;
    h.name = name;
  } else if (SplitTfOp(name, &h.name, &h.type)) {
    h.kind = HostKind::kOp;
  } else if (absl::StartsWith(name, kIteratorPrefix)) {
    h.kind = HostKind::kOp;  // a tf.data iterator: counted like an op
    h.name = name;
    h.type = kDatasetType;
  } else if (name == "MemoryAllocation" || name == "MemoryDeallocation") {
    h.kind = HostKind::kOther;
    h.memory = true;
    h.deallocation = name == "MemoryDeallocation";
  } else if (stats.Find(ev, h.md, "correlation_id") != nullptr) {
    h.kind = HostKind::kOther;
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
  const HostEvent& h = (*events)[i];
  const int32_t owner = op_stack_.empty() ? -1 : op_stack_.back();
  if (h.memory) {
    AddMemorySample(stats, h, owner < 0 ? -1 : (*events)[owner].node);
    if (owner < 0) {
      ++orphan_memory_;
    } else {
      (*events)[owner].memory_events.push_back(i);
    }
    return;
  }
  const std::string ctx = stats.Text(*h.event, h.md, "context_id").value_or("");
  const std::string corr =
      stats.Text(*h.event, h.md, "correlation_id").value_or("");
  if (owner >= 0) {
    launches_[absl::StrCat(ctx, "/", corr)] = {(*events)[owner].node,
                                               (*events)[owner].step};
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
  h.node = h.type == kDatasetType
               ? builder_->TypedNode(DatasetNodeName(h.name), h.type)
               : builder_->TypedNode(h.name, h.type);
  h.step = StepOf(stats.Int(*h.event, h.md, "group_id"), h.start);
  if (!py_stack_.empty() && !builder_->HasCode(h.node)) {
    builder_->SetCode(h.node,
                      OpenFrames(*events, py_stack_, [](const HostEvent& py) {
                        return ParsePythonEvent(py.name);
                      }));
  }
  op_stack_.push_back(i);
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
  corrupt_ |= !ParseBytes(ref.meta, &plane);
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
  int32_t node = -1;
  int64_t step = 0;
  bool linked_by_annotation = false;
  auto launch = corr.empty() ? launches_.end()
                             : launches_.find(absl::StrCat(ctx, "/", corr));
  if (launch != launches_.end()) {
    node = launch->second.first;
    step = launch->second.second;
    ++by_correlation_;
  } else {
    const int64_t before = unlinked_;
    node = NodeWithoutLaunch(stats, ev, md);
    linked_by_annotation = unlinked_ == before;
    step = StepOf(stats.Int(ev, md, "group_id"), start);
  }
  const int64_t start_ns = StartNs(line, ev);
  const int64_t duration_ns = DurationNs(ev);
  if (launch != launches_.end() || linked_by_annotation) {
    linked_work_.try_emplace({step, node}, gpu, start_ns);
  }
  builder_->AddExec(step, stream_all, node, start_ns, duration_ns);
  builder_->AddExec(step, stream_device, node, start_ns, duration_ns);
  AddWork(stats, line, ev, md, stream_device,
          launch != launches_.end() || linked_by_annotation ? node : -1, step);
}

void XSpaceImport::AddWork(const PlaneStats& stats, const XLine& line,
                           const XEvent& ev, const XEventMetadata* md,
                           const std::string& stream, int32_t node,
                           int64_t step) {
  Activity* activity = builder_->activity();
  DeviceWork w;
  w.start_ns = StartNs(line, ev);
  w.duration_ns = DurationNs(ev);
  w.step = step;
  const std::string_view name =
      md != nullptr ? std::string_view(md->name()) : "";
  w.name = activity->Intern(name);
  w.stream = activity->Intern(stream);
  if (node >= 0) w.op = activity->Intern(builder_->NodeName(node));
  if (stats.Find(ev, md, "memcpy_details") != nullptr ||
      name.substr(0, 6) == "Memcpy") {
    w.kind = WorkKind::kMemcpy;
  } else if (name.substr(0, 6) == "Memset") {
    w.kind = WorkKind::kMemset;
  } else {
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
  const std::string kind =
      md != nullptr && (absl::StartsWith(md->name(), "Memcpy") ||
                        absl::StartsWith(md->name(), "Memset"))
          ? md->name()
          : "kernel";
  ++unlinked_;
  return builder_->UnlinkedNode(kind, kind);
}

void XSpaceImport::AddNotes() {
  if (!steps_.empty()) {
    builder_->Note(
        file_, absl::StrCat("step groups on the Steps lines: ", steps_.size(),
                            " (step = group id); events of no step "
                            "group go to the step that started "
                            "last before them"));
  }
  steps_.NoteBeforeFirst(file_, "step", builder_);
  builder_->Count(file_,
                  "GPU events without a recorded launch linked to their op by "
                  "its annotation",
                  by_annotation_);
  builder_->Count(file_,
                  "GPU events linked to no op: on nodes _unlinked/<kind>",
                  unlinked_);
  builder_->Count(file_, "memory events outside any op, not mapped",
                  orphan_memory_);
  builder_->Count(file_,
                  "events without a usable time (aggregated, negative or out "
                  "of range), skipped",
                  bad_events_);
  builder_->Count(
      file_, "GPU events linked to the op that launched them by correlation id",
      by_correlation_);
  builder_->Count(file_,
                  "runs of ops on the GPU (ops with no host event in the "
                  "step: each event of the \"TensorFlow Ops\" line, else one "
                  "per step with GPU work)",
                  device_op_runs_);
}

}  // namespace

absl::Status ImportXSpace(absl::string_view contents, const std::string& file,
                          int64_t file_index, TraceBuilder* builder) {
  return XSpaceImport(file, file_index, builder).Run(contents);
}

}  // namespace trace_internal
}  // namespace tfprof
