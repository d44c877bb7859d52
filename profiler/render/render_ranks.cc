#include "profiler/render/render_ranks.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "profiler/base/json_writer.h"
#include "profiler/base/units.h"

namespace tfprof {
namespace {

// A rank's files as one field ("a.json;b.json").
std::string FilesField(const RankReport& r) {
  return absl::StrJoin(r.files, ";");
}

// A rank-step's times, in the contract's order.
std::vector<std::pair<const char*, int64_t>> StepTimes(
    const RankStepReport& s) {
  return {{"wall_micros", s.wall_ns},
          {"compute_micros", s.compute_ns},
          {"communication_micros", s.communication_ns},
          {"exposed_communication_micros", s.exposed_communication_ns},
          {"wait_micros", s.wait_ns},
          {"idle_micros", s.idle_ns}};
}

std::string OffsetText(const RankReport& r) {
  if (r.alignment == "reference") return "reference clock";
  return absl::StrFormat("%s +- %s (%s, %d matched)", FormatNanos(r.offset_ns),
                         FormatNanos(r.offset_uncertainty_ns), r.alignment,
                         r.matched);
}

void AppendRankTable(const RanksReport& report, std::string* out) {
  absl::StrAppendFormat(out, "%6s %8s %12s %12s %13s %12s %12s %12s\n", "rank",
                        "step", "wall", "compute", "communication", "exposed",
                        "wait", "idle");
  for (const RankReport& r : report.ranks) {
    for (const RankStepReport& s : r.steps) {
      absl::StrAppendFormat(out, "%6d %8d %12s %12s %13s %12s %12s %12s\n",
                            r.rank, s.step, FormatNanos(s.wall_ns),
                            FormatNanos(s.compute_ns),
                            FormatNanos(s.communication_ns),
                            FormatNanos(s.exposed_communication_ns),
                            FormatNanos(s.wait_ns), FormatNanos(s.idle_ns));
    }
  }
}

void AppendJobSteps(const RanksReport& report, std::string* out) {
  absl::StrAppendFormat(out, "\njob steps:\n%8s %6s %12s %12s %12s %8s  %s\n",
                        "step", "ranks", "min wall", "max wall", "spread",
                        "slowest", "longest wait caused (rank, at)");
  for (const JobStep& j : report.steps) {
    const std::string wait =
        j.delayed_by < 0
            ? "-"
            : absl::StrFormat("%s (rank %d, %s)", FormatNanos(j.max_delay_ns),
                              j.delayed_by, j.collective);
    absl::StrAppendFormat(
        out, "%8d %6d %12s %12s %12s %8d  %s\n", j.step, j.ranks,
        FormatNanos(j.min_wall_ns), FormatNanos(j.max_wall_ns),
        FormatNanos(j.max_wall_ns - j.min_wall_ns), j.slowest_rank, wait);
  }
}

}  // namespace

std::string RenderRanksText(const RanksReport& report) {
  std::string out = absl::StrFormat(
      "%d ranks%s, %d collectives matched across ranks\n", report.ranks.size(),
      report.backend.empty() ? "" : absl::StrCat(" (", report.backend, ")"),
      report.collectives_matched);
  for (const std::string& n : report.notes) absl::StrAppend(&out, n, "\n");
  out += "\nclock offsets (aligned time = the rank's clock - offset):\n";
  for (const RankReport& r : report.ranks) {
    absl::StrAppendFormat(&out, "  rank %d%s: %s  %s\n", r.rank,
                          r.host.empty() ? "" : absl::StrCat(" (", r.host, ")"),
                          OffsetText(r), FilesField(r));
  }
  out += "\n";
  AppendRankTable(report, &out);
  AppendJobSteps(report, &out);
  absl::StrAppendFormat(&out, "\nstragglers (a delay of at least %s):\n",
                        FormatNanos(report.straggler_floor_ns));
  if (report.stragglers.empty()) out += "  none\n";
  for (const Straggler& s : report.stragglers) {
    absl::StrAppendFormat(&out,
                          "  step %d: rank %d arrived %s late at %s; it spent "
                          "%s in %s (%s more than the other ranks)\n",
                          s.step, s.rank, FormatNanos(s.delay_ns), s.collective,
                          FormatNanos(s.cause_ns),
                          s.cause.empty() ? "?" : s.cause,
                          FormatNanos(s.cause_excess_ns));
  }
  return out;
}

std::string RenderRanksCsv(const RanksReport& report) {
  std::string out = "rank,file,offset_micros,offset_uncertainty_micros,step";
  for (const auto& [name, v] : StepTimes(RankStepReport())) {
    absl::StrAppend(&out, ",", name);
  }
  out += "\n";
  for (const RankReport& r : report.ranks) {
    for (const RankStepReport& s : r.steps) {
      absl::StrAppend(&out, r.rank, ",", CsvField(FilesField(r)), ",",
                      NanosAsMicros(r.offset_ns), ",",
                      NanosAsMicros(r.offset_uncertainty_ns), ",", s.step);
      for (const auto& [name, v] : StepTimes(s)) {
        absl::StrAppend(&out, ",", NanosAsMicros(v));
      }
      out += "\n";
    }
  }
  return out;
}

namespace {

std::string RankJson(const RankReport& r) {
  std::string out = absl::StrCat(
      "{\"rank\": ", r.rank, ", \"file\": ", JsonQuote(FilesField(r)),
      ", \"host\": ", JsonQuote(r.host),
      ", \"offset_micros\": ", NanosAsMicros(r.offset_ns),
      ", \"offset_uncertainty_micros\": ",
      NanosAsMicros(r.offset_uncertainty_ns),
      ", \"alignment\": ", JsonQuote(r.alignment), ", \"matched\": ", r.matched,
      ", \"steps\": [");
  for (size_t i = 0; i < r.steps.size(); ++i) {
    absl::StrAppend(&out, i > 0 ? ", " : "", "{\"step\": ", r.steps[i].step);
    for (const auto& [name, v] : StepTimes(r.steps[i])) {
      absl::StrAppend(&out, ", \"", name, "\": ", NanosAsMicros(v));
    }
    out += "}";
  }
  return out + "]}";
}

std::string JobStepJson(const JobStep& j) {
  return absl::StrCat("{\"step\": ", j.step, ", \"ranks\": ", j.ranks,
                      ", \"min_wall_micros\": ", NanosAsMicros(j.min_wall_ns),
                      ", \"max_wall_micros\": ", NanosAsMicros(j.max_wall_ns),
                      ", \"slowest_rank\": ", j.slowest_rank,
                      ", \"max_delay_micros\": ", NanosAsMicros(j.max_delay_ns),
                      ", \"delayed_by\": ", j.delayed_by,
                      ", \"collective\": ", JsonQuote(j.collective), "}");
}

std::string StragglerJson(const Straggler& s) {
  return absl::StrCat(
      "{\"step\": ", s.step, ", \"rank\": ", s.rank,
      ", \"delay_micros\": ", NanosAsMicros(s.delay_ns),
      ", \"collective\": ", JsonQuote(s.collective),
      ", \"cause\": ", JsonQuote(s.cause),
      ", \"cause_micros\": ", NanosAsMicros(s.cause_ns),
      ", \"cause_excess_micros\": ", NanosAsMicros(s.cause_excess_ns), "}");
}

template <typename T, typename F>
std::string JsonList(const std::vector<T>& items, F one) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) {
    absl::StrAppend(&out, i > 0 ? ", " : "", one(items[i]));
  }
  return out + "]";
}

}  // namespace

std::string RenderRanksJson(const RanksReport& report) {
  return absl::StrCat(
      "{\"ranks\": ", JsonList(report.ranks, RankJson),
      ", \"steps\": ", JsonList(report.steps, JobStepJson),
      ", \"stragglers\": ", JsonList(report.stragglers, StragglerJson),
      ", \"straggler_floor_micros\": ",
      NanosAsMicros(report.straggler_floor_ns),
      ", \"collectives_matched\": ", report.collectives_matched,
      ", \"backend\": ", JsonQuote(report.backend),
      ", \"world_size\": ", report.world_size, ", \"notes\": ",
      JsonList(report.notes, [](const std::string& n) { return JsonQuote(n); }),
      "}\n");
}

}  // namespace tfprof
