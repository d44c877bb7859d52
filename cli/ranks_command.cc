#include "cli/ranks_command.h"

#include <iostream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "cli/shell.h"
#include "profiler/base/file.h"
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
  const size_t colon = spec.find(':');
  const std::string type = spec.substr(0, colon);
  std::string outfile;
  if (colon != std::string::npos) {
    const std::string rest = spec.substr(colon + 1);
    if (rest.rfind("outfile=", 0) != 0 || rest.size() <= 8) {
      return absl::InvalidArgumentError(usage);
    }
    outfile = rest.substr(8);
  }
  if (type != "stdout" && type != "csv" && type != "json" &&
      type != "timeline") {
    return absl::InvalidArgumentError(
        absl::StrCat("ranks: -output ", type,
                     " is not available (stdout, csv, json, timeline)"));
  }
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
  if (type == "timeline") {
    absl::StatusOr<std::string> t = shell.session().RanksTimeline(step);
    if (!t.ok()) return t.status();
    text = std::move(*t);
  } else {
    text = type == "csv"    ? RenderRanksCsv(*report)
           : type == "json" ? RenderRanksJson(*report)
                            : RenderRanksText(*report);
  }
  if (outfile.empty()) {
    shell.out() << text;
    return absl::OkStatus();
  }
  absl::Status s = WriteFileAtomic(outfile, text, shell.input_files());
  if (!s.ok()) return s;
  shell.err() << (type == "timeline" ? "aligned timeline" : "ranks report")
              << " written to " << outfile << "\n";
  return absl::OkStatus();
}

}  // namespace cli
}  // namespace tfprof
