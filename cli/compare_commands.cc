#include "cli/compare_commands.h"

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/command_util.h"
#include "cli/shell.h"
#include "profiler/advise/gates.h"
#include "profiler/advise/gates_report.h"
#include "profiler/render/pprof.h"
#include "profiler/render/render_diff.h"
#include "profiler/render/summary.h"
#include "profiler/views/flops.h"

namespace tfprof {
namespace cli {
namespace {

// The diff command's own arguments; the others are view options (`rest`).
struct DiffArgs {
  DiffOptions diff;
  size_t top = 10;  // diff top: changes listed
  std::string type = "stdout", outfile;
  std::vector<std::string> rest;
  std::set<std::string> given;  // the diff options given ("-map", ...)
};

// A diff option the table does not use is an error, not ignored: `what`
// is the table's usage.
absl::Status RefuseUnused(const DiffArgs& parsed,
                          std::initializer_list<const char*> unused,
                          const char* table, const char* what) {
  for (const char* name : unused) {
    if (!parsed.given.count(name)) continue;
    return absl::InvalidArgumentError(absl::StrCat(
        "diff ", table, " does not use ", name, " (usage: ", what, ")"));
  }
  return absl::OkStatus();
}

absl::Status ParseDiffArgs(const std::vector<std::string>& args,
                           DiffArgs* out) {
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a != "-map" && a != "-alpha" && a != "-significant_only" &&
        a != "-min_change" && a != "-output" && a != "-n") {
      out->rest.push_back(a);
      continue;
    }
    if (i + 1 >= args.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("diff: ", a, " needs a value"));
    }
    const std::string v = RestoreQuotedCommas(args[++i]);
    out->given.insert(a);
    if (a == "-n") {
      if (!absl::SimpleAtoi(v, &out->top) || out->top == 0) {
        return absl::InvalidArgumentError(
            "diff: -n wants a count of changes (1 or more)");
      }
    } else if (a != "-output") {
      absl::Status s = SetDiffOption(a.substr(1), v, "diff: -", &out->diff);
      if (!s.ok()) return s;
    } else {
      absl::Status s = ParseReportOutput(v, DiffOutputTypes(), "diff",
                                         &out->type, &out->outfile);
      if (!s.ok()) return s;
      if ((out->type == "file" || out->type == "pprof") &&
          out->outfile.empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat("diff: -output ", out->type, " needs :outfile=PATH"));
      }
    }
  }
  return absl::OkStatus();
}

