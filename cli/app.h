// The tfprof program: flags, loading, one-shot commands, scripts and the
// interactive shell. main() only forwards to RunApp().
#ifndef TFPROF_CLI_APP_H_
#define TFPROF_CLI_APP_H_

#include <istream>
#include <ostream>
#include <string>
#include <vector>

namespace tfprof {
namespace cli {

// Exit codes.
inline constexpr int kExitOk = 0;
inline constexpr int kExitError = 1;        // load or run-time error
inline constexpr int kExitUsage = 2;        // bad flags, options or commands
inline constexpr int kExitCheckFailed = 3;  // a 'check' gate failed
// A 'check' verdict term could not decide with the steps profiled (and no
// gate failed).
inline constexpr int kExitCheckInconclusive = 4;

struct AppIo {
  std::istream* in;
  std::ostream* out;
  std::ostream* err;
  bool interactive;  // standard input is a terminal
  // The process ends when RunApp returns: the loaded profile is left to the
  // operating system instead of being freed piece by piece (which takes a
  // noticeable time for a large profile).
  bool exiting = false;
};

int RunApp(const std::vector<std::string>& args, const AppIo& io);

// SIGINT, SIGTERM and SIGHUP (unless ignored) end the process as before, but
// first remove the temporary file of an output being written. For main().
void RemoveTemporaryFilesOnSignals();

// A script line without its comment: '#' starts one where it begins a word
// outside quotes (so `-map 'ProfilerStep#\d+=>ProfilerStep'` keeps its
// '#').
std::string StripScriptComment(const std::string& line);

}  // namespace cli
}  // namespace tfprof

#endif  // TFPROF_CLI_APP_H_
