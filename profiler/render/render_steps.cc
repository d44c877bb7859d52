#include "profiler/render/render_steps.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "profiler/base/json_writer.h"
#include "profiler/base/units.h"

namespace tfprof {
namespace {

// One row's fields in CSV/JSON order: name, value as written (numbers bare,
// strings quoted for JSON by the caller).
struct Field {
  const char* name;
  std::string value;
  bool text = false;
};

// Figures the table does not know (StepTable::Known) are empty (null in
// JSON).
std::vector<Field> Fields(const StepRow& r, const StepTable& table) {
  const auto known = [&table](int64_t StepRow::*member, std::string v) {
    return table.Known(member) ? v : std::string();
  };
  return {
      {"step", absl::StrCat(r.step)},
      {"wall_micros", NanosAsMicros(r.wall_ns)},
      {"accelerator_micros", NanosAsMicros(r.accelerator_ns)},
      {"compute_micros", NanosAsMicros(r.compute_ns)},
      {"memcpy_micros", known(&StepRow::memcpy_ns, NanosAsMicros(r.memcpy_ns))},
      {"communication_micros", NanosAsMicros(r.communication_ns)},
      {"exposed_communication_micros",
       NanosAsMicros(r.exposed_communication_ns)},
      {"idle_micros", known(&StepRow::idle_ns, NanosAsMicros(r.idle_ns))},
      {"kernels", known(&StepRow::kernels, absl::StrCat(r.kernels))},
      {"device_span_micros",
       known(&StepRow::device_span_ns, NanosAsMicros(r.device_span_ns))},
      {"peak_bytes", absl::StrCat(r.peak_bytes)},
      {"peak_allocator", r.peak_allocator, true},
      {"wall_from", r.from_markers ? "markers" : "executions", true},
      {"flops", absl::StrCat(r.flops)},
      {"mfu", r.mfu < 0 ? "" : absl::StrFormat("%.6f", r.mfu)},
  };
}

// A field as JSON: numbers bare (an empty one is null), strings quoted.
std::string JsonField(const Field& f) {
  if (f.text) return JsonQuote(f.value);
  return f.value.empty() ? "null" : f.value;
}

}  // namespace

std::string RenderStepsText(const StepTable& table) {
  std::string out =
      absl::StrFormat("%d steps (%s)\n", table.rows.size(), table.wall_source);
  const bool flops = !table.mfu_text.empty();
  bool comm = false;
  for (const StepRow& r : table.rows) comm = comm || r.communication_ns > 0;
  absl::StrAppendFormat(&out, "%8s %12s %12s %12s %12s", "step", "wall",
                        "accelerator", "compute", "memcpy");
  if (comm)
    absl::StrAppendFormat(&out, " %13s %12s", "communication", "exposed");
  absl::StrAppendFormat(&out, " %12s %8s %12s", "idle", "kernels",
                        "device span");
  if (flops) absl::StrAppendFormat(&out, " %13s %6s", "flops", "MFU");
  absl::StrAppend(&out, "  peak memory\n");
  for (const StepRow& r : table.rows) {
    const std::string peak = r.peak_bytes < 0
                                 ? "-"
                                 : absl::StrCat(FormatMemory(r.peak_bytes),
                                                " (", r.peak_allocator, ")");
    const auto time = [&table](int64_t StepRow::*member, int64_t ns) {
      return table.Known(member) ? FormatNanos(ns) : std::string("-");
    };
    absl::StrAppendFormat(&out, "%8d %12s %12s %12s %12s", r.step,
                          FormatNanos(r.wall_ns), FormatNanos(r.accelerator_ns),
                          FormatNanos(r.compute_ns),
                          time(&StepRow::memcpy_ns, r.memcpy_ns));
    if (comm) {
      absl::StrAppendFormat(&out, " %13s %12s", FormatNanos(r.communication_ns),
                            FormatNanos(r.exposed_communication_ns));
    }
    absl::StrAppendFormat(
        &out, " %12s %8s %12s", time(&StepRow::idle_ns, r.idle_ns),
        table.Known(&StepRow::kernels) ? absl::StrCat(r.kernels) : "-",
        time(&StepRow::device_span_ns, r.device_span_ns));
    if (flops) {
      absl::StrAppendFormat(
          &out, " %13s %6s", FormatFlopCount(static_cast<double>(r.flops)),
          r.mfu < 0 ? "n/a" : absl::StrFormat("%.1f%%", 100 * r.mfu));
    }
    absl::StrAppend(&out, "  ", peak, "\n");
  }
  if (!table.rows.empty()) {
    const WallStats w = StepWallStats(table);
    absl::StrAppendFormat(&out,
                          "wall time per step: mean %s, median %s, min %s, "
                          "max %s\n",
                          FormatNanos(w.mean_ns), FormatNanos(w.median_ns),
                          FormatNanos(w.min_ns), FormatNanos(w.max_ns));
  }
  if (flops) absl::StrAppend(&out, "per step: ", table.mfu_text, "\n");
  return out;
}

std::string RenderStepsCsv(const StepTable& table) {
  std::string out;
  const std::vector<Field> header = Fields(StepRow(), StepTable());
  for (size_t i = 0; i < header.size(); ++i) {
    absl::StrAppend(&out, i > 0 ? "," : "", header[i].name);
  }
  out += "\n";
  for (const StepRow& r : table.rows) {
    const std::vector<Field> f = Fields(r, table);
    for (size_t i = 0; i < f.size(); ++i) {
      absl::StrAppend(&out, i > 0 ? "," : "", CsvField(f[i].value));
    }
    out += "\n";
  }
  return out;
}

std::string RenderStepsJson(const StepTable& table) {
  const WallStats w = StepWallStats(table);
  std::string out = absl::StrCat(
      "{\"wall_source\": ", JsonQuote(table.wall_source),
      ", \"wall_micros\": {\"mean\": ", NanosAsMicros(w.mean_ns),
      ", \"median\": ", NanosAsMicros(w.median_ns),
      ", \"min\": ", NanosAsMicros(w.min_ns),
      ", \"max\": ", NanosAsMicros(w.max_ns), "}, ",
      table.mfu_text.empty()
          ? ""
          : absl::StrCat("\"mfu_text\": ", JsonQuote(table.mfu_text), ", "),
      "\"steps\": [");
  for (size_t i = 0; i < table.rows.size(); ++i) {
    out += i > 0 ? ", {" : "{";
    const std::vector<Field> f = Fields(table.rows[i], table);
    for (size_t k = 0; k < f.size(); ++k) {
      absl::StrAppend(&out, k > 0 ? ", " : "", "\"", f[k].name,
                      "\": ", JsonField(f[k]));
    }
    out += "}";
  }
  return out + "]}\n";
}

}  // namespace tfprof