// Conditions that -rank does not fit: a term against the base compares
// whole jobs. (EvaluateGates refuses -step with a verdict term.)
absl::Status CheckConditionsTake(const std::vector<Condition>& conditions,
                                 int64_t rank) {
  for (const Condition& c : conditions) {
    if (rank >= 0 && c.NeedsBase()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "check: '", c.text,
          "' compares with the base run, whole job with whole job; it does "
          "not take -rank"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckCommand(Shell& shell, const std::vector<std::string>& args) {
  int64_t step = shell.options().step;
  Options rank = shell.options();  // -rank N: that rank's files alone
  std::vector<Condition> conditions;
  std::string type = "stdout", outfile;
  GateBase base;
  bool inconclusive_passes = false;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--inconclusive=pass" || args[i] == "--inconclusive=fail") {
      inconclusive_passes = args[i] == "--inconclusive=pass";
      continue;
    }
    if (args[i] == "-step" || args[i] == "-output" || args[i] == "-alpha" ||
        args[i] == "-min_change" || args[i] == "-inconclusive" ||
        args[i] == "-rank") {
      if (i + 1 >= args.size()) {
        return absl::InvalidArgumentError(
            absl::StrCat("check: ", args[i], " needs a value"));
      }
      const std::string& v = args[++i];
      if (args[i - 1] == "-step" &&
          (!absl::SimpleAtoi(v, &step) || step < -1)) {
        return absl::InvalidArgumentError(
            absl::StrCat("check: -step needs a step number (or -1, every "
                         "step), not '",
                         v, "'"));
      }
      if (args[i - 1] == "-rank") {
        absl::Status s = ParseRankValue(v, "check", &rank.rank);
        if (!s.ok()) return s;
      }
      if (args[i - 1] == "-alpha" && (!absl::SimpleAtod(v, &base.alpha) ||
                                      !(base.alpha > 0) || base.alpha >= 1)) {
        return absl::InvalidArgumentError(
            "check: -alpha wants a false discovery rate in (0, 1)");
      }
      if (args[i - 1] == "-min_change") {
        absl::StatusOr<MinChange> m = ParseMinChange(v);
        if (!m.ok()) {
          return absl::InvalidArgumentError(
              absl::StrCat("check: -", m.status().message()));
        }
        base.min_change = *m;
      }
      if (args[i - 1] == "-inconclusive") {
        if (v != "pass" && v != "fail") {
          return absl::InvalidArgumentError(
              "check: -inconclusive wants pass or fail");
        }
        inconclusive_passes = v == "pass";
      }
      if (args[i - 1] == "-output") {
        static const std::vector<std::string> kTypes = {"stdout", "junit",
                                                        "markdown"};
        absl::Status s = ParseReportOutput(v, kTypes, "check", &type, &outfile);
        if (!s.ok()) return s;
      }
      continue;
    }
    absl::StatusOr<Condition> c = ParseCondition(args[i]);
    if (!c.ok()) return c.status();
    conditions.push_back(*c);
  }
  if (conditions.empty()) {
    return absl::InvalidArgumentError(
        "usage: check [-step N] [-rank N] [-alpha Q] [-min_change 2%,2us] "
        "[-inconclusive pass|fail] [-output "
        "stdout|junit|markdown[:outfile=PATH]] CONDITION ..., e.g. check "
        "'params<=1m' 'micros[.*Conv2D.*]<20ms' 'micros<=base*1.05' "
        "'regressed(micros)==0'");
  }
  absl::Status fits = CheckConditionsTake(conditions, rank.rank);
  if (!fits.ok()) return fits;
  absl::StatusOr<Session*> session = shell.SessionFor(rank);
  if (!session.ok()) return session.status();
  absl::StatusOr<std::vector<GateResult>> results = (*session)->Check(
      conditions, step, base, PeakOverrideOf(shell.options()));
  if (!results.ok()) return results.status();
  int failed = 0, open = 0;
  for (const GateResult& r : *results) {
    failed += r.passed || r.inconclusive ? 0 : 1;
    open += r.inconclusive ? 1 : 0;
  }
  if (type == "junit" || type == "markdown") {
    std::map<std::string, std::string> output;
    if (!outfile.empty()) output["outfile"] = outfile;
    const std::string report = type == "junit" ? RenderGatesJUnit(*results)
                                               : RenderGatesMarkdown(*results);
    absl::Status s = WriteOrPrint(shell, report, output, "check report");
    if (!s.ok()) return s;
  }
  // A report on standard output is the whole output (a CI summary file).
  if (type == "stdout" || !outfile.empty()) {
    for (const GateResult& r : *results) shell.out() << r.message << "\n";
  }
  if (failed > 0) {
    return absl::AbortedError(
        absl::StrCat(failed, " of ", results->size(), " checks failed"));
  }
  if (open > 0 && !inconclusive_passes) {
    // The exit status of an undecided gate (4): profile more steps.
    return absl::OutOfRangeError(absl::StrCat(
        open, " of ", results->size(),
        " checks inconclusive (none failed): profile more steps, or give "
        "check -inconclusive pass"));
  }
  return absl::OkStatus();
}

// diff VIEW [-map 'RE=>REWRITE']... [-alpha Q] [-min_change 2%,2us]
//      [-significant_only B] [-output
//      stdout|file|json|csv|markdown[:outfile=F]] [view options]; diff
//      steps|summary|top
absl::Status DiffCommand(Shell& shell, const std::vector<std::string>& args) {
  constexpr char kUsage[] =
      "usage: diff scope|graph|op|code|kernel|steps|summary|top [-map "
      "'RE=>REWRITE']... "
      "[-alpha Q] [-min_change 2%,2us] [-significant_only true] [-output "
      "stdout|json|csv|markdown[:outfile=PATH]|pprof:outfile=PATH] [view "
      "options]";
  absl::Status has_base = shell.session().CheckBase("diff");
  if (!has_base.ok()) return has_base;
  const bool steps = !args.empty() && args[0] == "steps";
  const bool summary = !args.empty() && args[0] == "summary";
  const bool top = !args.empty() && args[0] == "top";
  if (args.empty()) return absl::InvalidArgumentError(kUsage);
  ViewKind view = ViewKind::kScope;
  if (!steps && !summary && !top) {
    const std::optional<ViewKind> named = ViewNamed(args[0]);
    if (!named.has_value()) return absl::InvalidArgumentError(kUsage);
    view = *named;
  }
  // -n counts the top changes: asked of another table it is an error, not
  // ignored.
  if (!top && std::find(args.begin(), args.end(), "-n") != args.end()) {
    return absl::InvalidArgumentError(
        "diff: -n is diff top's (the changes listed); use diff top -n N");
  }
  DiffArgs parsed;
  absl::Status ok = ParseDiffArgs(args, &parsed);
  if (!ok.ok()) return ok;
  const DiffOptions& diff = parsed.diff;
  const std::string& type = parsed.type;
  const std::string& outfile = parsed.outfile;
  const std::vector<std::string>& rest = parsed.rest;
  std::map<std::string, std::string> output;
  if (!outfile.empty()) output["outfile"] = outfile;
  if (summary) {
    constexpr char kSummaryUsage[] =
        "diff summary [-output stdout|json[:outfile=PATH]]";
    absl::Status unused = RefuseUnused(
        parsed, {"-map", "-alpha", "-min_change", "-significant_only"},
        "summary", kSummaryUsage);
    if (!unused.ok()) return unused;
    if (!rest.empty() ||
        (type != "stdout" && type != "file" && type != "json")) {
      return absl::InvalidArgumentError(absl::StrCat("usage: ", kSummaryUsage));
    }
    const PeakOverride peaks = PeakOverrideOf(shell.options());
    absl::StatusOr<ProfileSummary> base = shell.session().BaseSummary(peaks);
    if (!base.ok()) return base.status();
    return WriteOrPrint(shell,
                        RenderSummaryDiff(*base, shell.session().Summary(peaks),
                                          type == "json"),
                        output, "diff");
  }
  if (steps) {
    constexpr char kStepsUsage[] =
        "diff steps [-alpha Q] [-min_change 2%,2us] [-output "
        "stdout|json|csv[:outfile=PATH]]";
    absl::Status unused = RefuseUnused(parsed, {"-map", "-significant_only"},
                                       "steps", kStepsUsage);
    if (!unused.ok()) return unused;
    if (!rest.empty() || type == "markdown" || type == "pprof") {
      return absl::InvalidArgumentError(absl::StrCat("usage: ", kStepsUsage));
    }
    absl::StatusOr<StepsDiff> d = shell.session().DiffStepTables(diff);
    if (!d.ok()) return d.status();
    return WriteOrPrint(shell, RenderStepsDiff(*d, type), output, "diff");
  }
  Options opts = shell.options();
  absl::Status s = ParseOptionTokens(rest, 0, &opts);
  if (!s.ok()) return s;
  if (top) {
    constexpr char kTopUsage[] =
        "diff top [-n N] [-map ...] [-alpha Q] [-min_change 2%,2us] [-output "
        "stdout|json[:outfile=PATH]] [view options]";
    absl::Status unused =
        RefuseUnused(parsed, {"-significant_only"}, "top", kTopUsage);
    if (!unused.ok()) return unused;
    if (type != "stdout" && type != "file" && type != "json") {
      return absl::InvalidArgumentError(absl::StrCat("usage: ", kTopUsage));
    }
    absl::StatusOr<DiffTop> t =
        shell.session().DiffTopChanges(opts, diff, parsed.top);
    if (!t.ok()) return t.status();
    return WriteOrPrint(shell, RenderDiffTop(*t, type == "json"), output,
                        "diff");
  }
  if (type == "pprof") {
    // Both sides' own results, the base's samples subtracted.
    absl::StatusOr<ResultTree> b = shell.session().base()->Query(view, opts);
    if (!b.ok()) return b.status();
    absl::StatusOr<ResultTree> c = shell.session().Query(view, opts);
    if (!c.ok()) return c.status();
    absl::StatusOr<perftools::profiles::Profile> profile =
        BuildDiffPprof(*b, *c);
    if (!profile.ok()) return profile.status();
    return WritePprofFile(
        *profile, outfile,
        EmitTarget{&shell.out(), &shell.err(), shell.input_files()});
  }
  absl::StatusOr<DiffTree> tree = shell.session().Diff(view, opts, diff);
  if (!tree.ok()) return tree.status();
  for (const std::string& n : tree->notes) shell.err() << "note: " << n << "\n";
  return WriteOrPrint(shell, RenderDiff(*tree, type), output, "diff");
}

// base FILE[,FILE...] | base -INPUT_FLAG PATH ... | base none
absl::Status BaseCommand(Shell& shell, const std::vector<std::string>& args) {
  constexpr char kUsage[] =
      "usage: base FILE[,FILE...] | base -profile_path F | base -trace_path "
      "F,... | base -graph_path G -run_meta_path R,... [-op_log_path O] | "
      "base none";
  if (args.size() == 1 && args[0] == "none") {
    shell.SetBase(nullptr, InputPaths());
    shell.err() << "base dropped\n";
    return absl::OkStatus();
  }
  InputPaths in;
  if (args.size() == 1) {
    // Traces (known by their content, as --trace_path knows them), else a
    // ProfileProto.
    const std::string first =
        SplitList(args[0]).empty() ? std::string() : SplitList(args[0]).front();
    const bool trace = TraceFormatOfFile(first).ok();
    (trace ? in.trace_path : in.profile_path) = args[0];
  } else {
    if (args.empty() || args.size() % 2 != 0) {
      return absl::InvalidArgumentError(kUsage);
    }
    for (size_t i = 0; i < args.size(); i += 2) {
      std::string InputPaths::*field =
          args[i] == "-profile_path"      ? &InputPaths::profile_path
          : args[i] == "-trace_path"      ? &InputPaths::trace_path
          : args[i] == "-graph_path"      ? &InputPaths::graph_path
          : args[i] == "-run_meta_path"   ? &InputPaths::run_meta_path
          : args[i] == "-op_log_path"     ? &InputPaths::op_log_path
          : args[i] == "-checkpoint_path" ? &InputPaths::checkpoint_path
                                          : nullptr;
      if (field == nullptr) return absl::InvalidArgumentError(kUsage);
      in.*field = args[i + 1];
    }
  }
  absl::Status ok = CheckInputCombination(in);
  if (!ok.ok()) return absl::InvalidArgumentError(ok.message());
  absl::StatusOr<std::unique_ptr<LoadedProfile>> loaded = LoadProfile(in);
  if (!loaded.ok()) {
    // A file that does not load is an input error (exit 1, as the
    // --base_ flags' own), not a usage error.
    return loaded.status().code() == absl::StatusCode::kInvalidArgument
               ? absl::DataLossError(loaded.status().message())
               : loaded.status();
  }
  const size_t steps = (*loaded)->model.steps().size();
  shell.err() << "base: " << (*loaded)->model.size() << " nodes, " << steps
              << (steps == 1 ? " step\n" : " steps\n");
  shell.SetBase(std::move(*loaded), std::move(in));
  return absl::OkStatus();
}

}  // namespace cli
}  // namespace tfprof
