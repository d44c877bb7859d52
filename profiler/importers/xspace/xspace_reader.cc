#include "profiler/importers/xspace/xspace_reader.h"

#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"
#include "profiler/base/saturate.h"
#include "profiler/importers/common/trace_builder.h"

namespace tfprof {
namespace trace_internal {

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

int64_t StartNs(const XLine& line, const XEvent& ev) {
  return SatAdd(line.timestamp_ns(),
                FloorDiv(SatAdd(ev.offset_ps(), 500), 1000));
}

int64_t DurationNs(const XEvent& ev) {
  return std::max<int64_t>(FloorDiv(SatAdd(ev.duration_ps(), 500), 1000), 0);
}

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

PlaneStats::PlaneStats(const XPlane& plane) : plane_(plane) {
  for (const auto& [id, md] : plane.stat_metadata()) {
    ids_.emplace(md.name(), id);
  }
}

std::optional<int64_t> PlaneStats::Id(absl::string_view name) const {
  auto it = ids_.find(name);
  if (it == ids_.end()) return std::nullopt;
  return it->second;
}

const XStat* PlaneStats::Find(const XEvent& ev, const XEventMetadata* md,
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

std::optional<int64_t> PlaneStats::IntOf(const XStat& s) {
  switch (s.value_case()) {
    case XStat::kInt64Value:
      return s.int64_value();
    case XStat::kUint64Value:
      if (s.uint64_value() >
          static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        return std::nullopt;
      }
      return static_cast<int64_t>(s.uint64_value());
    case XStat::kDoubleValue:
      return RoundToInt64(s.double_value());
    default:
      return std::nullopt;
  }
}

std::optional<int64_t> PlaneStats::Int(const XEvent& ev,
                                       const XEventMetadata* md,
                                       absl::string_view name) const {
  const XStat* s = Find(ev, md, name);
  if (s == nullptr) return std::nullopt;
  return IntOf(*s);
}

std::optional<std::string> PlaneStats::TextOf(const XStat& s) const {
  switch (s.value_case()) {
    case XStat::kStrValue:
      return s.str_value();
    case XStat::kRefValue: {
      auto it =
          plane_.stat_metadata().find(static_cast<int64_t>(s.ref_value()));
      if (it == plane_.stat_metadata().end()) return std::nullopt;
      return it->second.name();
    }
    case XStat::kInt64Value:
      return absl::StrCat(s.int64_value());
    case XStat::kUint64Value:
      return absl::StrCat(s.uint64_value());
    default:
      return std::nullopt;
  }
}

std::optional<std::string> PlaneStats::Text(const XEvent& ev,
                                            const XEventMetadata* md,
                                            absl::string_view name) const {
  const XStat* s = Find(ev, md, name);
  if (s == nullptr) return std::nullopt;
  return TextOf(*s);
}

const XEventMetadata* Metadata(const XPlane& plane, const XEvent& ev) {
  auto it = plane.event_metadata().find(ev.metadata_id());
  return it == plane.event_metadata().end() ? nullptr : &it->second;
}

bool ParsePlane(absl::string_view bytes, PlaneRef* plane, XPlane* scratch) {
  bool lines_ok = true;
  auto keep = [plane](absl::string_view other) {
    // Fields next to each other in the file make one range.
    if (!plane->meta.empty() &&
        plane->meta.back().data() + plane->meta.back().size() == other.data()) {
      plane->meta.back() = absl::string_view(
          plane->meta.back().data(), plane->meta.back().size() + other.size());
    } else {
      plane->meta.push_back(other);
    }
  };
  const bool split = SplitFieldTo(bytes, 3, keep, [&](absl::string_view line) {
    LineRef& l = plane->lines.emplace_back();
    l.bytes = line;
    std::string header;
    lines_ok = lines_ok &&
               SplitField(line, 4, &header, [](absl::string_view) {}) &&
               ParseBytes(header, &l.header);
  });
  if (!split || !lines_ok || !ParseMeta(*plane, scratch)) return false;
  plane->name = scratch->name();
  scratch->Clear();
  return true;
}

bool ParseMeta(const PlaneRef& plane, XPlane* out) {
  if (plane.meta.size() == 1) return ParseBytes(plane.meta[0], out);
  std::string bytes;  // one plane's, while it is decoded
  for (absl::string_view part : plane.meta) {
    bytes.append(part.data(), part.size());
  }
  return ParseBytes(bytes, out);
}

int64_t CountEvents(const LineRef& line) {
  int64_t n = 0;
  (void)SplitField(line.bytes, 4, nullptr, [&](absl::string_view) { ++n; });
  return n;
}

}  // namespace trace_internal
}  // namespace tfprof
