#include "profiler/importers/xspace/xspace_names.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace tfprof {
namespace trace_internal {

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

std::string DatasetNodeName(absl::string_view event_name) {
  return absl::StrReplaceAll(event_name, {{"::", "/"}});
}

WorkKind StreamWorkKind(absl::string_view name, bool memcpy_details) {
  if (memcpy_details || absl::StartsWith(name, "Memcpy")) {
    return WorkKind::kMemcpy;
  }
  return absl::StartsWith(name, "Memset") ? WorkKind::kMemset
                                          : WorkKind::kKernel;
}

}  // namespace trace_internal
}  // namespace tfprof
