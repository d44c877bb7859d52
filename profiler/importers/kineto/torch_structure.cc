#include "profiler/importers/kineto/torch_structure.h"

#include <algorithm>
#include <string>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace tfprof {
namespace trace_internal {
namespace {

// Sorted, with overlapping or touching ranges joined; empty ranges dropped.
std::vector<NanoRange> Union(std::vector<NanoRange> ranges) {
  std::sort(
      ranges.begin(), ranges.end(),
      [](const NanoRange& a, const NanoRange& b) { return a.start < b.start; });
  std::vector<NanoRange> out;
  for (const NanoRange& r : ranges) {
    if (r.end <= r.start) continue;
    if (!out.empty() && r.start <= out.back().end) {
      out.back().end = std::max(out.back().end, r.end);
    } else {
      out.push_back(r);
    }
  }
  return out;
}

// `window` less the (sorted, disjoint) `holes`.
std::vector<NanoRange> Without(NanoRange window,
                               const std::vector<NanoRange>& holes) {
  std::vector<NanoRange> out;
  int64_t at = window.start;
  for (const NanoRange& h : holes) {
    if (h.end <= at) continue;
    if (h.start >= window.end) break;
    if (h.start > at) out.push_back({at, h.start});
    at = std::max(at, h.end);
  }
  if (at < window.end) out.push_back({at, window.end});
  return out;
}

int64_t Length(const std::vector<NanoRange>& ranges) {
  int64_t sum = 0;
  for (const NanoRange& r : ranges) sum += r.end - r.start;
  return sum;
}

// The length of the intersection of two sorted, disjoint lists.
int64_t Overlap(const std::vector<NanoRange>& a,
                const std::vector<NanoRange>& b) {
  int64_t sum = 0;
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const int64_t lo = std::max(a[i].start, b[j].start);
    const int64_t hi = std::min(a[i].end, b[j].end);
    if (hi > lo) sum += hi - lo;
    (a[i].end < b[j].end) ? ++i : ++j;
  }
  return sum;
}

bool IsProfilerFile(absl::string_view file) {
  return absl::StrContains(file, "torch/profiler/") ||
         absl::StrContains(file, "torch/autograd/profiler");
}

bool IsTorchFile(absl::string_view file) {
  return absl::StrContains(file, "torch/");
}

}  // namespace

bool IsAutogradEngineOp(absl::string_view name) {
  if (absl::StartsWith(name, "autograd::engine::evaluate_function")) {
    return true;
  }
  if (absl::EndsWith(name, "AccumulateGrad")) return true;
  // "ReluBackward1", "CudnnConvolutionBackward": no namespace, no spaces.
  if (absl::StrContains(name, ":") || absl::StrContains(name, " ")) {
    return false;
  }
  name = absl::StripTrailingAsciiWhitespace(name);
  while (!name.empty() && absl::ascii_isdigit(name.back())) {
    name.remove_suffix(1);
  }
  return name.size() > 8 && absl::EndsWith(name, "Backward");
}

BackwardWait MeasureBackwardWait(NanoRange span,
                                 std::vector<NanoRange> children,
                                 std::vector<NanoRange> adopted) {
  BackwardWait w;
  const std::vector<NanoRange> work = Union(std::move(adopted));
  if (work.empty()) return w;
  const NanoRange window{std::max(span.start, work.front().start),
                         std::min(span.end, work.back().end)};
  w.start_ns = window.start;
  if (window.end <= window.start) return w;
  const std::vector<NanoRange> own =
      Without(window, Union(std::move(children)));
  w.wait_ns = Length(own);
  w.covered_ns = Overlap(own, work);
  return w;
}

Frame ParseFrame(absl::string_view text) {
  Frame f;
  const size_t close = text.find("): ");
  const size_t open =
      close == absl::string_view::npos ? close : text.rfind('(', close);
  int32_t line = 0;
  if (open != absl::string_view::npos &&
      absl::SimpleAtoi(text.substr(open + 1, close - open - 1), &line)) {
    f.file = std::string(text.substr(0, open));
    f.lineno = line;
    f.function = std::string(text.substr(close + 3));
  } else {
    f.function = std::string(text);
  }
  return f;
}

std::vector<Frame> ParseCallStack(absl::string_view text) {
  std::vector<Frame> frames;
  for (absl::string_view part : absl::StrSplit(text, ';', absl::SkipEmpty())) {
    frames.push_back(ParseFrame(part));
  }
  std::reverse(frames.begin(), frames.end());
  if (frames.size() > kMaxFrames) {
    frames.erase(frames.begin(), frames.end() - kMaxFrames);
  }
  return frames;
}

void DropProfilerFrames(std::vector<Frame>* frames) {
  // The outermost profiler frame whose inner frames are all torch's own.
  size_t cut = frames->size();
  for (size_t i = frames->size(); i-- > 0;) {
    const std::string& file = (*frames)[i].file;
    if (IsProfilerFile(file)) {
      cut = i;
    } else if (!IsTorchFile(file)) {
      break;
    }
  }
  if (cut == 0) return;  // only profiler frames: keep them, nothing else
  frames->resize(cut);
}

}  // namespace trace_internal
}  // namespace tfprof
