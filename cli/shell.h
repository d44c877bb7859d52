// The tfprof command interpreter shared by the interactive shell, one-shot
// commands and scripts: the command table, option handling and output.
#ifndef TFPROF_CLI_SHELL_H_
#define TFPROF_CLI_SHELL_H_

#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "profiler/load/loader.h"
#include "profiler/session/session.h"
#include "profiler/views/options.h"
#include "profiler/views/views.h"

namespace tfprof {
namespace cli {

class Shell;

struct CommandSpec {
  std::string name;
  std::string usage;  // arguments, e.g. "[-option value ...]"
  std::string help;   // one line
  std::function<absl::Status(Shell&, const std::vector<std::string>&)> run;
};

// Every command, in the order help lists them.
const std::vector<CommandSpec>& Commands();
const CommandSpec* FindCommand(const std::string& name);
// The closest command name to a misspelt one ("" if none is close).
std::string SuggestCommand(const std::string& name);
// The help text: commands, then options with their current values.
std::string HelpText(const Options& current);
// `help [topic]`: HelpText without a topic, else the help of the command or
// option (with or without its leading '-') named by topic[0].
absl::StatusOr<std::string> Help(const std::vector<std::string>& topic,
                                 const Options& current);
// Every command's name, comma-separated, in the table's order.
std::string CommandNames();

// Splits a command line into words: whitespace separates, '...' and "..."
// quote (so regexes may contain spaces).
absl::StatusOr<std::vector<std::string>> Tokenize(const std::string& line);

class Shell {
 public:
  Shell(std::unique_ptr<LoadedProfile> profile, InputPaths inputs,
        Options defaults, std::ostream* out, std::ostream* err);

  // Runs one line of input. An empty line prints the current options.
  absl::Status RunLine(const std::string& line);
  // Runs a command given as words (the first is the command name).
  absl::Status RunCommand(const std::vector<std::string>& words);

  // Runs a view query with the persistent options overridden by `args`.
  absl::Status RunView(ViewKind view, const std::vector<std::string>& args);

  // The base run that diff (and check terms with 'base') compare with;
  // null drops it.
  void SetBase(std::unique_ptr<LoadedProfile> base, InputPaths inputs);
  const LoadedProfile* base() const {
    return session_->base() != nullptr ? &session_->base()->profile() : nullptr;
  }
  const InputPaths& inputs() const { return session_->inputs(); }
  // What every command asks the loaded run (and its base).
  Session& session() { return *session_; }
  // The session a command with these options reads: rank N's alone with
  // -rank N on a multi-rank input, else the whole input's.
  absl::StatusOr<Session*> SessionFor(const Options& opts);

  bool quit_requested() const { return quit_; }
  void RequestQuit() { quit_ = true; }
  void set_timing(bool on) { timing_ = on; }
  Options& options() { return options_; }
  const LoadedProfile& profile() const { return session_->profile(); }
  std::ostream& out() { return *out_; }
  std::ostream& err() { return *err_; }
  // The files the profile was loaded from (never overwritten).
  std::vector<std::string> input_files() const {
    return session_->input_files();
  }

 private:
  std::unique_ptr<Session> session_;
  Options options_;
  std::ostream* out_;
  std::ostream* err_;
  bool quit_ = false;
  bool timing_ = false;
};

}  // namespace cli
}  // namespace tfprof

#endif  // TFPROF_CLI_SHELL_H_
