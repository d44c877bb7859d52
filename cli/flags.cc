#include "cli/flags.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "cli/shell.h"
#include "profiler/web/api.h"

namespace tfprof {
namespace cli {
namespace {

struct InputFlag {
  const char* name;
  std::string InputPaths::*field;
  const char* help;
};

const std::vector<InputFlag>& InputFlags() {
  static const std::vector<InputFlag> flags = {
      {"profile_path", &InputPaths::profile_path,
       "A ProfileProto file (as written by ProfileContext or "
       "Profiler.serialize_to_string)."},
      {"graph_path", &InputPaths::graph_path,
       "A GraphDef, text or binary (not needed for eager profiles)."},
      {"run_meta_path", &InputPaths::run_meta_path,
       "Comma-separated RunMetadata files, binary or text; the n-th file is "
       "step n."},
      {"op_log_path", &InputPaths::op_log_path,
       "An OpLogProto with float ops, op types and Python call stacks."},
      {"trace_path", &InputPaths::trace_path,
       "Comma-separated trace files: TensorFlow timelines (a file per "
       "step), PyTorch profiler (Kineto) traces, TF2/JAX .xplane.pb; .gz is "
       "read too."},
      {"checkpoint_path", &InputPaths::checkpoint_path,
       "A TensorFlow V2 checkpoint (prefix, or its .index file), for "
       "-select tensor_value."},
  };
  return flags;
}

// Input flags with this in front name the base run (--base_profile_path).
const std::string kBasePrefix = "base_";

std::vector<std::string> AllFlagNames() {
  std::vector<std::string> names = {"script", "keep_going", "help", "http"};
  for (const InputFlag& f : InputFlags()) {
    names.push_back(f.name);
    names.push_back(kBasePrefix + f.name);
  }
  for (const OptionSpec& o : OptionTable()) names.push_back(o.name);
  return names;
}

// A file flag given with no file (--profile_path= from an unset variable)
// is a mistake, not the flag left out.
absl::Status EmptyFlag(const std::string& name) {
  const char* what = name == "http" ? "an address" : "a file";
  const char* value = name == "http" ? "ADDRESS" : "FILE";
  return absl::InvalidArgumentError(
      absl::StrCat("flag --", name, " is empty: give ", what, " (--", name, "=",
                   value, "), or leave the flag out"));
}

}  // namespace

absl::StatusOr<Flags> ParseFlags(const std::vector<std::string>& args) {
  Flags flags;
  size_t i = 0;
  for (; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (!absl::StartsWith(arg, "--") || arg == "--") {
      if (arg == "--") ++i;
      break;
    }
    std::string name = arg.substr(2);
    std::string value;
    bool has_value = false;
    const size_t eq = name.find('=');
    if (eq != std::string::npos) {
      value = name.substr(eq + 1);
      name.resize(eq);
      has_value = true;
    }
    auto take_value = [&]() -> absl::Status {
      if (has_value) return absl::OkStatus();
      if (i + 1 >= args.size()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "flag --", name, " needs a value (--", name, "=VALUE)"));
      }
      value = args[++i];
      return absl::OkStatus();
    };
    if (name == "help") {
      flags.help = true;
      continue;
    }
    if (name == "keep_going") {
      flags.keep_going = !has_value || value == "true" || value == "1";
      continue;
    }
    if (name == "script" || name == "http") {
      absl::Status s = take_value();
      if (!s.ok()) return s;
      if (value.empty()) return EmptyFlag(name);
      (name == "script" ? flags.script : flags.http) = value;
      continue;
    }
    bool matched = false;
    const bool base = absl::StartsWith(name, kBasePrefix);
    const std::string input = base ? name.substr(kBasePrefix.size()) : name;
    for (const InputFlag& f : InputFlags()) {
      if (input == f.name) {
        absl::Status s = take_value();
        if (!s.ok()) return s;
        if (value.empty()) return EmptyFlag(name);
        (base ? flags.base_inputs : flags.inputs).*(f.field) = value;
        matched = true;
        break;
      }
    }
    if (matched) continue;
    const OptionSpec* spec = FindOption(name);
    if (spec == nullptr) {
      const std::string best = ClosestWord(name, AllFlagNames(), 3);
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown flag --", name,
          best.empty() ? "" : absl::StrCat(" (did you mean --", best, "?)"),
          "; see --help"));
    }
    if (spec->kind == OptionKind::kBool && !has_value) {
      value = "true";
    } else {
      absl::Status s = take_value();
      if (!s.ok()) return s;
    }
    absl::Status s = SetOption(name, value, &flags.options);
    if (!s.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("flag --", name, ": ", s.message()));
    }
  }
  flags.command.assign(args.begin() + static_cast<long>(i), args.end());
  return flags;
}

