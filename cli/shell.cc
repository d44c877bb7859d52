#include "cli/shell.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "cli/command_util.h"
#include "cli/compare_commands.h"
#include "cli/http_command.h"
#include "cli/ranks_command.h"
#include "profiler/advise/advisor.h"
#include "profiler/advise/gates.h"
#include "profiler/advise/gates_report.h"
#include "profiler/base/file.h"
#include "profiler/base/large_stack.h"
#include "profiler/render/emit.h"
#include "profiler/render/pprof.h"
#include "profiler/render/render_diff.h"
#include "profiler/render/render_memory.h"
#include "profiler/render/render_steps.h"
#include "profiler/render/step_timeline.h"
#include "profiler/render/summary.h"
#include "profiler/views/flops.h"

namespace tfprof {
namespace cli {
namespace {

absl::Status ViewCommand(ViewKind v, Shell& shell,
                         const std::vector<std::string>& args) {
  return shell.RunView(v, args);
}

absl::Status SetCommand(Shell& shell, const std::vector<std::string>& args) {
  Options next = shell.options();
  absl::Status s = ParseOptionTokens(args, 0, &next);
  if (!s.ok()) return s;
  s = ValidateOptions(next);
  if (!s.ok()) return s;
  shell.options() = std::move(next);
  return absl::OkStatus();
}

absl::Status HelpCommand(Shell& shell, const std::vector<std::string>& args) {
  absl::StatusOr<std::string> text = Help(args, shell.options());
  if (!text.ok()) return text.status();
  shell.out() << *text;
  return absl::OkStatus();
}

absl::Status AdviseCommand(Shell& shell, const std::vector<std::string>& args) {
  // advise [-checker NAME|all | -checkers A,B]... [-OPTION VALUE]...: each
  // option goes to every chosen checker that declares it.
  std::vector<std::string> names;
  std::vector<std::pair<std::string, std::string>> opts;
  for (size_t i = 0; i < args.size(); i += 2) {
    if (args[i].size() < 2 || args[i][0] != '-' || i + 1 >= args.size()) {
      return absl::InvalidArgumentError(
          "usage: advise [-checker NAME|all]... [-checkers A,B] [-OPTION "
          "VALUE]... (e.g. -top 5, -threshold 0.3)");
    }
    const std::string key = args[i].substr(1);
    if (key == "checker" || key == "checkers") {
      for (const std::string& c : SplitList(args[i + 1])) names.push_back(c);
    } else {
      opts.emplace_back(key, args[i + 1]);
    }
  }
  tfpb::AdvisorOptionsProto options;
  const ProfileSource source = shell.profile().model.source();
  if (names.empty()) {
    options = DefaultAdvisorOptions(source);
  } else {
    for (const std::string& c : names) {
      if (c == "all") {
        options.MergeFrom(AllAdvisorOptions());
      } else {
        (*options.mutable_checkers())[c];
      }
    }
  }
  for (const auto& [key, value] : opts) {
    bool taken = false;
    std::set<std::string> known;
    for (auto& [name, checker_options] : *options.mutable_checkers()) {
      const Checker* c = FindChecker(name);
      if (c == nullptr) continue;  // reported by Advise
      for (const CheckerOption& o : c->options()) {
        known.insert("-" + o.name);
        if (o.name == key) {
          (*checker_options.mutable_options())[key] = value;
          taken = true;
        }
      }
    }
    if (!taken) {
      return absl::InvalidArgumentError(absl::StrCat(
          "advise: no chosen checker takes -", key,
          known.empty()
              ? std::string(" (they take no options)")
              : absl::StrCat(" (options: ", absl::StrJoin(known, ", "), ")")));
    }
  }
  std::vector<std::string> notes;
  if (names.empty()) {
    std::vector<std::string> more;
    for (const Checker* c : Checkers()) {
      if (!c->by_default(source)) more.push_back(c->name());
    }
    notes.push_back(absl::StrCat("more checkers: advise -checker all (",
                                 absl::StrJoin(more, ", "), ")"));
  }
  absl::StatusOr<Session*> session = shell.SessionFor(shell.options());
  if (!session.ok()) return session.status();
  absl::StatusOr<tfpb::AdviceProto> advice =
      (*session)->Advise(options, &notes, PeakOverrideOf(shell.options()));
  if (!advice.ok()) return advice.status();
  for (const std::string& n : notes) shell.err() << "note: " << n << "\n";
  shell.out() << RenderAdvice(*advice);
  return absl::OkStatus();
}

absl::Status TimelineCommand(Shell& shell,
                             const std::vector<std::string>& args) {
  int64_t step = -1;
  std::string outfile, step_option;  // -step or -steps, whichever was given
  StepTimelineOptions opts;
  Options rank = shell.options();  // -rank N: that rank's events
  auto parse_bool = [](const std::string& v, bool* out) {
    if (v == "true" || v == "1" || v == "yes") {
      *out = true;
    } else if (v == "false" || v == "0" || v == "no") {
      *out = false;
    } else {
      return false;
    }
    return true;
  };
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (i + 1 >= args.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("timeline: option ", a, " needs a value"));
    }
    const std::string& v = args[++i];
    bool ok = true;
    if (a == "-step" || a == "-steps") {
      if (!step_option.empty() && step_option != a) {
        return absl::InvalidArgumentError(
            "timeline: -step and -steps cannot be given together (-steps A-B "
            "draws the steps A to B, -step N one step)");
      }
      step_option = a;
      ok = a == "-step" ? absl::SimpleAtoi(v, &step) && step >= 0
                        : ParseStepRange(v, &step, &opts.last_step);
    } else if (a == "-outfile") {
      outfile = v;
    } else if (a == "-rank") {
      absl::Status s = ParseRankValue(v, "timeline", &rank.rank);
      if (!s.ok()) return s;
    } else if (a == "-output") {
      // As the views take it: timeline[:outfile=PATH].
      ok = absl::StartsWith(v, "timeline") &&
           (v.size() == 8 || absl::StartsWith(v, "timeline:outfile="));
      if (ok && v.size() > 8) outfile = v.substr(17);
    } else if (a == "-show_dataflow") {
      ok = parse_bool(v, &opts.show_dataflow);
    } else if (a == "-show_memory") {
      ok = parse_bool(v, &opts.show_memory);
    } else if (a == "-op_time") {
      ok = v == "schedule" || v == "gpu" || v == "all";
      opts.op_time = v;
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "timeline: unknown option ", a,
          " (options: -step, -steps, -outfile, -output timeline[:outfile=F], "
          "-rank, -show_dataflow, -show_memory, -op_time)"));
    }
    if (!ok) {
      return absl::InvalidArgumentError(
          absl::StrCat("timeline: invalid value '", v, "' for ", a,
                       a == "-steps"    ? " (A-B with 0 <= A <= B, or N)"
                       : a == "-output" ? " (timeline or timeline:outfile=PATH)"
                                        : ""));
    }
  }
  absl::StatusOr<Session*> session = shell.SessionFor(rank);
  if (!session.ok()) return session.status();
  absl::StatusOr<Session::SourcedTimeline> timeline =
      (*session)->StepTimelineOf(step, opts, shell.options());
  if (!timeline.ok()) return timeline.status();
  const StepTimeline& t = timeline->timeline;
  const std::string steps = t.last_step > t.step
                                ? absl::StrCat(t.step, "-", t.last_step)
                                : absl::StrCat(t.step);
  if (outfile.empty()) outfile = absl::StrCat("timeline-", steps, ".json");
  absl::Status s = WriteFileAtomic(outfile, t.json, shell.input_files());
  if (!s.ok()) return s;
  shell.out() << "Timeline of step" << (t.last_step > t.step ? "s " : " ")
              << steps
              << (t.trace_events                     ? " (the trace's events)"
                  : timeline->source == "graph view" ? " (its graph view)"
                                                     : "")
              << " written to " << outfile
              << "; open it in chrome://tracing or ui.perfetto.dev\n";
  return absl::OkStatus();
}

