#include "cli/repl.h"

#include <readline/history.h>
#include <readline/readline.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "cli/app.h"
#include "profiler/model/model.h"

namespace tfprof {
namespace cli {
namespace {

constexpr char kHistoryFile[] = ".tfprof_history.txt";

std::vector<std::string>* g_candidates = nullptr;
const Model* g_model = nullptr;  // for completing node names
std::atomic<bool> g_interrupted{false};
volatile sig_atomic_t g_in_readline = 0;

// Ctrl-C: drop the line being typed, or stop the running query; never leave.
void OnInterrupt(int) {
  g_interrupted.store(true, std::memory_order_relaxed);
  if (g_in_readline) {
    static const char kNewLine[] = "^C\n";
    (void)!::write(STDOUT_FILENO, kNewLine, sizeof(kNewLine) - 1);
    rl_on_new_line();
    rl_replace_line("", 0);
    rl_redisplay();
  }
}

char* NextCandidate(const char* text, int state) {
  static size_t index;
  if (state == 0) index = 0;
  const std::string prefix(text);
  while (g_candidates != nullptr && index < g_candidates->size()) {
    const std::string& c = (*g_candidates)[index++];
    if (absl::StartsWith(c, prefix)) return strdup(c.c_str());
  }
  return nullptr;
}

// Completes command names first, then option names, and the values of
// -select, -order_by and -output.
char** Complete(const char* text, int start, int /*end*/) {
  static std::vector<std::string> candidates;
  candidates.clear();
  rl_attempted_completion_over = 1;
  const std::string before(rl_line_buffer, static_cast<size_t>(start));
  if (before.find_first_not_of(" \t") == std::string::npos) {
    for (const CommandSpec& c : Commands()) candidates.push_back(c.name);
  } else {
    // The previous word decides what comes next.
    std::string prev;
    size_t end = before.find_last_not_of(" \t");
    if (end != std::string::npos) {
      size_t begin = before.find_last_of(" \t", end);
      prev =
          before.substr(begin == std::string::npos ? 0 : begin + 1,
                        end - (begin == std::string::npos ? 0 : begin + 1) + 1);
    }
    const bool regex_option =
        prev == "-show_name_regexes" || prev == "-hide_name_regexes" ||
        prev == "-trim_name_regexes" || prev == "-start_name_regexes";
    if (regex_option && g_model != nullptr) {
      // Node names of the loaded profile (a name is a regex matching itself
      // when it has no special characters).
      for (const GraphNode* n : g_model->NodesByName()) {
        candidates.push_back(n->name);
      }
    } else if (prev == "-select") {
      candidates = SelectValues();
    } else if (prev == "-order_by") {
      candidates = OrderByValues();
    } else if (prev == "-output") {
      candidates = {"stdout", "none",
                    "file:outfile=", "timeline:outfile=", "pprof:outfile="};
    } else {
      for (const OptionSpec& o : OptionTable()) {
        candidates.push_back("-" + o.name);
      }
    }
  }
  g_candidates = &candidates;
  return rl_completion_matches(text, NextCandidate);
}

}  // namespace

int RunInteractive(Shell& shell) {
  rl_attempted_completion_function = Complete;
  g_model = &shell.profile().model;
  shell.session().SetCancelFlag(&g_interrupted);
  rl_catch_signals = 0;
  struct sigaction sa {};
  sa.sa_handler = OnInterrupt;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGINT, &sa, nullptr);
  using_history();
  read_history(kHistoryFile);
  int status = kExitOk;
  while (!shell.quit_requested()) {
    g_in_readline = 1;
    char* raw = readline("tfprof> ");
    g_in_readline = 0;
    if (raw == nullptr) {  // Ctrl-D
      shell.out() << "\n";
      break;
    }
    std::string line(raw);
    std::free(raw);
    if (line.find_first_not_of(" \t") != std::string::npos) {
      add_history(line.c_str());
      // Saved after every line, so a crash loses nothing.
      write_history(kHistoryFile);
    }
    g_interrupted.store(false, std::memory_order_relaxed);
    absl::Status s = shell.RunLine(line);
    if (!s.ok()) shell.err() << "E: " << s.message() << "\n";
  }
  return status;
}

}  // namespace cli
}  // namespace tfprof
