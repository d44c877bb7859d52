// What the shell's command handlers share: a report's -output spelled
// TYPE[:outfile=PATH], and delivering a report to the terminal or a file.
#ifndef TFPROF_CLI_COMMAND_UTIL_H_
#define TFPROF_CLI_COMMAND_UTIL_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace tfprof {
namespace cli {

class Shell;

// Writes `text` to output's "outfile" (atomically, never over an input
// file; `what` names it in the message), or prints it when there is none.
absl::Status WriteOrPrint(Shell& shell, const std::string& text,
                          const std::map<std::string, std::string>& output,
                          const char* what);

// A report's -output: TYPE or TYPE:outfile=PATH, TYPE one of `types`;
// `command` names the command in messages.
absl::Status ParseReportOutput(const std::string& spec,
                               const std::vector<std::string>& types,
                               const char* command, std::string* type,
                               std::string* outfile);

// A command's -rank VALUE (a rank >= 0) into *rank; `command` names the
// command in the message.
absl::Status ParseRankValue(const std::string& value, const char* command,
                            int64_t* rank);

}  // namespace cli
}  // namespace tfprof

#endif  // TFPROF_CLI_COMMAND_UTIL_H_
