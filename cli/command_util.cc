#include "cli/command_util.h"

#include <algorithm>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/shell.h"
#include "profiler/base/file.h"

namespace tfprof {
namespace cli {

absl::Status WriteOrPrint(Shell& shell, const std::string& text,
                          const std::map<std::string, std::string>& output,
                          const char* what) {
  auto outfile = output.find("outfile");
  if (outfile == output.end()) {
    shell.out() << text;
    return absl::OkStatus();
  }
  absl::Status s = WriteFileAtomic(outfile->second, text, shell.input_files());
  if (!s.ok()) return s;
  shell.err() << what << " written to " << outfile->second << "\n";
  return absl::OkStatus();
}

absl::Status ParseReportOutput(const std::string& spec,
                               const std::vector<std::string>& types,
                               const char* command, std::string* type,
                               std::string* outfile) {
  const size_t colon = spec.find(':');
  *type = spec.substr(0, colon);
  if (std::find(types.begin(), types.end(), *type) == types.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat(command, ": -output ", *type, " is not available (",
                     absl::StrJoin(types, ", "), ")"));
  }
  if (colon != std::string::npos) {
    const std::string rest = spec.substr(colon + 1);
    if (rest.rfind("outfile=", 0) != 0 || rest.size() == 8) {
      return absl::InvalidArgumentError(absl::StrCat(
          command, ": -output ", spec, ": expected ", *type, ":outfile=PATH"));
    }
    *outfile = rest.substr(8);
  }
  return absl::OkStatus();
}

absl::Status ParseRankValue(const std::string& value, const char* command,
                            int64_t* rank) {
  if (absl::SimpleAtoi(value, rank) && *rank >= 0) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(command, ": -rank wants a rank >= 0, not '", value, "'"));
}

}  // namespace cli
}  // namespace tfprof
