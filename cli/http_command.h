// The `http` command (and --http): serves the web UI on the shell's
// profile and base run until Ctrl-C or SIGTERM.
#ifndef TFPROF_CLI_HTTP_COMMAND_H_
#define TFPROF_CLI_HTTP_COMMAND_H_

#include <string>
#include <vector>

#include "absl/status/status.h"

namespace tfprof {
namespace cli {

class Shell;

inline constexpr char kDefaultHttpAddress[] = "127.0.0.1:8080";

// http [[HOST:]PORT]
absl::Status HttpCommand(Shell& shell, const std::vector<std::string>& args);

}  // namespace cli
}  // namespace tfprof

#endif  // TFPROF_CLI_HTTP_COMMAND_H_
