#include "profiler/render/summary.h"

#include <algorithm>
#include <climits>
#include <deque>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "profiler/base/device.h"
#include "profiler/base/json_writer.h"
#include "profiler/base/saturate.h"
#include "profiler/base/units.h"
#include "profiler/views/memory.h"

namespace tfprof {
namespace {

std::string BusyMicros(int64_t ns) { return ns < 0 ? "-1" : NanosAsMicros(ns); }

std::string AllocatorJson(const std::string& name, int64_t peak) {
  return absl::StrCat("{\"name\": ", JsonQuote(name),
                      ", \"peak_bytes\": ", peak, "}");
}

// "devices: N (S GPU streams, T host threads)", then a row per device with
// its nodes, busy time and peak memory, and a row per lane under it.
void RenderDevices(const ProfileSummary& s, std::string* out) {
  int64_t streams = 0, threads = 0;
  for (const DeviceSummary& d : s.devices) {
    for (const LaneSummary& l : d.lanes) {
      ++(l.thread ? threads : streams);
    }
  }
  std::vector<std::string> lanes;
  if (streams > 0) {
    lanes.push_back(
        absl::StrCat(streams, streams == 1 ? " GPU lane" : " GPU lanes"));
  }
  if (threads > 0) {
    lanes.push_back(
        absl::StrCat(threads, threads == 1 ? " host thread" : " host threads"));
  }
  absl::StrAppendFormat(
      out, "devices:     %d%s\n", s.devices.size(),
      lanes.empty() ? "" : absl::StrCat(" (", absl::StrJoin(lanes, ", "), ")"));
  for (const DeviceSummary& d : s.devices) {
    std::vector<std::string> facts;
    // A trace's GPU ops run on the host thread that launches them: a GPU
    // with work and no node says where its work came from.
    facts.push_back(
        d.nodes == 0 && d.busy_ns >= 0
            ? "0 nodes (its work launched by host ops)"
            : absl::StrCat(d.nodes, d.nodes == 1 ? " node" : " nodes"));
    if (d.busy_ns >= 0) {
      facts.push_back(absl::StrCat(FormatNanos(d.busy_ns), " busy/step"));
    } else if (d.nodes == 0) {
      facts.push_back("no events");
    }
    for (const auto& [name, peak] : d.allocators) {
      facts.push_back(
          absl::StrCat("peak ", FormatMemory(peak), " (", name, ")"));
    }
    absl::StrAppendFormat(out, "  %-60s %s\n", d.name,
                          absl::StrJoin(facts, ", "));
    for (const LaneSummary& l : d.lanes) {
      absl::string_view name = l.name;
      absl::string_view rest = name;
      if (absl::ConsumePrefix(&rest, d.name) &&
          (absl::ConsumePrefix(&rest, "/") ||
           absl::ConsumePrefix(&rest, " "))) {
        name = rest;
      }
      absl::StrAppendFormat(out, "    %-58s %s busy/step\n", name,
                            FormatNanos(l.busy_ns));
    }
  }
}

}  // namespace

std::string RenderSummary(const ProfileSummary& s,
                          const LoadedProfile* loaded) {
  std::string out;
  absl::StrAppendFormat(&out, "nodes:       %d (%d with run statistics)\n",
                        s.nodes, s.nodes_with_execs);
  absl::StrAppendFormat(&out, "steps:       %d\n", s.steps);
  RenderDevices(s, &out);
  std::vector<std::pair<std::string, int64_t>> ops(s.op_types.begin(),
                                                   s.op_types.end());
  std::stable_sort(ops.begin(), ops.end(), [](const auto& a, const auto& b) {
    return a.second > b.second;
  });
  absl::StrAppendFormat(&out, "op types:    %d", ops.size());
  const size_t shown = std::min<size_t>(ops.size(), 8);
  for (size_t i = 0; i < shown; ++i) {
    absl::StrAppend(&out, i == 0 ? " (" : ", ", ops[i].first, " ",
                    ops[i].second);
  }
  if (shown > 0) absl::StrAppend(&out, shown < ops.size() ? ", ...)" : ")");
  out += "\n";
  if (s.steps > 0) {
    absl::StrAppendFormat(
        &out, "time/step:   mean %s, median %s, min %s, max %s (%s)\n",
        FormatNanos(s.wall.mean_ns), FormatNanos(s.wall.median_ns),
        FormatNanos(s.wall.min_ns), FormatNanos(s.wall.max_ns), s.wall_source);
  }
  const char* per_rank = s.ranks > 1 ? ", mean per rank" : "";
  absl::StrAppendFormat(&out,
                        "node time:   %s per step, summed over nodes%s "
                        "(accelerator %s, cpu %s)\n",
                        FormatTime(s.exec_micros), per_rank,
                        FormatTime(s.accelerator_micros),
                        FormatTime(s.cpu_micros));
  absl::StrAppendFormat(&out,
                        "node memory: %s requested, %s peak per step, "
                        "summed over nodes%s\n",
                        FormatMemory(s.requested_bytes),
                        FormatMemory(s.peak_bytes), per_rank);
  // (Allocators of a device are on its row.)
  for (const auto& [allocator, peak] : s.allocator_peak_bytes) {
    bool shown = false;
    for (const DeviceSummary& d : s.devices) {
      for (const auto& [name, bytes] : d.allocators) shown |= name == allocator;
    }
    if (!shown) {
      absl::StrAppendFormat(&out, "peak memory: %s in use on %s\n",
                            FormatMemory(peak), allocator);
    }
  }
  absl::StrAppendFormat(&out, "parameters:  %s\n", FormatNumber(s.parameters));
  // tfprof's node figure (a node that never ran counts its static float
  // ops), and beside it the steps table's mean (what ran in each step).
  absl::StrAppendFormat(&out, "float ops:   %s per step, summed over nodes\n",
                        FormatNumber(s.float_ops));
  if (s.flops.flops_per_step > 0) {
    absl::StrAppendFormat(
        &out,
        "flops/step:  %s (%s; the steps table's mean), %s achieved over the "
        "step wall time%s\n",
        FormatFlopCount(static_cast<double>(s.flops.flops_per_step)),
        s.flops.flops_set, FormatFlopRate(s.flops.flop_rate),
        s.ranks > 1 ? ", mean per rank" : "");
    std::string mfu = MfuText(s.flops);
    absl::string_view rest = mfu;
    if (!absl::ConsumePrefix(&rest, "MFU: "))
      absl::ConsumePrefix(&rest, "MFU ");
    absl::StrAppendFormat(
        &out, "MFU:         %s%s\n", rest,
        s.ranks > 1 && s.flops.mfu.has_value()
            ? absl::StrCat(", all ", s.ranks, " ranks' float ops")
            : "");
    for (const std::string& note : s.flops.notes) {
      absl::StrAppendFormat(&out, "  (%s)\n", note);
    }
  }
  absl::StrAppendFormat(&out, "code traces: %s\n",
                        s.has_code_traces ? "yes" : "no");
  if (loaded != nullptr) {
    const double mb = static_cast<double>(loaded->bytes_read) / 1e6;
    absl::StrAppendFormat(&out, "loaded:      %.2f MB in %.3f s (%.1f MB/s)\n",
                          mb, loaded->seconds,
                          loaded->seconds > 0 ? mb / loaded->seconds : 0.0);
  }
  for (const std::string& note : s.notes) {
    absl::StrAppendFormat(&out, "note: %s\n", note);
  }
  return out;
}

std::string RenderSummaryDiff(const ProfileSummary& base,
                              const ProfileSummary& current, bool json) {
  if (json) {
    std::string b = RenderSummaryJson(base), c = RenderSummaryJson(current);
    b.pop_back();  // the newlines
    c.pop_back();
    return absl::StrCat("{\"base\": ", b, ", \"current\": ", c, "}\n");
  }
  std::string out = "Summary (base -> current)\n";
  auto row = [&](const std::string& what, const std::string& b,
                 const std::string& c, const std::string& change) {
    absl::StrAppendFormat(&out, "%-28s %s -> %s%s\n", what, b, c,
                          change.empty() ? "" : ", " + change);
  };
  auto count = [&](const std::string& what, int64_t b, int64_t c) {
    row(what, absl::StrCat(b), absl::StrCat(c),
        FormatStat("count", c - b, true));
  };
  auto nanos = [&](const std::string& what, int64_t b, int64_t c) {
    if (b < 0 || c < 0) {
      row(what, b < 0 ? "-" : FormatNanos(b), c < 0 ? "-" : FormatNanos(c), "");
      return;
    }
    const int64_t d = c - b;
    row(what, FormatNanos(b), FormatNanos(c),
        absl::StrCat(d < 0   ? "-"
                     : d > 0 ? "+"
                             : "",
                     FormatNanos(d < 0 ? -d : d)));
  };
  count("nodes:", base.nodes, current.nodes);
  count("steps:", base.steps, current.steps);
  nanos("time/step (median):", base.wall.median_ns, current.wall.median_ns);
  nanos("time/step (mean):", base.wall.mean_ns, current.wall.mean_ns);
  row("node time per step:", FormatTime(base.exec_micros),
      FormatTime(current.exec_micros),
      FormatStat("micros", current.exec_micros - base.exec_micros, true));
  // The devices of either run, by name: busy time, and the peak of their
  // allocators (whatever each framework calls them: GPU_0, GPU_0_bfc).
  std::map<std::string, std::pair<int64_t, int64_t>> busy, peak;
  for (const auto* s : {&base, &current}) {
    for (const DeviceSummary& d : s->devices) {
      auto& b = busy.try_emplace(d.name, -1, -1).first->second;
      (s == &base ? b.first : b.second) = d.busy_ns;
      auto& p = peak.try_emplace(d.name, -1, -1).first->second;
      (s == &base ? p.first : p.second) = d.peak_bytes();
    }
  }
  for (const auto& [name, v] : busy) {
    nanos(absl::StrCat("busy/step ", name, ":"), v.first, v.second);
  }
  for (const auto& [name, v] : peak) {
    if (v.first < 0 && v.second < 0) continue;
    row(absl::StrCat("peak memory ", name, ":"),
        v.first < 0 ? "-" : FormatMemory(v.first),
        v.second < 0 ? "-" : FormatMemory(v.second),
        v.first < 0 || v.second < 0
            ? ""
            : FormatStat("bytes", v.second - v.first, true));
  }
  return out;
}

std::string RenderSummaryJson(const ProfileSummary& s) {
  std::string out = absl::StrCat(
      "{\"nodes\": ", s.nodes,
      ", \"nodes_with_run_statistics\": ", s.nodes_with_execs,
      ", \"steps\": ", s.steps, ", \"ranks\": ", s.ranks,
      ", \"time_per_step\": {\"wall_micros\": "
      "{\"mean\": ",
      NanosAsMicros(s.wall.mean_ns),
      ", \"median\": ", NanosAsMicros(s.wall.median_ns),
      ", \"min\": ", NanosAsMicros(s.wall.min_ns),
      ", \"max\": ", NanosAsMicros(s.wall.max_ns),
      "}, \"source\": ", JsonQuote(s.wall_source),
      "}, \"node_micros_per_step\": ", s.exec_micros,
      ", \"has_code_traces\": ", s.has_code_traces ? "true" : "false",
      ", \"devices\": [");
  for (size_t i = 0; i < s.devices.size(); ++i) {
    const DeviceSummary& d = s.devices[i];
    absl::StrAppend(
        &out, i == 0 ? "" : ", ", "{\"name\": ", JsonQuote(d.name),
        ", \"nodes\": ", d.nodes, ", \"busy_micros\": ", BusyMicros(d.busy_ns),
        ", \"peak_bytes\": ", d.peak_bytes(), ", \"allocators\": [");
    for (size_t j = 0; j < d.allocators.size(); ++j) {
      absl::StrAppend(
          &out, j == 0 ? "" : ", ",
          AllocatorJson(d.allocators[j].first, d.allocators[j].second));
    }
    absl::StrAppend(&out, "], \"lanes\": [");
    for (size_t j = 0; j < d.lanes.size(); ++j) {
      absl::StrAppend(
          &out, j == 0 ? "" : ", ", "{\"name\": ", JsonQuote(d.lanes[j].name),
          ", \"kind\": \"", d.lanes[j].thread ? "thread" : "stream",
          "\", \"busy_micros\": ", BusyMicros(d.lanes[j].busy_ns), "}");
    }
    out += "]}";
  }
  out += "], \"allocators\": [";
  bool first = true;
  for (const auto& [name, peak] : s.allocator_peak_bytes) {
    absl::StrAppend(&out, first ? "" : ", ", AllocatorJson(name, peak));
    first = false;
  }
  const RunFlops& f = s.flops;
  const bool peak = f.peak.flops > 0;
  absl::StrAppend(
      &out, "], \"float_ops\": ", s.float_ops,
      ", \"flops_per_step\": ", f.flops_per_step,
      ", \"flop_rate\": ", NumberText(f.flop_rate),
      ", \"mfu\": ", f.mfu.has_value() ? NumberText(*f.mfu) : "null",
      ", \"peak_flops\": ", peak ? NumberText(f.peak.flops) : "null",
      ", \"peak_bytes_per_sec\": ",
      f.peak.bytes_per_sec > 0 ? NumberText(f.peak.bytes_per_sec) : "null",
      ", \"peak_dtype\": ", JsonQuote(DtypeName(f.peak.dtype)),
      ", \"peak_source\": ", peak ? JsonQuote(f.peak.source) : "null",
      ", \"mfu_text\": ", JsonQuote(MfuText(f)),
      ", \"flops_set\": ", JsonQuote(f.flops_set), ", \"flops_notes\": [");
  for (size_t i = 0; i < f.notes.size(); ++i) {
    absl::StrAppend(&out, i == 0 ? "" : ", ", JsonQuote(f.notes[i]));
  }
  out += "], \"notes\": [";
  for (size_t i = 0; i < s.notes.size(); ++i) {
    absl::StrAppend(&out, i == 0 ? "" : ", ", JsonQuote(s.notes[i]));
  }
  return out + "]}\n";
}

}  // namespace tfprof