// The options of a command that is not a view: view options typed after it
// apply to it alone (-rank N, -peak_flops X, ...), as after a view; -output,
// when typed, is returned in *type and *output for the command to check.
absl::StatusOr<Options> CommandOptions(
    Shell& shell, const std::vector<std::string>& args, OutputKind* type,
    std::map<std::string, std::string>* output) {
  Options opts = shell.options();
  opts.output_type = OutputKind::kStdout;
  opts.output_options.clear();
  absl::Status s = ParseOptionTokens(args, 0, &opts);
  if (!s.ok()) return s;
  s = ValidateOptions(opts);
  if (!s.ok()) return s;
  *type = opts.output_type;
  *output = opts.output_options;
  return opts;
}

absl::Status SummaryCommand(Shell& shell,
                            const std::vector<std::string>& args) {
  OutputKind type = OutputKind::kStdout;
  std::map<std::string, std::string> output;
  // The summary covers every step: a step asked of it alone is an error,
  // not a whole-run answer that looks like the step's.
  if (std::find(args.begin(), args.end(), "-step") != args.end()) {
    return absl::InvalidArgumentError(
        "summary: -step is not available here (the summary covers every "
        "step; 'steps -step N' shows one)");
  }
  absl::StatusOr<Options> opts = CommandOptions(shell, args, &type, &output);
  if (!opts.ok()) return opts.status();
  if ((type != OutputKind::kStdout && type != OutputKind::kJson) ||
      !output.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "summary: -output ", OutputKindName(type), output.empty() ? "" : ":...",
        " is not available here; use stdout or json"));
  }
  absl::StatusOr<Session*> session = shell.SessionFor(*opts);
  if (!session.ok()) return session.status();
  const ProfileSummary s = (*session)->Summary(PeakOverrideOf(*opts));
  shell.out() << (type == OutputKind::kJson
                      ? RenderSummaryJson(s)
                      : RenderSummary(s, &(*session)->profile()));
  return absl::OkStatus();
}

