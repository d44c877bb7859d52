#include "cli/ranks_command.h"

#include <map>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "cli/command_util.h"
#include "cli/shell.h"
#include "profiler/render/render_ranks.h"
#include "profiler/session/session.h"

namespace tfprof {
namespace cli {

absl::Status RanksCommand(Shell& shell, const std::vector<std::string>& args) {
  const char* usage =
      "usage: ranks [-output stdout|csv|json|timeline[:outfile=PATH]] "
      "[-step N]";
  std::string spec = "stdout";
  int64_t step = -1;
  for (size_t i = 0; i < args.size(); i += 2) {
    if (i + 1 >= args.size()) return absl::InvalidArgumentError(usage);
    if (args[i] == "-output") {
      spec = args[i + 1];
    } else if (args[i] == "-step") {
      if (!absl::SimpleAtoi(args[i + 1], &step) || step < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("ranks: -step ", args[i + 1], ": expected a step"));
      }
    } else {
      return absl::InvalidArgumentError(usage);
    }
  }
  std::string type, outfile;
  absl::Status parsed = ParseReportOutput(
      spec, {"stdout", "csv", "json", "timeline"}, "ranks", &type, &outfile);
  if (!parsed.ok()) return parsed;
  if (type == "timeline" && outfile.empty()) {
    return absl::InvalidArgumentError(
        "ranks: -output timeline needs :outfile=PATH (a Chrome trace)");
  }
  absl::StatusOr<RanksReport> report =
      shell.session().Ranks([&shell](const std::string& file) {
        shell.err() << "loading rank " << file << "\n";
      });
  if (!report.ok()) return report.status();
  std::string text;
  if (type != "timeline" && step >= 0) {  // -step N: that step's rows
    absl::StatusOr<RanksReport> one = RanksReportOfStep(*report, step);
    if (!one.ok()) return one.status();
    report = std::move(*one);
  }
  if (type == "timeline") {
    absl::StatusOr<std::string> t = shell.session().RanksTimeline(step);
    if (!t.ok()) return t.status();
    text = std::move(*t);
  } else {
    text = type == "csv"    ? RenderRanksCsv(*report)
           : type == "json" ? RenderRanksJson(*report)
                            : RenderRanksText(*report);
  }
  std::map<std::string, std::string> output;
  if (!outfile.empty()) output["outfile"] = outfile;
  return WriteOrPrint(shell, text, output,
                      type == "timeline" ? "aligned timeline" : "ranks report");
}

}  // namespace cli
}  // namespace tfprof
