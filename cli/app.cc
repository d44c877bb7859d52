#include "cli/app.h"

#include <signal.h>
#include <sys/stat.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <fstream>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "cli/flags.h"
#include "cli/repl.h"
#include "cli/shell.h"
#include "profiler/base/file.h"
#include "profiler/base/large_stack.h"
#include "profiler/render/summary.h"
#include "profiler/web/server.h"

namespace tfprof {
namespace cli {
namespace {

int ExitCodeFor(const absl::Status& s) {
  if (s.ok()) return kExitOk;
  if (s.code() == absl::StatusCode::kAborted) return kExitCheckFailed;
  if (s.code() == absl::StatusCode::kOutOfRange) return kExitCheckInconclusive;
  return s.code() == absl::StatusCode::kInvalidArgument ? kExitUsage
                                                        : kExitError;
}

// Runs one command per line; '#' starts a comment (StripScriptComment).
// Stops at the first error unless keep_going. Returns the exit code of the
// first failure.
int RunScript(Shell& shell, std::istream& in, const std::string& name,
              bool keep_going) {
  std::string line;
  int lineno = 0;
  int status = kExitOk;
  while (!shell.quit_requested() && std::getline(in, line)) {
    ++lineno;
    // A UTF-8 byte order mark (Windows editors write one) is not a command.
    if (lineno == 1 && line.rfind("\xEF\xBB\xBF", 0) == 0) line.erase(0, 3);
    line = StripScriptComment(line);
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    absl::Status s = shell.RunLine(line);
    if (!s.ok()) {
      shell.err() << name << ":" << lineno << ": " << s.message() << "\n";
      if (status == kExitOk) status = ExitCodeFor(s);
      if (!keep_going) break;
    }
  }
  return status;
}

}  // namespace

std::string StripScriptComment(const std::string& line) {
  char quote = 0;
  for (size_t i = 0; i < line.size(); ++i) {
    const char ch = line[i];
    if (quote != 0) {
      if (ch == quote) quote = 0;
    } else if (ch == '\'' || ch == '"') {
      quote = ch;
    } else if (ch == '#' &&
               (i == 0 || line[i - 1] == ' ' || line[i - 1] == '\t')) {
      return line.substr(0, i);
    }
  }
  return line;
}

namespace {

constexpr char kShortUsage[] =
    "tfprof: query TensorFlow profiles by name scope, graph, op type and "
    "Python code.\n"
    "\n"
    "  tfprof --profile_path=PROFILE                 summary, then the "
    "tfprof> shell\n"
    "  tfprof --profile_path=PROFILE scope -max_depth 3 -select micros,bytes\n"
    "  tfprof --graph_path=GRAPH --run_meta_path=RUN_META "
    "[--op_log_path=OP_LOG] op\n"
    "  tfprof --trace_path=TRACE.pt.trace.json.gz op -order_by micros\n"
    "  tfprof --profile_path=PROFILE --script=report.tfprof\n"
    "\n"
    "tfprof --help lists every flag; 'help' in the shell lists commands and "
    "options.\n";

}  // namespace

// What RunApp leaves to the process's end, still reachable (so that leak
// checkers do not count it). Not in an unnamed namespace: a variable only
// written and never read there may be optimized away, and the pointer with
// it (LeakSanitizer then reported the profile as leaked).
Shell* g_left_to_exit = nullptr;

namespace {

// Loads the inputs; on a terminal, a load that takes more than a second
// shows progress on one line, erased when the load is done.
absl::StatusOr<std::unique_ptr<LoadedProfile>> LoadWithProgress(
    const InputPaths& in, const AppIo& io) {
  std::mutex mu;
  std::condition_variable done_cv;
  bool done = false;
  bool shown = false;  // a progress line is on the terminal
  std::string current;
  std::thread progress_thread;
  if (io.interactive) {
    progress_thread = std::thread([&] {
      const auto start = std::chrono::steady_clock::now();
      std::unique_lock<std::mutex> lock(mu);
      while (!done_cv.wait_for(lock, std::chrono::seconds(1),
                               [&] { return done; })) {
        const double secs = std::chrono::duration<double>(
                                std::chrono::steady_clock::now() - start)
                                .count();
        *io.err << "\rloading " << current << " ... " << static_cast<int>(secs)
                << "s" << std::flush;
        shown = true;
      }
    });
  }
  absl::StatusOr<std::unique_ptr<LoadedProfile>> loaded =
      LoadProfile(in, [&](const std::string& file) {
        std::lock_guard<std::mutex> lock(mu);
        current = file;
      });
  if (progress_thread.joinable()) {
    {
      std::lock_guard<std::mutex> lock(mu);
      done = true;
    }
    done_cv.notify_all();
    progress_thread.join();
    // Erase the progress line so that what follows starts on a clean line.
    if (shown) *io.err << "\r\033[K" << std::flush;
  }
  return loaded;
}

// Answers `--help` and `help [TOPIC]`, which need no profile; nullopt for
// anything else.
std::optional<int> AnswerHelp(const Flags& flags, const AppIo& io) {
  if (flags.help) {
    *io.out << FlagsUsage();
    return kExitOk;
  }
  if (flags.command.empty() || flags.command[0] != "help") return std::nullopt;
  absl::StatusOr<std::string> text = Help(
      std::vector<std::string>(flags.command.begin() + 1, flags.command.end()),
      flags.options);
  if (!text.ok()) {
    *io.err << "tfprof: " << text.status().message() << "\n";
    return kExitUsage;
  }
  *io.out << *text;
  return kExitOk;
}

// Runs what the flags ask of a loaded profile: one command, a script, or the
// summary and then the shell (or standard input's commands).
int RunLoaded(Shell& shell, const Flags& flags, const AppIo& io) {
  if (!flags.http.empty()) {
    // A bad address is the flag's error, named as such.
    absl::StatusOr<ListenAddress> address = ParseListenAddress(flags.http);
    if (!address.ok()) {
      *io.err << "tfprof: --http: " << address.status().message() << "\n";
      return ExitCodeFor(address.status());
    }
    absl::Status s = shell.RunCommand({"http", flags.http});
    if (!s.ok()) *io.err << "tfprof: " << s.message() << "\n";
    return ExitCodeFor(s);
  }
  if (!flags.command.empty()) {
    // Deep result trees are walked recursively (as in the shell).
    absl::Status s;
    RunWithLargeStack([&] { s = shell.RunCommand(flags.command); });
    if (!s.ok()) *io.err << "tfprof: " << s.message() << "\n";
    return ExitCodeFor(s);
  }
  if (!flags.script.empty()) {
    // A missing or unreadable file, or a directory, as any input: exit 1.
    // (A pipe, /dev/stdin or <(...), is a script too.)
    struct stat st;
    if (::stat(flags.script.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
      *io.err << "tfprof: --script: " << flags.script
              << ": is a directory, expected a file of commands\n";
      return kExitError;
    }
    std::ifstream script(flags.script);
    if (!script) {
      *io.err << "tfprof: --script: " << flags.script << ": cannot open ("
              << std::strerror(errno) << ")\n";
      return kExitError;
    }
    return RunScript(shell, script, flags.script, flags.keep_going);
  }
  {
    // --rank=N: that rank's summary, as the commands that follow show it.
    absl::StatusOr<Session*> first = shell.SessionFor(shell.options());
    Session& session = first.ok() ? **first : shell.session();
    *io.out << RenderSummary(session.Summary(PeakOverrideOf(shell.options())),
                             &session.profile());
  }
  if (io.interactive) {
    *io.out << "Type 'help' for commands, Ctrl-D to leave.\n";
    return RunInteractive(shell);
  }
  return RunScript(shell, *io.in, "<stdin>", flags.keep_going);
}

}  // namespace

namespace {
extern "C" void RemoveTemporaryFileAndDie(int sig) {
  RemovePendingTemporaryFile();
  // The handler was reset on entry (SA_RESETHAND): the signal, delivered
  // when this returns, ends the process with its usual status.
  ::raise(sig);
}
}  // namespace

void RemoveTemporaryFilesOnSignals() {
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction old {};
    if (::sigaction(sig, nullptr, &old) != 0 || old.sa_handler == SIG_IGN) {
      continue;  // (under nohup, say)
    }
    struct sigaction sa {};
    sa.sa_handler = RemoveTemporaryFileAndDie;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESETHAND;
    ::sigaction(sig, &sa, nullptr);
  }
}

int RunApp(const std::vector<std::string>& args, const AppIo& io) {
  absl::StatusOr<Flags> flags = ParseFlags(args);
  if (!flags.ok()) {
    *io.err << "tfprof: " << flags.status().message() << "\n";
    return kExitUsage;
  }
  if (std::optional<int> helped = AnswerHelp(*flags, io)) return *helped;
  if (!flags->script.empty() && !flags->command.empty()) {
    *io.err << "tfprof: --script runs the commands of its file; give it no "
               "command as well (got '"
            << flags->command[0] << "')\n";
    return kExitUsage;
  }
  if (!flags->http.empty() &&
      (!flags->command.empty() || !flags->script.empty())) {
    *io.err << "tfprof: --http serves the web UI; it takes no command or "
               "--script\n";
    return kExitUsage;
  }
  const InputPaths& in = flags->inputs;
  const bool no_input = in.profile_path.empty() && in.graph_path.empty() &&
                        in.run_meta_path.empty() && in.trace_path.empty();
  if (no_input && flags->command.empty() && flags->script.empty()) {
    *io.out << kShortUsage;
    return kExitOk;
  }
  if (!flags->command.empty() && FindCommand(flags->command[0]) == nullptr) {
    const std::string hint = SuggestCommand(flags->command[0]);
    *io.err << "tfprof: unknown command '" << flags->command[0] << "'"
            << (hint.empty() ? "" : " (did you mean '" + hint + "'?)")
            << "; commands: " << CommandNames() << "\n";
    return kExitUsage;
  }
  // Inputs that cannot go together are a usage error, found before loading.
  absl::Status combination = CheckInputCombination(in);
  if (!combination.ok()) {
    *io.err << "tfprof: " << combination.message() << "\n";
    return kExitUsage;
  }
  absl::Status valid = ValidateOptions(flags->options);
  if (!valid.ok()) {
    *io.err << "tfprof: " << valid.message() << "\n";
    return kExitUsage;
  }
  // `ranks` loads each rank on its own: the whole input is not loaded as
  // one (hundreds of ranks would not fit in memory).
  const bool ranks_only = !flags->command.empty() &&
                          flags->command[0] == "ranks" &&
                          !in.trace_path.empty();
  absl::StatusOr<std::unique_ptr<LoadedProfile>> loaded =
      ranks_only ? std::make_unique<LoadedProfile>() : LoadWithProgress(in, io);
  if (!loaded.ok()) {
    *io.err << "tfprof: " << loaded.status().message() << "\n";
    return no_input ? kExitUsage : kExitError;
  }
  for (const std::string& note : (*loaded)->notes) *io.err << note << "\n";

  auto owned_shell = std::make_unique<Shell>(std::move(*loaded), in,
                                             flags->options, io.out, io.err);
  Shell& shell = *owned_shell;
  const InputPaths& base = flags->base_inputs;
  if (!base.profile_path.empty() || !base.graph_path.empty() ||
      !base.run_meta_path.empty() || !base.trace_path.empty()) {
    absl::Status combination = CheckInputCombination(base);
    if (!combination.ok()) {
      *io.err << "tfprof: base: " << combination.message() << "\n";
      return kExitUsage;
    }
    absl::StatusOr<std::unique_ptr<LoadedProfile>> base_loaded =
        LoadWithProgress(base, io);
    if (!base_loaded.ok()) {
      *io.err << "tfprof: base: " << base_loaded.status().message() << "\n";
      return kExitError;
    }
    for (const std::string& note : (*base_loaded)->notes) {
      *io.err << "base: " << note << "\n";
    }
    shell.SetBase(std::move(*base_loaded), base);
  }
  struct LeaveToExit {
    std::unique_ptr<Shell>* shell;
    bool on;
    ~LeaveToExit() {
      if (on) g_left_to_exit = shell->release();
    }
  } leave_to_exit{&owned_shell, io.exiting};
  return RunLoaded(shell, *flags, io);
}

}  // namespace cli
}  // namespace tfprof