// steps [-step N] [-output
// stdout|file:outfile=F|csv[:outfile=F]|json[:outfile=F]]
absl::Status StepsCommand(Shell& shell, const std::vector<std::string>& args) {
  OutputKind type = OutputKind::kStdout;
  std::map<std::string, std::string> output;
  absl::StatusOr<Options> opts = CommandOptions(shell, args, &type, &output);
  if (!opts.ok()) return opts.status();
  if (type != OutputKind::kStdout && type != OutputKind::kFile &&
      type != OutputKind::kCsv && type != OutputKind::kJson) {
    return absl::InvalidArgumentError(
        absl::StrCat("steps: -output ", OutputKindName(type),
                     " is not available here; use stdout, file, csv or json"));
  }
  absl::StatusOr<Session*> session = shell.SessionFor(*opts);
  if (!session.ok()) return session.status();
  absl::StatusOr<StepTable> steps =
      (*session)->Steps(opts->step, PeakOverrideOf(*opts));
  if (!steps.ok()) return steps.status();
  const StepTable& table = *steps;
  const std::string text = type == OutputKind::kCsv    ? RenderStepsCsv(table)
                           : type == OutputKind::kJson ? RenderStepsJson(table)
                                                       : RenderStepsText(table);
  return WriteOrPrint(shell, text, output, "steps");
}