std::string InputFlagsText(const InputPaths& inputs,
                           const std::string& prefix) {
  std::string out;
  for (const InputFlag& f : InputFlags()) {
    const std::string& value = inputs.*(f.field);
    if (value.empty()) continue;
    absl::StrAppend(&out, out.empty() ? "" : " ",
                    ShellQuote(absl::StrCat("--", prefix, f.name, "=", value)));
  }
  return out;
}

std::string FlagsUsage() {
  std::string out =
      "usage: tfprof --profile_path=FILE [flags] [command [-option value "
      "...]]\n"
      "       tfprof --graph_path=FILE --run_meta_path=F0,F1,... "
      "[--op_log_path=FILE] [--checkpoint_path=PREFIX] [flags] [command ...]\n"
      "\n"
      "Without a command, tfprof prints a summary and opens the tfprof> shell "
      "(on a terminal),\nor runs the commands it reads from standard input. "
      "A command runs once and tfprof exits\n(`tfprof help COMMAND` shows "
      "one command's arguments).\n\nCommands:\n";
  for (const CommandSpec& c : Commands()) {
    absl::StrAppendFormat(&out, "  %-28s %s\n", c.name, c.help);
  }
  out += "\nInput flags:\n";
  for (const InputFlag& f : InputFlags()) {
    absl::StrAppendFormat(&out, "  --%-26s %s\n", std::string(f.name) + "=",
                          f.help);
  }
  absl::StrAppendFormat(
      &out, "  --%-26s %s\n", "base_<input flag>=",
      "The same inputs for a base run to compare with (--base_profile_path, "
      "--base_trace_path, ...): the diff command, and check terms with "
      "'base'.");
  out += "\nScript flags:\n";
  absl::StrAppendFormat(&out, "  --%-26s %s\n", "script=FILE",
                        "Run the commands in FILE, one per line ('#' starts "
                        "a comment where it begins a word outside quotes); "
                        "stop at the first error.");
  absl::StrAppendFormat(&out, "  --%-26s %s\n", "keep_going",
                        "With --script or standard input: go on after a "
                        "failing command (the exit status still reports "
                        "it).");
  absl::StrAppendFormat(
      &out, "  --%-26s %s\n", "http=[HOST:]PORT",
      "Serve the web UI (every view, flame graphs, steps, timelines, diff, "
      "advise) and its JSON API until Ctrl-C; HOST defaults to 127.0.0.1, "
      "port 0 picks a free one.");
  out +=
      "\nView options (defaults for every command; also typed after a "
      "command as -name value):\n";
  for (const OptionSpec& o : OptionTable()) {
    absl::StrAppendFormat(&out, "  --%-26s %s (default: %s)\n", o.name + "=",
                          o.help,
                          o.default_text.empty() ? "none" : o.default_text);
  }
  out +=
      "\nExit status: 0 success, 1 load or run-time error, 2 usage error, 3 a "
      "'check' gate failed, 4 a 'check' verdict term was inconclusive and "
      "none failed.\n";
  return out;
}

}  // namespace cli
}  // namespace tfprof
