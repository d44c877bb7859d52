#include "cli/http_command.h"

#include <signal.h>

#include <atomic>

#include "absl/strings/str_cat.h"
#include "cli/flags.h"
#include "cli/shell.h"
#include "profiler/web/api.h"
#include "profiler/web/server.h"

namespace tfprof {
namespace cli {
namespace {

std::atomic<bool> g_stop{false};

void OnStopSignal(int) { g_stop.store(true); }

// SIGINT and SIGTERM stop the server while it runs; the shell's own
// handlers come back afterwards.
class StopOnSignals {
 public:
  StopOnSignals() {
    g_stop.store(false);
    struct sigaction sa {};
    sa.sa_handler = OnStopSignal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(SIGINT, &sa, &old_int_);
    sigaction(SIGTERM, &sa, &old_term_);
  }
  ~StopOnSignals() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

}  // namespace

absl::Status HttpCommand(Shell& shell, const std::vector<std::string>& args) {
  if (args.size() > 1) {
    return absl::InvalidArgumentError("usage: http [[HOST:]PORT]");
  }
  absl::StatusOr<ListenAddress> address =
      ParseListenAddress(args.empty() ? kDefaultHttpAddress : args[0]);
  if (!address.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("http: ", address.status().message()));
  }
  WebInputFlags flags{InputFlagsText(shell.inputs(), ""), ""};
  if (shell.session().base() != nullptr) {
    flags.base = InputFlagsText(shell.session().base()->inputs(), "base_");
  }
  WebApi api(&shell.session(), flags, shell.options());
  ServeOptions options;
  options.address = *address;
  options.on_listening = [&shell](const std::string& url) {
    shell.out() << "Serving the web UI on " << url << " (Ctrl-C stops it)"
                << std::endl;
  };
  options.on_warning = [&shell](const std::string& warning) {
    shell.err() << warning << std::endl;
  };
  StopOnSignals signals;
  absl::Status s = ServeHttp(&api, options, &g_stop);
  if (s.ok()) shell.out() << "web UI stopped" << std::endl;
  return s;
}

}  // namespace cli
}  // namespace tfprof