// memory [-top N] [-rank N] [-output stdout|file:outfile=F|csv[:outfile=F]|
// timeline:outfile=F]
absl::Status MemoryCommand(Shell& shell, const std::vector<std::string>& args) {
  constexpr char kUsage[] =
      "usage: memory [-top N] [-rank N] [-output "
      "stdout|file:outfile=PATH|csv|timeline:outfile=PATH]";
  int64_t top = 10;
  Options rank = shell.options();  // -rank N: that rank's memory
  OutputKind type = OutputKind::kStdout;
  std::map<std::string, std::string> output;
  for (size_t i = 0; i < args.size(); i += 2) {
    if (i + 1 >= args.size()) return absl::InvalidArgumentError(kUsage);
    if (args[i] == "-top") {
      if (!absl::SimpleAtoi(args[i + 1], &top) || top < 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "memory: -top wants a count >= 0, not '", args[i + 1], "'"));
      }
    } else if (args[i] == "-rank") {
      absl::Status s = ParseRankValue(args[i + 1], "memory", &rank.rank);
      if (!s.ok()) return s;
    } else if (args[i] == "-output") {
      absl::Status s = ParseOutput(args[i + 1], &type, &output);
      if (!s.ok()) return s;
      if (type != OutputKind::kStdout && type != OutputKind::kFile &&
          type != OutputKind::kCsv && type != OutputKind::kTimeline) {
        return absl::InvalidArgumentError(absl::StrCat(
            "memory: -output ", OutputKindName(type),
            " is not available here; use stdout, file, csv or timeline"));
      }
    } else {
      return absl::InvalidArgumentError(kUsage);
    }
  }
  absl::StatusOr<Session*> session = shell.SessionFor(rank);
  if (!session.ok()) return session.status();
  const Model& model = (*session)->model();
  if (type == OutputKind::kCsv) {
    return WriteOrPrint(shell, RenderMemoryCsv(model), output, "memory events");
  }
  if (type == OutputKind::kTimeline) {
    if (model.activity().memory().empty()) {
      return absl::FailedPreconditionError(
          "memory: nothing to draw: this profile has no allocator events");
    }
    return WriteOrPrint(shell, RenderMemoryTimeline(model), output,
                        "memory timeline (open it in ui.perfetto.dev)");
  }
  return WriteOrPrint(shell,
                      RenderMemoryText(model, (*session)->MemoryPeaks(), top),
                      output, "memory report");
}

absl::Status SaveCommand(Shell& shell, const std::vector<std::string>& args) {
  if (args.size() != 1) {
    return absl::InvalidArgumentError("usage: save PATH");
  }
  const std::string bytes = shell.profile().model.SerializedProfileProto();
  absl::Status s = WriteFileAtomic(args[0], bytes, shell.input_files());
  if (!s.ok()) return s;
  shell.err() << "profile written to " << args[0] << " (" << bytes.size()
              << " bytes); load it with --profile_path\n";
  const Activity& a = shell.profile().model.activity();
  if (!a.work().empty() || !a.host().empty()) {
    shell.err() << "note: a ProfileProto keeps the nodes' statistics only: "
                   "this trace's kernels, step markers, host events and "
                   "memory samples are not in it (steps, kernel, timeline "
                   "and memory need the trace)\n";
  }
  return absl::OkStatus();
}

absl::Status TimingCommand(Shell& shell, const std::vector<std::string>& args) {
  if (args.size() != 1 || (args[0] != "on" && args[0] != "off")) {
    return absl::InvalidArgumentError("usage: timing on|off");
  }
  shell.set_timing(args[0] == "on");
  return absl::OkStatus();
}

absl::Status QuitCommand(Shell& shell, const std::vector<std::string>&) {
  shell.RequestQuit();
  return absl::OkStatus();
}

}  // namespace

