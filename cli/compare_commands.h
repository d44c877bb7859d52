// The commands that compare: `check` (gates, alone or against the base
// run), `diff` (a view, the steps, the summary or the top changes against
// the base) and `base` (loading or dropping the base run).
#ifndef TFPROF_CLI_COMPARE_COMMANDS_H_
#define TFPROF_CLI_COMPARE_COMMANDS_H_

#include <string>
#include <vector>

#include "absl/status/status.h"

namespace tfprof {
namespace cli {

class Shell;

absl::Status CheckCommand(Shell& shell, const std::vector<std::string>& args);
absl::Status DiffCommand(Shell& shell, const std::vector<std::string>& args);
absl::Status BaseCommand(Shell& shell, const std::vector<std::string>& args);

}  // namespace cli
}  // namespace tfprof

#endif  // TFPROF_CLI_COMPARE_COMMANDS_H_
