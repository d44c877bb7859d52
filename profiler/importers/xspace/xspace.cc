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
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
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

int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

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

enum class HostKind : uint8_t { kPython = 0, kOp = 1, kOther = 2 };

struct HostEvent {
  HostKind kind = HostKind::kOther;
  int64_t start = 0;
  int64_t duration = 0;
  const XEvent* event = nullptr;
  const XEventMetadata* md = nullptr;
  absl::string_view name;  // op: node name; python: event name
  absl::string_view type;  // op: op type
  bool memory = false;
  bool deallocation = false;
  // Ops, after the sweep.
  int64_t exclusive = 0;
  int32_t node = -1;
  int64_t step = 0;
  std::vector<int32_t> memory_events;
};

struct Steps {
  std::vector<std::pair<int64_t, int64_t>> starts;  // (start, group), sorted
  absl::flat_hash_map<int64_t, bool> groups;
  int64_t file_index = 0;
  int64_t before_first = 0;

  int64_t Of(std::optional<int64_t> group, int64_t t) {
    if (starts.empty()) return file_index;
    if (group.has_value() && groups.contains(*group)) return *group;
    auto it = std::upper_bound(
        starts.begin(), starts.end(),
        std::make_pair(t, std::numeric_limits<int64_t>::max()));
    if (it == starts.begin()) {
      ++before_first;
      return starts.front().second;
    }
    return std::prev(it)->second;
  }
};

}  // namespace