const std::vector<CommandSpec>& Commands() {
  static const std::vector<CommandSpec> commands = {
      {"scope", "[-option value ...]",
       "Tree of nodes by name scope (a/b/c), with totals per scope.",
       [](Shell& s, const std::vector<std::string>& a) {
         return ViewCommand(ViewKind::kScope, s, a);
       }},
      {"graph", "[-option value ...]",
       "Tree along the dataflow, from the graph's outputs to their inputs.",
       [](Shell& s, const std::vector<std::string>& a) {
         return ViewCommand(ViewKind::kGraph, s, a);
       }},
      {"op", "[-option value ...]",
       "Flat list of operation types (MatMul, Conv2D, ...) with cumulative "
       "totals.",
       [](Shell& s, const std::vector<std::string>& a) {
         return ViewCommand(ViewKind::kOp, s, a);
       }},
      {"kernel", "[-option value ...]",
       "Flat list of accelerator kernels by name (traces), with launches, "
       "min/avg/max duration and the ops that launched them.",
       [](Shell& s, const std::vector<std::string>& a) {
         return ViewCommand(ViewKind::kKernel, s, a);
       }},
      {"code", "[-option value ...]",
       "Tree of the Python source lines that built the graph (needs call "
       "stacks).",
       [](Shell& s, const std::vector<std::string>& a) {
         return ViewCommand(ViewKind::kCode, s, a);
       }},
      {"advise", "[-checker NAME|all]... [-top N] [-threshold X] [-OPTION V]",
       "Run tfprof's checkers, or those named (-checker all: every one), and "
       "print what they found.",
       AdviseCommand},
      {"timeline",
       "[-step N | -steps A-B] [-outfile PATH | -output timeline:outfile=PATH] "
       "[-rank N] [-show_dataflow B] "
       "[-show_memory B] [-op_time schedule|gpu|all]",
       "Write one step's Chrome trace as TensorFlow's ProfilerHook does "
       "(timeline-<step>.json); for a trace, its own events of the step, or "
       "with -steps A-B those of the steps A to B on one clock from step A's "
       "start (timeline-A-B.json).",
       TimelineCommand},
      {"check",
       "[-step N] [-rank N] [-alpha Q] [-min_change 2%,2us] [-inconclusive "
       "pass|fail] [-output stdout|junit|markdown[:outfile=PATH]] "
       "CONDITION ...",
       "Gate for CI: check thresholds like 'params<=1m', "
       "'micros[.*Conv.*]<20ms' or, against the base run, "
       "'micros<=base*1.05' and 'regressed(micros)==0'; exit status 3 if "
       "any fails, 4 if a verdict term is inconclusive and none failed.",
       CheckCommand},
      {"diff",
       "scope|graph|op|code|kernel|steps|summary|top [-map 'RE=>REWRITE']... "
       "[-alpha Q] [-min_change 2%,2us] [-n N] "
       "[-significant_only B] [-output stdout|json|csv|markdown[:outfile=F]|"
       "pprof:outfile=F] [view options]",
       "Compare a view with the base run: each row's base, current, change, "
       "its interval per step and a verdict (regressed, improved, unchanged "
       "or inconclusive); cost shifts; 'diff top' lists the largest.",
       DiffCommand},
      {"base", "FILE[,FILE...] | -INPUT_FLAG PATH ... | none",
       "Load (or drop) the base run that diff compares with.", BaseCommand},
      {"set", "-option value ...",
       "Change options for all later commands (options typed after a view "
       "command apply to that command only).",
       SetCommand},
      {"summary", "[-output json] [-rank N] [-peak_flops X]",
       "One-screen overview of the loaded profile: devices, time per step, "
       "memory.",
       SummaryCommand},
      {"steps",
       "[-step N] [-output stdout|file:outfile=PATH|csv|json] [-rank N] "
       "[-peak_flops X]",
       "One row per step (-step N: that step's): wall time from the step's "
       "own markers, accelerator busy time (compute, memcpy), idle time, "
       "kernels and peak memory.",
       StepsCommand},
      {"ranks", "[-output stdout|csv|json|timeline[:outfile=PATH]] [-step N]",
       "Several ranks' traces as one job: each rank's clock offset, per rank "
       "and step the wall, compute, communication, wait and idle time, and "
       "the stragglers with what made them late; -output timeline: one step "
       "of every rank in one Chrome trace on the aligned clock.",
       RanksCommand},
      {"memory",
       "[-top N] [-rank N] "
       "[-output stdout|file:outfile=PATH|csv|timeline:outfile=PATH]",
       "Memory in use per allocator (traces): the peak, its step, and the "
       "largest allocations live then with their ops; every event as CSV or "
       "Chrome counter tracks.",
       MemoryCommand},
      {"save", "PATH",
       "Write the loaded profile as a ProfileProto (for --profile_path), "
       "maps in key order: the same profile gives the same bytes.",
       SaveCommand},
      {"http", "[[HOST:]PORT]",
       "Serve the web UI on this profile (and the base run) until Ctrl-C: "
       "views, flame graphs, steps, timelines, diff, advise (default "
       "127.0.0.1:8080).",
       HttpCommand},
      {"timing", "on|off", "Print how long each command takes.", TimingCommand},
      {"help", "[command|-option]", "Show help.", HelpCommand},
      {"quit", "", "Leave the shell (Ctrl-D works too).", QuitCommand},
  };
  return commands;
}

