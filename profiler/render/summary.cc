#include "profiler/render/summary.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "profiler/base/units.h"

namespace tfprof {

ProfileSummary Summarize(const Model& model) {
  ProfileSummary s;
  s.nodes = static_cast<int64_t>(model.size());
  s.steps = static_cast<int64_t>(model.steps().size());
  s.has_code_traces = model.has_code_traces();
  for (const auto& node : model.nodes()) {
    if (!node->execs.empty()) ++s.nodes_with_execs;
    if (!node->canonical_device().empty())
      ++s.devices[node->canonical_device()];
    ++s.op_types[node->op];
    const NodeStats st = node->Stats(-1);
    s.exec_micros += st.exec_micros;
    s.accelerator_micros += st.accelerator_exec_micros;
    s.cpu_micros += st.cpu_exec_micros;
    s.requested_bytes += st.requested_bytes;
    s.peak_bytes += st.peak_bytes;
    s.parameters += st.parameters;
    s.float_ops += st.float_ops;
  }
  return s;
}

std::string RenderSummary(const ProfileSummary& s,
                          const LoadedProfile* loaded) {
  std::string out;
  absl::StrAppendFormat(&out, "nodes:       %d (%d with run statistics)\n",
                        s.nodes, s.nodes_with_execs);
  absl::StrAppendFormat(&out, "steps:       %d\n", s.steps);
  absl::StrAppendFormat(&out, "devices:     %d\n", s.devices.size());
  for (const auto& [dev, n] : s.devices) {
    absl::StrAppendFormat(&out, "  %-60s %d nodes\n", dev, n);
  }
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
  absl::StrAppendFormat(&out, "time/step:   %s (accelerator %s, cpu %s)\n",
                        FormatTime(s.exec_micros),
                        FormatTime(s.accelerator_micros),
                        FormatTime(s.cpu_micros));
  absl::StrAppendFormat(&out, "memory/step: %s requested, %s peak\n",
                        FormatMemory(s.requested_bytes),
                        FormatMemory(s.peak_bytes));
  absl::StrAppendFormat(&out, "parameters:  %s\n", FormatNumber(s.parameters));
  absl::StrAppendFormat(&out, "float ops:   %s\n", FormatNumber(s.float_ops));
  absl::StrAppendFormat(&out, "code traces: %s\n",
                        s.has_code_traces ? "yes" : "no");
  if (loaded != nullptr) {
    const double mb = static_cast<double>(loaded->bytes_read) / 1e6;
    absl::StrAppendFormat(&out, "loaded:      %.2f MB in %.3f s (%.1f MB/s)\n",
                          mb, loaded->seconds,
                          loaded->seconds > 0 ? mb / loaded->seconds : 0.0);
  }
  return out;
}

}  // namespace tfprof