absl::Status ImportXSpace(absl::string_view contents, const std::string& file,
                          int64_t file_index, TraceBuilder* builder) {
  XSpace space;
  bool known_planes = false;
  // ParseFromArray is ParseFromString without the copy (its size is an int).
  const bool parsed =
      contents.size() <= static_cast<size_t>(INT_MAX)
          ? space.ParseFromArray(contents.data(),
                                 static_cast<int>(contents.size()))
          : space.ParseFromString(std::string(contents));
  if (parsed) {
    for (const XPlane& plane : space.planes()) {
      known_planes |= absl::StartsWith(plane.name(), "/host:") ||
                      absl::StartsWith(plane.name(), "/device:");
    }
  }
  if (!known_planes) {
    return absl::InvalidArgumentError(
        absl::StrCat(file, ": not a known trace format", kExpectedFormats));
  }
  for (const std::string& e : space.errors()) {
    builder->Note(file,
                  absl::StrCat("profiler error recorded in the trace: ", e));
  }

  std::vector<const XPlane*> hosts, gpus;
  absl::flat_hash_map<int64_t, const XLine*> python_lines;
  const XPlane* python_plane = nullptr;
  for (const XPlane& plane : space.planes()) {
    const std::string lower = absl::AsciiStrToLower(plane.name());
    if (lower == "/host:cpu") {
      hosts.push_back(&plane);
    } else if (lower == "/host:python-tracer") {
      python_plane = &plane;
      for (const XLine& line : plane.lines()) {
        python_lines.emplace(line.id(), &line);
      }
    } else if (absl::StartsWith(lower, "/device:gpu:")) {
      gpus.push_back(&plane);
    } else {
      int64_t events = 0;
      for (const XLine& line : plane.lines()) events += line.events_size();
      if (events > 0) {
        builder->Count(
            file,
            absl::StrCat("events on plane \"", plane.name(), "\" not mapped"),
            events);
      }
    }
  }

  // --- Steps: the groups marked on the device planes' "Steps" lines.
  Steps steps;
  steps.file_index = file_index;
  {
    absl::flat_hash_map<int64_t, int64_t> first_start;
    for (const XPlane* plane : gpus) {
      PlaneStats stats(*plane);
      for (const XLine& line : plane->lines()) {
        if (line.name() != "Steps") continue;
        for (const XEvent& ev : line.events()) {
          std::optional<int64_t> group =
              stats.Int(ev, Metadata(*plane, ev), "group_id");
          std::optional<int64_t> start = StartMicros(line, ev);
          // Negative steps mean "average" to tfprof: not a step.
          if (!group.has_value() || *group < 0 || !start.has_value()) continue;
          auto [it, inserted] = first_start.emplace(*group, *start);
          if (!inserted) it->second = std::min(it->second, *start);
        }
      }
    }
    for (const auto& [group, start] : first_start) {
      steps.starts.emplace_back(start, group);
      steps.groups.emplace(group, true);
    }
    std::sort(steps.starts.begin(), steps.starts.end());
  }

  // --- Host ops: nested per line; memory and launches go to the innermost
  // op; Python frames enclosing an op form its call stack.
  absl::flat_hash_map<std::string, std::pair<int32_t, int64_t>> launches;
  int64_t orphan_memory = 0, bad_events = 0;
  for (const XPlane* plane : hosts) {
    PlaneStats stats(*plane);
    std::unique_ptr<PlaneStats> py_stats;
    if (python_plane != nullptr) {
      py_stats = std::make_unique<PlaneStats>(*python_plane);
    }
    for (const XLine& line : plane->lines()) {
      std::vector<HostEvent> events;
      events.reserve(line.events_size());
      auto add = [&](const XLine& l, const XEvent& ev, const XPlane& p,
                     bool python) {
        std::optional<int64_t> start = StartMicros(l, ev);
        std::optional<int64_t> duration = DurationMicros(ev);
        if (!start.has_value() || !duration.has_value() ||
            *start > INT64_MAX / 4 || *start < INT64_MIN / 4 ||
            *duration > INT64_MAX / 4) {
          ++bad_events;
          return;
        }
        HostEvent h;
        h.start = *start;
        h.duration = *duration;
        h.event = &ev;
        h.md = Metadata(p, ev);
        const absl::string_view name =
            h.md != nullptr ? absl::string_view(h.md->name()) : "";
        if (python) {
          if (!absl::StartsWith(name, "$")) return;
          h.kind = HostKind::kPython;
          h.name = name;
        } else if (SplitTfOp(name, &h.name, &h.type)) {
          h.kind = HostKind::kOp;
        } else if (name == "MemoryAllocation" || name == "MemoryDeallocation") {
          h.kind = HostKind::kOther;
          h.memory = true;
          h.deallocation = name == "MemoryDeallocation";
        } else if (stats.Find(ev, h.md, "correlation_id") != nullptr) {
          h.kind = HostKind::kOther;
        } else {
          return;  // other host activity: not an op
        }
        events.push_back(std::move(h));
      };
      for (const XEvent& ev : line.events()) add(line, ev, *plane, false);
      auto py = python_lines.find(line.id());
      if (py != python_lines.end()) {
        for (const XEvent& ev : py->second->events()) {
          add(*py->second, ev, *python_plane, true);
        }
      }
      const int32_t n = static_cast<int32_t>(events.size());
      std::vector<int32_t> order(n);
      for (int32_t i = 0; i < n; ++i) order[i] = i;
      std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
        const HostEvent& x = events[a];
        const HostEvent& y = events[b];
        if (x.start != y.start) return x.start < y.start;
        if (x.duration != y.duration) return x.duration > y.duration;
        if (x.kind != y.kind) return x.kind < y.kind;
        return a < b;
      });
      std::vector<int32_t> op_stack, py_stack;
      auto end_of = [&](int32_t i) {
        return SatAdd(events[i].start, events[i].duration);
      };
      for (int32_t i : order) {
        HostEvent& h = events[i];
        while (!op_stack.empty() && end_of(op_stack.back()) <= h.start) {
          op_stack.pop_back();
        }
        while (!py_stack.empty() && end_of(py_stack.back()) <= h.start) {
          py_stack.pop_back();
        }
        if (h.kind == HostKind::kPython) {
          py_stack.push_back(i);
          continue;
        }
        if (h.kind == HostKind::kOther) {
          const int32_t owner = op_stack.empty() ? -1 : op_stack.back();
          if (h.memory) {
            if (owner < 0) {
              ++orphan_memory;
            } else {
              events[owner].memory_events.push_back(i);
            }
          } else {
            const std::string ctx =
                stats.Text(*h.event, h.md, "context_id").value_or("");
            const std::string corr =
                stats.Text(*h.event, h.md, "correlation_id").value_or("");
            if (owner >= 0) {
              launches[absl::StrCat(ctx, "/", corr)] = {events[owner].node,
                                                        events[owner].step};
            }
          }
          continue;
        }
        // An op.
        h.exclusive = h.duration;
        if (!op_stack.empty()) {
          HostEvent& parent = events[op_stack.back()];
          parent.exclusive -=
              std::min(end_of(i), end_of(op_stack.back())) - h.start;
        }
        h.node = builder->TypedNode(h.name, h.type);
        h.step = steps.Of(stats.Int(*h.event, h.md, "group_id"), h.start);
        if (!py_stack.empty() && !builder->HasCode(h.node)) {
          std::vector<Frame> frames;
          const size_t first =
              py_stack.size() > kMaxFrames ? py_stack.size() - kMaxFrames : 0;
          for (size_t p = first; p < py_stack.size(); ++p) {
            frames.push_back(ParsePythonEvent(events[py_stack[p]].name));
          }
          builder->SetCode(h.node, frames);
        }
        op_stack.push_back(i);
      }

      for (HostEvent& h : events) {
        if (h.kind != HostKind::kOp) continue;
        const TraceBuilder::ExecRef exec =
            builder->AddExec(h.step, kHostCpuDevice, h.node, h.start,
                             std::max<int64_t>(h.exclusive, 0));
        tfcore::NodeExecStats* stat = nullptr;  // made for the first record
        std::vector<std::pair<std::string, int64_t>> running;
        for (int32_t m : h.memory_events) {
          const HostEvent& mem = events[m];
          std::optional<int64_t> bytes =
              stats.Int(*mem.event, mem.md, "allocation_bytes");
          if (!bytes.has_value()) {
            bytes = stats.Int(*mem.event, mem.md, "requested_bytes");
          }
          if (!bytes.has_value() || *bytes < 0) {
            builder->Count(file,
                           "memory events without allocation_bytes, "
                           "skipped");
            continue;
          }
          const int64_t delta = mem.deallocation ? -*bytes : *bytes;
          const std::string allocator =
              stats.Text(*mem.event, mem.md, "allocator_name")
                  .value_or("unknown_allocator");
          size_t slot = 0;
          for (; slot < running.size(); ++slot) {
            if (running[slot].first == allocator) break;
          }
          tfcore::AllocatorMemoryUsed* used;
          if (slot == running.size()) {
            running.emplace_back(allocator, 0);
            if (stat == nullptr) stat = builder->Details(exec);
            used = stat->add_memory();
            used->set_allocator_name(allocator);
          } else {
            used = stat->mutable_memory(static_cast<int>(slot));
          }
          int64_t& live = running[slot].second;
          live = SatAdd(live, delta);
          if (delta > 0)
            used->set_total_bytes(SatAdd(used->total_bytes(), delta));
          used->set_peak_bytes(std::max(used->peak_bytes(), live));
          used->set_live_bytes(std::max<int64_t>(live, 0));
          tfcore::AllocationRecord* rec = used->add_allocation_records();
          rec->set_alloc_micros(mem.start);
          rec->set_alloc_bytes(delta);
          std::optional<int64_t> in_use =
              stats.Int(*mem.event, mem.md, "bytes_allocated");
          if (in_use.has_value()) used->set_allocator_bytes_in_use(*in_use);
        }
      }
    }
  }

  // --- GPU activity on the stream lines.
  int64_t by_correlation = 0, by_annotation = 0, unlinked = 0;
  for (const XPlane* plane : gpus) {
    PlaneStats stats(*plane);
    const int64_t gpu = GpuIndex(plane->name());
    for (const XLine& line : plane->lines()) {
      if (!absl::StartsWith(line.name(), "Stream #")) {
        if (line.name() != "Steps" && line.events_size() > 0) {
          builder->Count(file,
                         absl::StrCat("events on derived line \"", line.name(),
                                      "\" not mapped (summaries of the stream "
                                      "lines)"),
                         line.events_size());
        }
        continue;
      }
      const std::string stream = StreamId(line);
      const std::string stream_all = GpuStreamAllDevice(gpu);
      const std::string stream_device = GpuStreamDevice(gpu, stream);
      for (const XEvent& ev : line.events()) {
        std::optional<int64_t> start = StartMicros(line, ev);
        std::optional<int64_t> duration = DurationMicros(ev);
        if (!start.has_value() || !duration.has_value() ||
            *start > INT64_MAX / 4 || *start < INT64_MIN / 4 ||
            *duration > INT64_MAX / 4) {
          ++bad_events;
          continue;
        }
        const XEventMetadata* md = Metadata(*plane, ev);
        const std::string ctx = stats.Text(ev, md, "context_id").value_or("");
        const std::string corr =
            stats.Text(ev, md, "correlation_id").value_or("");
        int32_t node = -1;
        int64_t step = 0;
        auto launch = corr.empty()
                          ? launches.end()
                          : launches.find(absl::StrCat(ctx, "/", corr));
        if (launch != launches.end()) {
          node = launch->second.first;
          step = launch->second.second;
          ++by_correlation;
        } else {
          std::optional<std::string> annotation =
              stats.Text(ev, md, "annotation");
          const std::string op =
              annotation.has_value() ? InnermostAnnotation(*annotation) : "";
          absl::string_view name, type;
          if (!op.empty()) {
            if (SplitTfOp(op, &name, &type)) {
              node = builder->TypedNode(name, type);
            } else {
              node = builder->TypedNode(op, op);
            }
            ++by_annotation;
          } else {
            const std::string kind =
                md != nullptr && (absl::StartsWith(md->name(), "Memcpy") ||
                                  absl::StartsWith(md->name(), "Memset"))
                    ? md->name()
                    : "kernel";
            node = builder->Node(absl::StrCat("_unlinked/", kind), kind);
            ++unlinked;
          }
          step = steps.Of(stats.Int(ev, md, "group_id"), *start);
        }
        builder->AddExec(step, stream_all, node, *start, *duration);
        builder->AddExec(step, stream_device, node, *start, *duration);
      }
    }
  }

  if (!steps.starts.empty()) {
    builder->Note(file, absl::StrCat("step groups on the Steps lines: ",
                                     steps.starts.size(),
                                     " (step = group id); events of no step "
                                     "group go to the step that started last "
                                     "before them"));
  }
  if (steps.before_first > 0) {
    builder->Note(file, absl::StrCat(steps.before_first,
                                     " events before the first step counted "
                                     "in step ",
                                     steps.starts.front().second));
  }
  builder->Count(file,
                 "GPU events without a recorded launch linked to their op by "
                 "its annotation",
                 by_annotation);
  builder->Count(file, "GPU events linked to no op: on nodes _unlinked/<kind>",
                 unlinked);
  builder->Count(file, "memory events outside any op, not mapped",
                 orphan_memory);
  builder->Count(file,
                 "events without a usable time (aggregated, negative or out of "
                 "range), skipped",
                 bad_events);
  builder->Count(
      file, "GPU events linked to the op that launched them by correlation id",
      by_correlation);
  return absl::OkStatus();
}

}  // namespace trace_internal
}  // namespace tfprof