const CommandSpec* FindCommand(const std::string& name) {
  for (const CommandSpec& c : Commands()) {
    if (c.name == name) return &c;
  }
  if (name == "exit") return FindCommand("quit");
  return nullptr;
}

namespace {
const std::vector<std::string>& CommandNameList() {
  static const std::vector<std::string>* const names = [] {
    auto* v = new std::vector<std::string>();
    for (const CommandSpec& c : Commands()) v->push_back(c.name);
    return v;
  }();
  return *names;
}
}  // namespace

std::string SuggestCommand(const std::string& name) {
  return ClosestWord(name, CommandNameList(), 2);
}

std::string HelpText(const Options& current) {
  std::string out = "Commands:\n";
  for (const CommandSpec& c : Commands()) {
    absl::StrAppendFormat(&out, "  %-8s %s\n", c.name, c.help);
  }
  out +=
      "\nOptions (after a view command for that command only, or with 'set'"
      "):\n";
  for (const OptionSpec& o : OptionTable()) {
    absl::StrAppendFormat(&out, "  -%-26s %s\n", o.name, o.help);
  }
  out += "\nCurrent options:\n";
  out += OptionsToString(current);
  out +=
      "\nExample: scope -max_depth 3 -select micros,bytes -order_by micros\n"
      "An empty line prints the current options.\n";
  return out;
}

absl::StatusOr<std::string> Help(const std::vector<std::string>& topic,
                                 const Options& current) {
  if (topic.empty()) return HelpText(current);
  const CommandSpec* c = FindCommand(topic[0]);
  if (c != nullptr)
    return absl::StrCat(c->name, " ", c->usage, "\n  ", c->help, "\n");
  std::string name = topic[0];
  if (!name.empty() && name[0] == '-') name.erase(0, 1);
  const OptionSpec* o = FindOption(name);
  if (o == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("help: no command or option named '", topic[0], "'"));
  }
  std::string type;
  switch (o->kind) {
    case OptionKind::kInt:
      type = "integer";
      break;
    case OptionKind::kList:
      type = "comma-separated regexes (full match)";
      break;
    case OptionKind::kBool:
      type = "true or false";
      break;
    case OptionKind::kOrderBy:
      type = "one of " + absl::StrJoin(OrderByValues(), ", ");
      break;
    case OptionKind::kSelect:
      type = "comma-separated list of " + absl::StrJoin(SelectValues(), ", ");
      break;
    case OptionKind::kOutput:
      type = "TYPE[:key=value,...], TYPE one of " +
             absl::StrJoin(OutputTypes(), ", ");
      break;
    case OptionKind::kChoice:
      type = "one of " + absl::StrJoin(o->choices, ", ");
      break;
    case OptionKind::kNumber:
      type = "a number >= 0 (e.g. 989.4e12)";
      break;
  }
  return absl::StrCat(
      "-", o->name, ": ", o->help, "\n  value: ", type,
      "\n  default: ", o->default_text.empty() ? "(none)" : o->default_text,
      "\n");
}

