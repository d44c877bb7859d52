// Reading an XSpace in place: the planes and lines of a serialized XSpace
// indexed without decoding their events, events decoded one at a time,
// stats looked up by name, and event times in microseconds and
// nanoseconds. Shared by the XSpace importer's passes. Not a public API.
#ifndef TFPROF_PROFILER_IMPORTERS_XSPACE_XSPACE_READER_H_
#define TFPROF_PROFILER_IMPORTERS_XSPACE_XSPACE_READER_H_

#include <climits>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "profiler/base/wire.h"
#include "proto/xplane.pb.h"

namespace tfprof {
namespace trace_internal {

using ::tensorflow::profiler::XEvent;
using ::tensorflow::profiler::XEventMetadata;
using ::tensorflow::profiler::XLine;
using ::tensorflow::profiler::XPlane;
using ::tensorflow::profiler::XSpace;
using ::tensorflow::profiler::XStat;

// Start of an event in microseconds (rounded half up), or nullopt for
// aggregated events (num_occurrences instead of a time).
std::optional<int64_t> StartMicros(const XLine& line, const XEvent& ev);
std::optional<int64_t> DurationMicros(const XEvent& ev);
// Start and duration in nanoseconds (rounded half up), for the activity
// record.
int64_t StartNs(const XLine& line, const XEvent& ev);
int64_t DurationNs(const XEvent& ev);
// A usable time: start and duration present and far from the int64 limits.
bool TimeOf(const XLine& line, const XEvent& ev, int64_t* start,
            int64_t* duration);

// Stat access by name within one plane: an event's own stats first, then
// those of its metadata.
class PlaneStats {
 public:
  explicit PlaneStats(const XPlane& plane);

  // The id of the stat metadata with this name, if any.
  std::optional<int64_t> Id(absl::string_view name) const;
  const XStat* Find(const XEvent& ev, const XEventMetadata* md,
                    absl::string_view name) const;
  std::optional<int64_t> Int(const XEvent& ev, const XEventMetadata* md,
                             absl::string_view name) const;
  std::optional<std::string> Text(const XEvent& ev, const XEventMetadata* md,
                                  absl::string_view name) const;
  // A stat's value as text (strings, referenced names, integers).
  std::optional<std::string> TextOf(const XStat& s) const;
  // A stat's value as an integer (int, uint in range, rounded double).
  static std::optional<int64_t> IntOf(const XStat& s);

 private:
  const XPlane& plane_;
  absl::flat_hash_map<std::string, int64_t> ids_;
};

const XEventMetadata* Metadata(const XPlane& plane, const XEvent& ev);

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
  // Every field but the lines, serialized: where they lie in the file (the
  // fields before the lines and those after them, usually two ranges).
  std::vector<absl::string_view> meta;
  std::vector<LineRef> lines;
};

// Splits the serialized message `bytes`: each occurrence of the
// length-delimited field `field` goes to on_field(value); the raw bytes of
// every other field to on_rest(bytes). False if the bytes are malformed.
template <typename F, typename R>
bool SplitFieldTo(absl::string_view bytes, uint32_t field, R on_rest,
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
    on_rest(absl::string_view(reinterpret_cast<const char*>(start),
                              static_cast<size_t>(r.pos() - start)));
  }
  return r.ok();
}

// The same, the other fields' bytes appended to *rest (unless rest is null).
template <typename F>
bool SplitField(absl::string_view bytes, uint32_t field, std::string* rest,
                F on_field) {
  return SplitFieldTo(
      bytes, field,
      [rest](absl::string_view other) {
        if (rest != nullptr) rest->append(other.data(), other.size());
      },
      on_field);
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
bool ParsePlane(absl::string_view bytes, PlaneRef* plane, XPlane* scratch);
// Decodes a plane's fields but its lines into *out (cleared first).
bool ParseMeta(const PlaneRef& plane, XPlane* out);

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

int64_t CountEvents(const LineRef& line);

}  // namespace trace_internal
}  // namespace tfprof

#endif  // TFPROF_PROFILER_IMPORTERS_XSPACE_XSPACE_READER_H_
