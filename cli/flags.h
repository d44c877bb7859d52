// Command-line flags of the tfprof binary, generated from the option table.
#ifndef TFPROF_CLI_FLAGS_H_
#define TFPROF_CLI_FLAGS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "profiler/load/loader.h"
#include "profiler/views/options.h"

namespace tfprof {
namespace cli {

struct Flags {
  InputPaths inputs;
  InputPaths base_inputs;   // --base_<input flag>: the run to compare with
  Options options;          // defaults for every command
  std::string script;       // --script=FILE
  bool keep_going = false;  // --keep_going: scripts go on after errors
  std::string http;         // --http=[HOST:]PORT: serve the web UI
  bool help = false;
  std::vector<std::string> command;  // the command word and its arguments
};

// Parses "--name=value" (or "--name value") flags up to the first word that
// is not a flag; that word and everything after it form the command.
absl::StatusOr<Flags> ParseFlags(const std::vector<std::string>& args);

// The input flags that name `inputs` ("--profile_path=p ..."), each with
// `prefix` after its dashes ("base_" for a base run); shell-quoted where
// needed.
std::string InputFlagsText(const InputPaths& inputs, const std::string& prefix);

// The --help text: every flag with its default and meaning.
std::string FlagsUsage();

}  // namespace cli
}  // namespace tfprof

#endif  // TFPROF_CLI_FLAGS_H_
