#include "profiler/render/render_memory.h"

#include <algorithm>
#include <climits>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "profiler/base/json_writer.h"
#include "profiler/base/saturate.h"
#include "profiler/base/units.h"

namespace tfprof {
namespace {

std::string At(int64_t t, int64_t origin) {
  const int64_t d = SatAdd(t, -origin);
  return d < 0 ? "-" + FormatNanos(-d) : "+" + FormatNanos(d);
}

}  // namespace

int64_t MemoryOrigin(const Model& model) {
  const Activity& a = model.activity();
  // The first step marker, as the timeline's and xprof's times count from;
  // without markers the first step's first event.
  int64_t origin = INT64_MAX;
  for (const StepSpan& s : a.steps()) origin = std::min(origin, s.start_ns);
  if (origin == INT64_MAX) {
    for (const auto& [step, span] : model.run_spans()) {
      origin = std::min(origin, SatMul(span.start_micros, 1000));
    }
  }
  if (origin == INT64_MAX) {
    for (const MemorySample& m : a.memory()) {
      origin = std::min(origin, m.time_ns);
    }
  }
  return origin == INT64_MAX ? 0 : origin;
}

std::string RenderMemoryText(const Model& model,
                             const std::vector<AllocatorPeak>& peaks,
                             int64_t top) {
  if (peaks.empty()) {
    return "no allocator events in this profile (memory in use over time "
           "comes from a PyTorch trace's [memory] events or an XSpace's "
           "allocations)\n";
  }
  const int64_t origin = MemoryOrigin(model);
  std::string out;
  for (const AllocatorPeak& p : peaks) {
    absl::StrAppendFormat(
        &out, "%s: peak %s in use at %s%s, %d events\n", p.allocator,
        FormatMemory(p.peak_bytes), At(p.peak_time_ns, origin),
        p.peak_step >= 0 ? absl::StrCat(" (step ", p.peak_step, ")") : "",
        p.samples);
    int64_t traced = 0;
    for (const LiveAllocation& l : p.live) traced = SatAdd(traced, l.bytes);
    absl::StrAppendFormat(&out,
                          "  live then: %d blocks the trace shows, %s; %s "
                          "more in use (allocated before the trace and not "
                          "freed in it, or without an address)\n",
                          p.live.size(), FormatMemory(traced),
                          FormatMemory(p.untraced_bytes));
    const size_t n = std::min<size_t>(p.live.size(), std::max<int64_t>(top, 0));
    for (size_t i = 0; i < n; ++i) {
      const LiveAllocation& l = p.live[i];
      const std::string op = l.op.empty() ? "(outside any op)" : l.op;
      if (l.before_trace) {
        absl::StrAppendFormat(&out,
                              "  %12s  allocated before the trace; freed at "
                              "%s by %s\n",
                              FormatMemory(l.bytes), At(l.time_ns, origin), op);
      } else {
        absl::StrAppendFormat(&out, "  %12s  %s (allocated at %s)\n",
                              FormatMemory(l.bytes), op, At(l.time_ns, origin));
      }
    }
    if (n < p.live.size()) {
      absl::StrAppendFormat(&out, "  ... %d more (-top N)\n",
                            p.live.size() - n);
    }
  }
  return out;
}

std::string RenderMemoryCsv(const Model& model) {
  const Activity& a = model.activity();
  const int64_t origin = MemoryOrigin(model);
  std::string out = "allocator,time_micros,bytes_in_use,bytes,op,address\n";
  for (const MemorySample& m : a.memory()) {
    absl::StrAppend(&out, CsvField(a.String(m.allocator)), ",",
                    NanosAsMicros(SatAdd(m.time_ns, -origin)), ",",
                    m.bytes_in_use, ",", m.bytes, ",", CsvField(a.String(m.op)),
                    ",", m.address, "\n");
  }
  return out;
}

namespace {

// The points of one allocator's series: each event's bytes in use, or the
// largest of each bucket of consecutive events when there are too many.
std::string MemorySeries(const Activity& a, uint32_t allocator, int64_t origin,
                         size_t max_points) {
  std::vector<const MemorySample*> samples;
  for (const MemorySample& m : a.memory()) {
    if (m.allocator == allocator) samples.push_back(&m);
  }
  const size_t per = std::max<size_t>(
      1, (samples.size() + std::max<size_t>(max_points, 1) - 1) /
             std::max<size_t>(max_points, 1));
  std::string out = "[";
  for (size_t i = 0; i < samples.size(); i += per) {
    const MemorySample* best = samples[i];
    for (size_t k = i; k < std::min(samples.size(), i + per); ++k) {
      if (samples[k]->bytes_in_use > best->bytes_in_use) best = samples[k];
    }
    absl::StrAppend(&out, i > 0 ? ", [" : "[",
                    NanosAsMicros(SatAdd(best->time_ns, -origin)), ", ",
                    best->bytes_in_use, "]");
  }
  return out + "]";
}

}  // namespace

std::string RenderMemoryJson(const Model& model,
                             const std::vector<AllocatorPeak>& peaks,
                             int64_t top, size_t max_points) {
  const Activity& a = model.activity();
  const int64_t origin = MemoryOrigin(model);
  std::map<std::string, uint32_t> ids;
  for (const MemorySample& m : a.memory()) {
    ids.emplace(std::string(a.String(m.allocator)), m.allocator);
  }
  std::string out = "{\"allocators\": [";
  for (size_t i = 0; i < peaks.size(); ++i) {
    const AllocatorPeak& p = peaks[i];
    int64_t traced = 0;
    for (const LiveAllocation& l : p.live) traced = SatAdd(traced, l.bytes);
    absl::StrAppend(
        &out, i > 0 ? ", " : "", "{\"name\": ", JsonQuote(p.allocator),
        ", \"peak_bytes\": ", p.peak_bytes,
        ", \"peak_micros\": ", NanosAsMicros(SatAdd(p.peak_time_ns, -origin)),
        ", \"peak_step\": ", p.peak_step, ", \"events\": ", p.samples,
        ", \"untraced_bytes\": ", p.untraced_bytes,
        ", \"live_count\": ", p.live.size(), ", \"live_bytes\": ", traced,
        ", \"live\": [");
    const size_t n = std::min<size_t>(p.live.size(), std::max<int64_t>(top, 0));
    for (size_t k = 0; k < n; ++k) {
      const LiveAllocation& l = p.live[k];
      absl::StrAppend(
          &out, k > 0 ? ", " : "", "{\"bytes\": ", l.bytes,
          ", \"op\": ", JsonQuote(l.op),
          ", \"micros\": ", NanosAsMicros(SatAdd(l.time_ns, -origin)),
          ", \"before_trace\": ", l.before_trace ? "true" : "false", "}");
    }
    const auto id = ids.find(p.allocator);
    absl::StrAppend(&out, "], \"series\": ",
                    id == ids.end()
                        ? std::string("[]")
                        : MemorySeries(a, id->second, origin, max_points),
                    "}");
  }
  return out + "]}\n";
}

std::string RenderMemoryTimeline(const Model& model) {
  const Activity& a = model.activity();
  const int64_t origin = MemoryOrigin(model);
  std::string out =
      "{\"displayTimeUnit\": \"ns\", \"traceEvents\": [\n"
      "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 0, \"args\": "
      "{\"name\": \"Memory in use\"}}";
  for (const MemorySample& m : a.memory()) {
    absl::StrAppend(&out, ",\n{\"name\": ", JsonQuote(a.String(m.allocator)),
                    ", \"ph\": \"C\", \"pid\": 0, \"ts\": ",
                    NanosAsMicros(SatAdd(m.time_ns, -origin)),
                    ", \"args\": {\"bytes_in_use\": ", m.bytes_in_use, "}}");
  }
  return out + "\n]}\n";
}

}  // namespace tfprof
