// The `ranks` command: the job's account of a multi-rank input (clock
// offsets, per rank and step times, stragglers and their causes).
#ifndef TFPROF_CLI_RANKS_COMMAND_H_
#define TFPROF_CLI_RANKS_COMMAND_H_

#include <string>
#include <vector>

#include "absl/status/status.h"

namespace tfprof {
namespace cli {

class Shell;

// ranks [-output stdout|csv|json|timeline[:outfile=PATH]] [-step N]
absl::Status RanksCommand(Shell& shell, const std::vector<std::string>& args);

}  // namespace cli
}  // namespace tfprof

#endif  // TFPROF_CLI_RANKS_COMMAND_H_