std::string CommandNames() { return absl::StrJoin(CommandNameList(), ", "); }

absl::StatusOr<std::vector<std::string>> Tokenize(const std::string& line) {
  std::vector<std::string> words;
  std::string cur;
  bool in_word = false;
  char quote = 0;
  for (char ch : line) {
    if (quote != 0) {
      if (ch == quote) {
        quote = 0;
      } else {
        cur.push_back(ch == ',' ? kQuotedComma : ch);
      }
      continue;
    }
    if (ch == '\'' || ch == '"') {
      quote = ch;
      in_word = true;
    } else if (absl::ascii_isspace(static_cast<unsigned char>(ch))) {
      if (in_word) {
        words.push_back(cur);
        cur.clear();
        in_word = false;
      }
    } else {
      cur.push_back(ch);
      in_word = true;
    }
  }
  if (quote != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("unterminated quote ", std::string(1, quote)));
  }
  if (in_word) words.push_back(cur);
  return words;
}

Shell::Shell(std::unique_ptr<LoadedProfile> profile, InputPaths inputs,
             Options defaults, std::ostream* out, std::ostream* err)
    : session_(
          std::make_unique<Session>(std::move(profile), std::move(inputs))),
      options_(std::move(defaults)),
      out_(out),
      err_(err) {}

void Shell::SetBase(std::unique_ptr<LoadedProfile> base, InputPaths inputs) {
  session_->SetBase(base == nullptr ? nullptr
                                    : std::make_unique<Session>(
                                          std::move(base), std::move(inputs)));
}

absl::Status Shell::RunLine(const std::string& line) {
  absl::StatusOr<std::vector<std::string>> words = Tokenize(line);
  if (!words.ok()) return words.status();
  if (words->empty()) {
    *out_ << OptionsToString(options_);
    return absl::OkStatus();
  }
  const auto start = std::chrono::steady_clock::now();
  // Rendering deep result trees recurses too.
  absl::Status s;
  RunWithLargeStack([&] { s = RunCommand(*words); });
  if (timing_) {
    const double ms = std::chrono::duration<double, std::milli>(
                          std::chrono::steady_clock::now() - start)
                          .count();
    *err_ << absl::StrFormat("(%s took %.1f ms)\n", (*words)[0], ms);
  }
  return s;
}

absl::Status Shell::RunCommand(const std::vector<std::string>& words) {
  if (words.empty()) return absl::OkStatus();
  const CommandSpec* c = FindCommand(words[0]);
  if (c == nullptr) {
    const std::string hint = SuggestCommand(words[0]);
    return absl::InvalidArgumentError(absl::StrCat(
        "unknown command '", words[0], "'",
        hint.empty() ? "" : absl::StrCat(" (did you mean '", hint, "'?)"),
        "; type 'help' for the list"));
  }
  std::vector<std::string> args(words.begin() + 1, words.end());
  // Only view options give quoted commas a meaning (in lists); elsewhere
  // they are plain commas.
  const bool takes_options = c->name == "scope" || c->name == "graph" ||
                             c->name == "op" || c->name == "code" ||
                             c->name == "kernel" || c->name == "diff" ||
                             c->name == "set";
  if (!takes_options) {
    for (std::string& a : args) a = RestoreQuotedCommas(a);
  }
  return c->run(*this, args);
}

absl::Status Shell::RunView(ViewKind view,
                            const std::vector<std::string>& args) {
  Options opts = options_;
  absl::Status s = ParseOptionTokens(args, 0, &opts);
  if (!s.ok()) return s;
  absl::StatusOr<Session*> session = SessionFor(opts);
  if (!session.ok()) return session.status();
  return (*session)->Emit(view, opts, EmitTarget{out_, err_, input_files()});
}

absl::StatusOr<Session*> Shell::SessionFor(const Options& opts) {
  if (opts.rank < 0) return session_.get();
  return session_->ForRank(opts.rank);
}

}  // namespace cli
}  // namespace tfprof
