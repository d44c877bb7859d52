// The tfprof program end to end: flags, one-shot commands, scripts, exit
// codes and messages.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "cli/app.h"
#include "cli/shell.h"
#include "tests/cli_run.h"
#include "tests/corpus_util.h"
#include "tests/test_util.h"

namespace tfprof {
namespace {

using testing::Profile;
using testing::RunResult;
using testing::RunTfprof;

TEST_CASE("save says what a trace loses in a ProfileProto") {
  const std::string out = testing::TempDir() + "/saved.pb";
  RunResult t = RunTfprof(
      {"--trace_path=" +
           testing::CorpusFile(
               "pytorch-kineto/worker0.1623143089861.pt.trace.json.gz"),
       "save", out});
  CHECK(t.code == 0);
  CHECK(t.err.find("note: a ProfileProto keeps the nodes' statistics only") !=
        std::string::npos);
  RunResult p = RunTfprof({Profile(), "save", out});
  CHECK(p.code == 0);
  CHECK(p.err.find("note:") == std::string::npos);
}

// An unknown step is a run-time error (exit 1, as documented) in every
// command that takes -step; the summary, which covers every step, refuses
// -step as a usage error rather than answer for the whole run.
TEST_CASE("An unknown step exits 1 in every command") {
  for (std::vector<std::string> command :
       {std::vector<std::string>{"scope", "-step", "99"},
        {"steps", "-step", "99"},
        {"check", "-step", "99", "micros<1s"},
        {"timeline", "-step", "99"}}) {
    INFO(command[0]);
    command.insert(command.begin(), Profile());
    RunResult r = RunTfprof(command);
    CHECK(r.code == 1);
    CHECK(r.err.find("99") != std::string::npos);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  }
  RunResult r = RunTfprof({Profile(), "summary", "-step", "0"});
  CHECK(r.code == 2);
  CHECK(r.err.find("summary: -step is not available here") !=
        std::string::npos);
}

TEST_CASE("One-shot commands take flags and shell-style options") {
  RunResult a =
      RunTfprof({Profile(), "--max_depth=2", "--select=micros", "scope"});
  RunResult b = RunTfprof({Profile(), "scope", "-max_depth", "2"});
  CHECK(a.code == 0);
  CHECK(b.code == 0);
  const size_t pa = a.out.find("Profile:\n");
  REQUIRE(pa != std::string::npos);
  CHECK(a.out.substr(pa) == b.out.substr(b.out.find("Profile:\n")));
  CHECK(a.out.find("Doc:") != std::string::npos);
  CHECK(a.out.find("_TFProfRoot") != std::string::npos);
}

// The line of a report that starts with `key`.
std::string LineOf(const std::string& text, const std::string& key) {
  const size_t at = text.find("\n" + key);
  if (at == std::string::npos) return "";
  return text.substr(at + 1, text.find('\n', at + 1) - at - 1);
}

// summary, steps and advise read one rank with -rank N after the command
// or --rank=N before it, as the views do: the same lines as that rank's
// file loaded alone. Options they do not know are named.
TEST_CASE("summary steps and advise take -rank like the views") {
  const std::string dir =
      "--trace_path=" + testing::SourceDir() + "/testdata/ranks/ddp-gloo";
  const std::string one = dir + "/ddp2_rank1.pt.trace.json.gz";
  const RunResult alone = RunTfprof({one, "summary"});
  const RunResult after = RunTfprof({dir, "summary", "-rank", "1"});
  const RunResult before = RunTfprof({dir, "--rank=1", "summary"});
  const RunResult job = RunTfprof({dir, "summary"});
  REQUIRE(alone.code == 0);
  REQUIRE(after.code == 0);
  REQUIRE(before.code == 0);
  for (const char* key : {"time/step:", "devices:", "node time:"}) {
    INFO(key);
    CHECK(!LineOf(alone.out, key).empty());
    CHECK(LineOf(after.out, key) == LineOf(alone.out, key));
    CHECK(LineOf(before.out, key) == LineOf(alone.out, key));
  }
  CHECK(LineOf(job.out, "time/step:") != LineOf(alone.out, "time/step:"));
  const RunResult steps_alone = RunTfprof({one, "steps", "-output", "csv"});
  const RunResult steps_after =
      RunTfprof({dir, "steps", "-output", "csv", "-rank", "1"});
  CHECK(steps_after.code == 0);
  CHECK(steps_after.out == steps_alone.out);
  const RunResult advise_alone =
      RunTfprof({one, "advise", "-checker", "StepTimeChecker"});
  const RunResult advise_rank =
      RunTfprof({dir, "--rank=1", "advise", "-checker", "StepTimeChecker"});
  CHECK(advise_rank.code == 0);
  CHECK(advise_rank.out == advise_alone.out);
  const RunResult bad = RunTfprof({dir, "summary", "-max_dept", "2"});
  CHECK(bad.code != 0);
  CHECK(bad.err.find("-max_dept") != std::string::npos);
  const RunResult csv = RunTfprof({dir, "summary", "-output", "csv"});
  CHECK(csv.code != 0);
  CHECK(csv.err.find("summary: -output csv is not available") !=
        std::string::npos);
}

// check, memory and timeline read one rank too: the same gate lines and
// timeline as that rank's file loaded alone; gates against the base run
// compare whole jobs and refuse -rank.
TEST_CASE("check memory and timeline take -rank") {
  const std::string dir =
      "--trace_path=" + testing::SourceDir() + "/testdata/ranks/ddp-gloo";
  const std::string one = dir + "/ddp2_rank1.pt.trace.json.gz";
  const std::vector<std::string> gates = {
      "check", "micros[.*injected_delay.*]?<=1ms", "step_micros<=1s"};
  std::vector<std::string> alone_args = {one}, rank_args = {dir, "--rank=1"},
                           job_args = {dir};
  for (const std::string& g : gates) {
    alone_args.push_back(g);
    rank_args.push_back(g);
    job_args.push_back(g);
  }
  const RunResult alone = RunTfprof(alone_args);
  const RunResult rank = RunTfprof(rank_args);
  const RunResult job = RunTfprof(job_args);
  CHECK(alone.code == 3);  // the delay of rank 1 exceeds 1ms
  CHECK(rank.code == alone.code);
  CHECK(rank.out == alone.out);
  CHECK(job.out != alone.out);  // the job's figures are means per rank
  std::vector<std::string> after = job_args;
  after.insert(after.begin() + 2, {"-rank", "1"});
  CHECK(RunTfprof(after).out == alone.out);
  const RunResult base = RunTfprof(
      {dir, "--base_" + dir.substr(2), "check", "-rank", "1", "micros<=base"});
  CHECK(base.code != 0);
  CHECK(base.err.find("does not take -rank") != std::string::npos);
  // A verdict term judges every step: -step with it is refused, not
  // silently ignored.
  const RunResult stepped = RunTfprof({dir, "--base_" + dir.substr(2), "check",
                                       "-step", "3", "regressed(micros)==0"});
  CHECK(stepped.code == 2);
  CHECK(stepped.err.find("it does not take -step") != std::string::npos);
  // Too few steps for verdicts: that term is inconclusive (exit 4, JUnit's
  // skipped), the others are judged and the report is written.
  const std::string junit = testing::TempDir() + "/gates.xml";
  const RunResult few = RunTfprof(
      {"--profile_path=" +
           testing::CorpusFile("shiyudian-resnet-tf-dist/profile_100"),
       "--base_profile_path=" +
           testing::CorpusFile("shiyudian-resnet-tf-dist/profile_0"),
       "check", "-output", "junit:outfile=" + junit, "params<=base",
       "regressed(micros)==0"});
  CHECK(few.code == 4);
  CHECK(few.out.find("PASS params = ") != std::string::npos);
  CHECK(few.out.find("INCONCLUSIVE regressed(micros) = n/a (verdicts need 3 "
                     "or more steps on each side: base 1, current 12)") !=
        std::string::npos);
  CHECK(testing::ReadFile(junit).find("skipped=\"1\"") != std::string::npos);

  const std::string tmp = testing::TempDir();
  const std::string a = tmp + "/alone.json", r = tmp + "/rank.json";
  REQUIRE(RunTfprof({one, "timeline", "-step", "3", "-outfile", a}).code == 0);
  REQUIRE(
      RunTfprof({dir, "timeline", "-step", "3", "-rank", "1", "-outfile", r})
          .code == 0);
  CHECK(testing::ReadFile(a) == testing::ReadFile(r));
  const RunResult memory = RunTfprof({dir, "memory", "-rank", "1"});
  CHECK(memory.out == RunTfprof({one, "memory"}).out);
  CHECK(RunTfprof({dir, "memory", "-rank", "7"}).err.find("no such rank") !=
        std::string::npos);
}

// diff steps compares each side's steps table as `steps` shows it: a job of
// two ranks against one rank reads the job's slowest-rank walls and its
// means per rank (not the ranks' sums).
TEST_CASE("diff steps of a job reads its steps table") {
  const std::string dir = testing::SourceDir() + "/testdata/ranks/ddp-gloo";
  const RunResult steps = RunTfprof({"--trace_path=" + dir, "steps"});
  const RunResult diff =
      RunTfprof({"--trace_path=" + dir,
                 "--base_trace_path=" + dir + "/ddp2_rank0.pt.trace.json.gz",
                 "diff", "steps"});
  REQUIRE(steps.code == 0);
  REQUIRE(diff.code == 0);
  const std::string wall = LineOf(steps.out, "wall time per step:");
  const size_t at = wall.find("median ");
  REQUIRE(at != std::string::npos);
  const std::string median = wall.substr(at + 7, wall.find(',', at) - at - 7);
  CHECK(LineOf(diff.out, "wall:").find("-> " + median + " ") !=
        std::string::npos);
  // 173 kernels a step on each rank: the job's mean per rank is 173 too.
  CHECK(LineOf(diff.out, "kernels:").find("median 173 (5 steps) -> 173 ") !=
        std::string::npos);
}

// -n is diff top's count of changes: given to another diff it is a usage
// error (it was accepted and ignored).
TEST_CASE("diff -n belongs to diff top") {
  const std::string run =
      "--trace_path=" + testing::SourceDir() +
      "/testdata/ranks/ddp-gloo/ddp2_rank0.pt.trace.json.gz";
  const std::string base =
      "--base_trace_path=" + testing::SourceDir() +
      "/testdata/ranks/ddp-gloo/ddp2_rank1.pt.trace.json.gz";
  const RunResult op = RunTfprof({run, base, "diff", "op", "-n", "3"});
  CHECK(op.code == 2);
  CHECK(op.err.find("diff: -n is diff top's") != std::string::npos);
  CHECK(RunTfprof({run, base, "diff", "top", "-n", "3"}).code == 0);
}

// ranks -step N shows that step's rows, every rank's, and its straggler;
// a step no rank has is an error.
TEST_CASE("ranks -step shows one step") {
  const std::string dir =
      "--trace_path=" + testing::SourceDir() + "/testdata/ranks/ddp-gloo";
  const RunResult all = RunTfprof({dir, "ranks", "-output", "csv"});
  const RunResult one =
      RunTfprof({dir, "ranks", "-output", "csv", "-step", "3"});
  REQUIRE(all.code == 0);
  REQUIRE(one.code == 0);
  std::vector<std::string> want;
  for (absl::string_view line : absl::StrSplit(all.out, '\n')) {
    // (rows of rank steps: "rank,step,...": step 3's, as in the full table)
    const std::vector<std::string> f = absl::StrSplit(line, ',');
    if (f.size() > 4 && f[4] == "3") want.push_back(std::string(line));
  }
  REQUIRE(want.size() == 2);  // both ranks' step 3
  for (const std::string& line : want) {
    INFO(line);
    CHECK(one.out.find(line) != std::string::npos);
  }
  CHECK(one.out.size() < all.out.size());
  const RunResult text = RunTfprof({dir, "ranks", "-step", "3"});
  CHECK(text.out.find("step 3: rank 1 arrived") != std::string::npos);
  CHECK(text.out.find("step 5:") == std::string::npos);
  CHECK(RunTfprof({dir, "ranks", "-step", "9"}).code ==
        1);  // as -step elsewhere
}

// A GraphDef + RunMetadata run's graph timeline is tfprof's (scheduling
// and execution threads, memory tracks), as from a ProfileProto of it: its
// GPU streams' kernels do not make it a trace.
TEST_CASE("graph timeline of RunMetadata input has tfprof's layout") {
  const InputPaths in = testing::TfTestData();
  const std::string out = testing::TempDir() + "/graph";
  const RunResult r = RunTfprof(
      {"--graph_path=" + in.graph_path, "--run_meta_path=" + in.run_meta_path,
       "--op_log_path=" + in.op_log_path, "graph", "-step", "0", "-max_depth",
       "100", "-output", "timeline:outfile=" + out});
  REQUIRE(r.code == 0);
  const std::string json = testing::ReadFile(out + "_0");
  for (const char* process :
       {"Op scheduling threads: /job:localhost/replica:0/task:0/gpu:0",
        "Op execution threads: /gpu:0/stream:all",
        "mem usage on:/job:localhost/replica:0/task:0/gpu:0"}) {
    INFO(process);
    CHECK(json.find(process) != std::string::npos);
  }
  CHECK(json.find("\"Kernel\"") == std::string::npos);
}

// A trace's node names keep the events' "::" ("ProfilerStep/aten::mm"): a
// gate's regex is written with the names the views show.
TEST_CASE("check regexes match node names written with ::") {
  const std::string trace =
      "--trace_path=" +
      testing::CorpusFile(
          "pytorch-kineto/worker0.1623143089861.pt.trace.json.gz");
  const RunResult colons = RunTfprof(
      {trace, "check", "accelerator_micros[.*aten::cudnn_convolution.*]>0"});
  const RunResult dots = RunTfprof(
      {trace, "check", "accelerator_micros[.*aten..cudnn_convolution.*]>0"});
  const RunResult escaped = RunTfprof(
      {trace, "check", "accelerator_micros[.*aten\\.cudnn_convolution.*]>0"});
  REQUIRE(colons.code == 0);
  REQUIRE(dots.code == 0);
  auto value = [](const std::string& out) {
    const size_t at = out.find("] = ");
    return at == std::string::npos ? std::string()
                                   : out.substr(at, out.find('\n', at) - at);
  };
  CHECK(!value(colons.out).empty());
  CHECK(value(colons.out) == value(dots.out));
  CHECK(colons.out.find(" nodes)") != std::string::npos);
  // No node is named with a '.' for the "::".
  CHECK(escaped.out.find(" nodes)") == std::string::npos);
}

TEST_CASE("The account_type_regexes flag sets account types (bug fixed)") {
  RunResult all = RunTfprof({Profile(), "--select=micros", "op"});
  RunResult mm = RunTfprof(
      {Profile(), "--select=micros", "--account_type_regexes=MatMul", "op"});
  REQUIRE(all.code == 0);
  REQUIRE(mm.code == 0);
  CHECK(all.out.find("RandomStandardNormal") != std::string::npos);
  CHECK(mm.out.find("RandomStandardNormal") == std::string::npos);
  CHECK(mm.out.find("MatMul") != std::string::npos);
}

TEST_CASE("A bad web address names the flag, or the shell's command") {
  RunResult r = RunTfprof({Profile(), "--http=nonsense"});
  CHECK(r.code == 2);
  CHECK(r.err.find("tfprof: --http: 'nonsense' has no port number") !=
        std::string::npos);
  const std::string dir = testing::TempDir();
  testing::WriteFile(dir + "/http.tfprof", "http nonsense\n");
  r = RunTfprof({Profile(), "--script=" + dir + "/http.tfprof"});
  CHECK(r.code == 2);
  CHECK(r.err.find("http.tfprof:1: http: 'nonsense' has no port number") !=
        std::string::npos);
  CHECK(r.err.find("--http") == std::string::npos);
}

TEST_CASE("Scripts run line by line and stop at the first error") {
  const std::string dir = testing::TempDir();
  testing::WriteFile(dir + "/ok.tfprof",
                     "# a report\n\nset -max_depth 1\nscope\nop  # types\n");
  RunResult r = RunTfprof({Profile(), "--script=" + dir + "/ok.tfprof"});
  CHECK(r.code == 0);
  CHECK(r.out.find("node name | total execution time") != std::string::npos);
  testing::WriteFile(dir + "/bad.tfprof", "scope\nscope -max_depth x\nop\n");
  r = RunTfprof({Profile(), "--script=" + dir + "/bad.tfprof"});
  CHECK(r.code == 2);
  CHECK(r.err.find("bad.tfprof:2:") != std::string::npos);
  CHECK(r.out.find("op: ") == std::string::npos);  // stopped before 'op'
  r = RunTfprof({Profile(), "--keep_going", "--script=" + dir + "/bad.tfprof"});
  CHECK(r.code == 2);
  CHECK(r.out.find("op: ") != std::string::npos);
  // Saved by a Windows editor: a byte order mark, CRLF line ends.
  testing::WriteFile(dir + "/bom.tfprof", "\xEF\xBB\xBFscope\r\nop\r\n");
  r = RunTfprof({Profile(), "--script=" + dir + "/bom.tfprof"});
  CHECK(r.code == 0);
  CHECK(r.err.empty());
  CHECK(r.out.find("op: ") != std::string::npos);
}

TEST_CASE("A script's '#' starts a comment only where it begins a word") {
  CHECK(cli::StripScriptComment("op # types") == "op ");
  CHECK(cli::StripScriptComment("# all") == "");
  CHECK(cli::StripScriptComment("diff op -map 'a#b=>c' #x") ==
        "diff op -map 'a#b=>c' ");
  CHECK(cli::StripScriptComment("diff op -map a#b=>c") ==
        "diff op -map a#b=>c");
  CHECK(cli::StripScriptComment("check \"x # y\"\t# z") == "check \"x # y\"\t");
  // A -map rule with '#' in a script line, quoted and not: the op type
  // ProfilerStep becomes Step#X on both sides.
  const std::string trace = testing::CorpusFile(
      "pytorch-kineto/worker0.1623143089861.pt.trace.json.gz");
  const std::string dir = testing::TempDir();
  testing::WriteFile(dir + "/map.tfprof",
                     "diff op -max_depth 100 -map 'ProfilerStep#?=>Step#X'  "
                     "# quoted\n"
                     "diff op -max_depth 100 -map ProfilerStep#?=>Step#Y\n");
  RunResult r =
      RunTfprof({"--trace_path=" + trace, "--base_trace_path=" + trace,
                 "--script=" + dir + "/map.tfprof"});
  CHECK(r.code == 0);
  CHECK(r.out.find("\n  Step#X (micros ") != std::string::npos);
  CHECK(r.out.find("\n  Step#Y (micros ") != std::string::npos);
}

TEST_CASE("Without a command and a terminal, stdin is read as a script") {
  RunResult r = RunTfprof({Profile()}, "scope -max_depth 1\n");
  CHECK(r.code == 0);
  CHECK(r.out.find("nodes:") != std::string::npos);  // the summary
  CHECK(r.out.find("_TFProfRoot") != std::string::npos);
}

TEST_CASE("Output type file writes the report to a file") {
  const std::string dir = testing::TempDir();
  RunResult r = RunTfprof(
      {Profile(), "scope", "-output", "file:outfile=" + dir + "/r.txt"});
  CHECK(r.code == 0);
  CHECK(r.out.find("_TFProfRoot") == std::string::npos);
  CHECK(testing::ReadFile(dir + "/r.txt").find("_TFProfRoot") !=
        std::string::npos);
}

TEST_CASE("Output files never overwrite an input") {
  const std::string profile =
      testing::CorpusFile("shiyudian-resnet-tf-dist/profile_0_tiny");
  RunResult r =
      RunTfprof({Profile(), "scope", "-output", "file:outfile=" + profile});
  CHECK(r.code != 0);
  CHECK(r.err.find("refusing to overwrite") != std::string::npos);
}

// A trace named by a glob or a directory is an input too, of the run and of
// the base: an output path equal to it is refused and the trace is intact.
TEST_CASE("Output files never overwrite a trace a glob or directory named") {
  const std::string dir = testing::TempDir() + "/globbed";
  ::mkdir(dir.c_str(), 0755);
  // Two ranks (two copies of one rank's trace would be refused at load).
  const std::string trace =
      testing::ReadFile(testing::SourceDir() +
                        "/testdata/ranks/ddp-gloo/ddp2_rank0.pt.trace.json.gz");
  const std::string trace1 =
      testing::ReadFile(testing::SourceDir() +
                        "/testdata/ranks/ddp-gloo/ddp2_rank1.pt.trace.json.gz");
  testing::WriteFile(dir + "/a.pt.trace.json.gz", trace);
  testing::WriteFile(dir + "/b.pt.trace.json.gz", trace1);
  const std::vector<std::vector<std::string>> runs = {
      {"--trace_path=" + dir + "/a*.gz", "scope", "-output",
       "file:outfile=" + dir + "/a.pt.trace.json.gz"},
      {"--trace_path=" + dir, "scope", "-output",
       "file:outfile=" + dir + "/b.pt.trace.json.gz"},
      {"--trace_path=" + dir + "/a.pt.trace.json.gz",
       "--base_trace_path=" + dir + "/b*", "diff", "op", "-output",
       "json:outfile=" + dir + "/b.pt.trace.json.gz"}};
  for (const std::vector<std::string>& args : runs) {
    INFO(args[0]);
    RunResult r = RunTfprof(args);
    CHECK(r.code == 2);
    CHECK(r.err.find("refusing to overwrite") != std::string::npos);
  }
  CHECK(testing::ReadFile(dir + "/a.pt.trace.json.gz") == trace);
  CHECK(testing::ReadFile(dir + "/b.pt.trace.json.gz") == trace1);
}

TEST_CASE("timeline on a ProfileProto draws the graph view of the step") {
  // A ProfileProto keeps neither a trace's events nor StepStats: the step's
  // timeline is its graph view's, as the web UI's timeline page shows it.
  const std::string dir = testing::TempDir();
  RunResult r = RunTfprof({Profile(), "timeline", "-outfile", dir + "/t.json"});
  CHECK(r.code == 0);
  CHECK(r.out.find("Timeline of step 0 (its graph view) written to") !=
        std::string::npos);
  // The same as the graph view's timeline of every node of step 0.
  r = RunTfprof({Profile(), "graph", "-step", "0", "-max_depth", "1000000",
                 "-output", "timeline:outfile=" + dir + "/g.json"});
  CHECK(r.code == 0);
  const std::string graph = testing::ReadFile(dir + "/g.json_0");
  CHECK(graph.find("traceEvents") != std::string::npos);
  CHECK(testing::ReadFile(dir + "/t.json") == graph);
}

TEST_CASE("timeline writes a step's trace like ProfilerHook") {
  const std::string dir = testing::TempDir();
  const std::string rm =
      "--run_meta_path=" +
      testing::CorpusFile("yaroslavvb-stuff/dynamic_stitch_gpu_profile.pbtxt");
  RunResult r = RunTfprof(
      {rm, "timeline", "-step", "0", "-outfile", dir + "/timeline-0.json"});
  CHECK(r.code == 0);
  const std::string json = testing::ReadFile(dir + "/timeline-0.json");
  CHECK(json.find("\"name\": \"/gpu:0/stream:14 Compute\"") !=
        std::string::npos);
  r = RunTfprof({rm, "timeline", "-step", "3"});
  CHECK(r.code == 2);
  CHECK(r.err.find("no RunMetadata for step 3") != std::string::npos);
}

// steps -step N prints that step's row alone (the csv's row of the full
// table); a step the profile lacks is an error naming the ones it has.
TEST_CASE("steps -step N shows one step") {
  const std::string trace =
      "--trace_path=" + testing::SourceDir() +
      "/testdata/ranks/ddp-gloo/ddp2_rank0.pt.trace.json.gz";
  const RunResult all = RunTfprof({trace, "steps", "-output", "csv"});
  REQUIRE(all.code == 0);
  // The header, then one row per step: take the second step's.
  std::vector<std::string> lines;
  for (size_t at = 0; at < all.out.size();) {
    const size_t end = all.out.find('\n', at);
    lines.push_back(all.out.substr(at, end - at));
    at = end == std::string::npos ? all.out.size() : end + 1;
  }
  REQUIRE(lines.size() >= 3);
  const std::string step = lines[2].substr(0, lines[2].find(','));
  const RunResult one =
      RunTfprof({trace, "steps", "-step", step, "-output", "csv"});
  CHECK(one.code == 0);
  CHECK(one.out == lines[0] + "\n" + lines[2] + "\n");
  // The line under the table is the run's figure, and says so.
  const RunResult text = RunTfprof({trace, "steps", "-step", step});
  CHECK(text.out.find("(the run's, over all 5 steps)\n") != std::string::npos);
  const RunResult missing = RunTfprof({trace, "steps", "-step", "999"});
  CHECK(missing.code != 0);
  CHECK(missing.err.find("-step 999 is not a step of this profile") !=
        std::string::npos);
}

// timeline takes -output timeline:outfile=PATH, as the views do.
TEST_CASE("timeline takes -output timeline:outfile=PATH") {
  const std::string dir = testing::TempDir();
  const std::string rm =
      "--run_meta_path=" +
      testing::CorpusFile("yaroslavvb-stuff/dynamic_stitch_gpu_profile.pbtxt");
  RunResult r = RunTfprof({rm, "timeline", "-step", "0", "-output",
                           "timeline:outfile=" + dir + "/t.json"});
  CHECK(r.code == 0);
  CHECK(testing::ReadFile(dir + "/t.json").find("Compute") !=
        std::string::npos);
  r = RunTfprof({rm, "timeline", "-output", "json"});
  CHECK(r.code == 2);
  CHECK(r.err.find("timeline or timeline:outfile=PATH") != std::string::npos);
}

TEST_CASE("timeline -steps: bad values and undrawable ranges are errors") {
  const std::string ddp =
      "--trace_path=testdata/ranks/ddp-gloo/ddp2_rank0.pt.trace.json.gz";
  const std::string rm =
      "--run_meta_path=" +
      testing::CorpusFile("yaroslavvb-stuff/dynamic_stitch_gpu_profile.pbtxt");
  struct Bad {
    std::vector<std::string> args;
    std::string says;
    int code;  // 2: a usage error; 1: nothing to draw
  };
  const std::vector<Bad> bad = {
      {{ddp, "timeline", "-steps", "5-3"}, "invalid value '5-3' for -steps", 2},
      {{ddp, "timeline", "-steps", "x"}, "invalid value 'x' for -steps", 2},
      {{ddp, "timeline", "-steps", "1-2-3"},
       "invalid value '1-2-3' for -steps",
       2},
      {{ddp, "timeline", "-steps", "-1"}, "invalid value '-1' for -steps", 2},
      {{ddp, "timeline", "-steps", "3-"}, "invalid value '3-' for -steps", 2},
      {{ddp, "timeline", "-steps"}, "option -steps needs a value", 2},
      {{ddp, "timeline", "-step", "3", "-steps", "3-4"},
       "-step and -steps cannot be given together",
       2},
      {{ddp, "timeline", "-steps", "3-4", "-step", "3"},
       "-step and -steps cannot be given together",
       2},
      {{ddp, "timeline", "-steps", "900-901"},
       "-steps 900-901 starts at step 900, which is not a step of this "
       "profile (steps: 2 3 4 5 6)",
       1},
      {{ddp, "timeline", "-steps", "1-3"},
       "-steps 1-3 starts at step 1, which is not a step of this profile "
       "(steps: 2 3 4 5 6)",
       1},
      {{ddp, "check", "micros<1s", "-step", "-5"},
       "check: -step needs a step number (or -1, every step), not '-5'",
       2},
      {{ddp, "timeline", "-step", "7"},
       "-step 7 not found; available steps: 2 3 4 5 6",
       1},
      {{ddp, "timeline", "-steps", "3-999"},
       "-steps 3-999 ends at step 999, which is not a step of this profile "
       "(steps: 2 3 4 5 6)",
       1},
      {{rm, "timeline", "-steps", "0-1"},
       "a range of steps needs a trace's events",
       2},
      {{Profile(), "timeline", "-steps", "0-1"},
       "a range of steps needs a trace's events",
       2},
  };
  for (const Bad& b : bad) {
    INFO(b.args[0] << " " << b.args[2] << " " << b.args.back());
    const RunResult r = RunTfprof(b.args);
    CHECK(r.code == b.code);
    // One error line (after the load's notes), naming the problem.
    std::vector<std::string> errors;
    for (absl::string_view line : absl::StrSplit(r.err, '\n')) {
      if (absl::StartsWith(line, "tfprof: ")) errors.emplace_back(line);
    }
    REQUIRE(errors.size() == 1);
    CHECK_THAT(errors[0], Catch::Contains(b.says));
  }
}

TEST_CASE("memory -output timeline without allocator events is an error") {
  const std::string dir = testing::TempDir();
  const RunResult r = RunTfprof(
      {"--trace_path=testdata/ranks/ddp-gloo/ddp2_rank0.pt.trace.json.gz",
       "memory", "-output", "timeline:outfile=" + dir + "/m.json"});
  CHECK(r.code == 1);
  CHECK_THAT(r.err, Catch::Contains("tfprof: memory: nothing to draw: this "
                                    "profile has no allocator events"));
  CHECK(!testing::Readable(dir + "/m.json"));
}

TEST_CASE("A failing gate sets exit status 3, in one-shot and script mode") {
  RunResult r = RunTfprof({Profile(), "check", "micros <= 1s"});
  CHECK(r.code == 0);
  CHECK(r.out.find("PASS micros = ") != std::string::npos);
  r = RunTfprof({Profile(), "check", "micros<=1ms", "params>=0"});
  CHECK(r.code == 3);
  CHECK(r.out.find("FAIL micros = ") != std::string::npos);
  CHECK(r.err.find("1 of 2 checks failed") != std::string::npos);
  const std::string dir = testing::TempDir();
  testing::WriteFile(dir + "/gate.tfprof",
                     "# CI gate\ncheck 'micros<=1ms'\nop\n");
  r = RunTfprof({Profile(), "--script=" + dir + "/gate.tfprof"});
  CHECK(r.code == 3);
  CHECK(r.err.find("gate.tfprof:2:") != std::string::npos);
  r = RunTfprof({Profile(), "check", "microz<=1"});
  CHECK(r.code == 2);
}

// A run of 4 ops over `steps` steps on one CPU, each op about 1000us with
// 10% noise per step (seeded); op3 takes `slow` times as long. Written as a
// ProfileProto file.
std::string NoisyProfile(const std::string& path, unsigned seed, int steps,
                         double slow) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> noise(1000, 100);
  Model m;
  tfcore::GraphDef g;
  for (int i = 0; i < 4; ++i) {
    auto* n = g.add_node();
    n->set_name("op" + std::to_string(i));
    n->set_op("MatMul");
  }
  m.AddGraph(g);
  for (int s = 0; s < steps; ++s) {
    tfcore::RunMetadata rm;
    auto* dev = rm.mutable_step_stats()->add_dev_stats();
    dev->set_device("/job:localhost/replica:0/task:0/device:cpu:0");
    int64_t t = 1000;
    for (int i = 0; i < 4; ++i) {
      const int64_t us = std::llround(noise(rng) * (i == 3 ? slow : 1.0));
      auto* ns = dev->add_node_stats();
      ns->set_node_name("op" + std::to_string(i));
      ns->set_all_start_micros(t);
      ns->set_op_end_rel_micros(us);
      ns->set_all_end_rel_micros(us);
      t += us;
    }
    REQUIRE(m.AddRunMeta(s, rm).ok());
  }
  std::string bytes;
  REQUIRE(m.ToProfileProto().SerializeToString(&bytes));
  testing::WriteFile(path, bytes);
  return path;
}

TEST_CASE("Verdict gates: 3 on a clear regression, 4 when inconclusive") {
  const std::string dir = testing::TempDir();
  const std::string base =
      "--base_profile_path=" + NoisyProfile(dir + "/base", 1, 3, 1.0);
  const std::string slow =
      "--profile_path=" + NoisyProfile(dir + "/slow", 2, 3, 3.0);
  const std::string same =
      "--profile_path=" + NoisyProfile(dir + "/same", 3, 3, 1.0);
  // op3 three times slower: a clear regression fails the gate.
  RunResult r = RunTfprof({slow, base, "check", "regressed(micros)[op3]==0"});
  CHECK(r.code == 3);
  CHECK(r.out.find("FAIL regressed(micros)[op3] = 1") != std::string::npos);
  // The same distribution, 3 steps of 10% noise: no op is clearly
  // regressed, nor clearly within 2%: inconclusive, exit status 4.
  r = RunTfprof({same, base, "check", "regressed(micros)==0"});
  CHECK(r.code == 4);
  CHECK(r.out.find("INCONCLUSIVE regressed(micros) = 0") != std::string::npos);
  CHECK(r.err.find("1 of 1 checks inconclusive") != std::string::npos);
  r = RunTfprof(
      {same, base, "check", "--inconclusive=pass", "regressed(micros)==0"});
  CHECK(r.code == 0);
  r = RunTfprof({same, base, "check", "-inconclusive", "pass",
                 "regressed(micros)==0", "micros<=1ms"});
  CHECK(r.code == 3);  // a plain gate still fails
  // A floor of 100% decides it: unchanged.
  r = RunTfprof(
      {same, base, "check", "-min_change", "100%", "regressed(micros)==0"});
  CHECK(r.code == 0);
  CHECK(r.out.find("PASS regressed(micros) = 0") != std::string::npos);
  r = RunTfprof(
      {same, base, "check", "-min_change", "lots", "regressed(micros)==0"});
  CHECK(r.code == 2);
}

TEST_CASE("timing on reports each command's time") {
  RunResult r = RunTfprof({Profile()}, "timing on\nop\n");
  CHECK(r.code == 0);
  CHECK(r.err.find("(op took ") != std::string::npos);
}

TEST_CASE("help lists commands and options") {
  RunResult r = RunTfprof({Profile()}, "help\nhelp scope\nhelp -max_depth\n");
  CHECK(r.code == 0);
  for (const auto& c : cli::Commands()) {
    CHECK(r.out.find("  " + c.name) != std::string::npos);
  }
  CHECK(r.out.find("-min_occurrence") != std::string::npos);
  r = RunTfprof({Profile()}, "help -order_by\n");
  CHECK(r.out.find("value: one of name, bytes, peak_bytes") !=
        std::string::npos);
  CHECK(r.out.find("default: name") != std::string::npos);
}

TEST_CASE("--help lists every command of the table") {
  RunResult r = RunTfprof({"--help"});
  CHECK(r.code == 0);
  for (const auto& c : cli::Commands()) {
    INFO(c.name);
    CHECK(r.out.find("\n  " + c.name + " ") != std::string::npos);
    CHECK(r.out.find(c.help) != std::string::npos);
  }
}

TEST_CASE("One-shot help needs no profile and takes a topic") {
  RunResult r = RunTfprof({"help", "check"});
  CHECK(r.code == 0);
  CHECK(r.out.rfind("check [-step N] [-rank N] [-alpha Q]", 0) == 0);
  CHECK(r.out.find("exit status 3") != std::string::npos);
  r = RunTfprof({"help", "-max_depth"});
  CHECK(r.code == 0);
  CHECK(r.out.find("default: 10") != std::string::npos);
  r = RunTfprof({"help"});
  CHECK(r.code == 0);
  CHECK(r.out.find("Commands:") != std::string::npos);
  r = RunTfprof({"help", "nosuch"});
  CHECK(r.code == 2);
  CHECK(r.err == "tfprof: help: no command or option named 'nosuch'\n");
}

TEST_CASE("An unknown one-shot command lists every command") {
  RunResult r = RunTfprof({Profile(), "frobnicate"});
  CHECK(r.code == 2);
  CHECK(r.err.find("commands: " + cli::CommandNames()) != std::string::npos);
  for (const auto& c : cli::Commands()) {
    CHECK(cli::CommandNames().find(c.name) != std::string::npos);
  }
}

TEST_CASE("A trace given as a profile names --trace_path") {
  for (const char* rel :
       {"yaroslavvb-stuff/dynamic_stitch_gpu_profile.json",
        "pytorch-kineto/worker0.1623143089861.pt.trace.json.gz",
        "aoberai-chess-engine/train/plugins/profile/"
        "2021_06_16_00_30_02/aoberai.xplane.pb"}) {
    INFO(rel);
    const std::string path = testing::CorpusFile(rel);
    RunResult r = RunTfprof({"--profile_path=" + path, "scope"});
    CHECK(r.code == 1);
    CHECK(r.err.find(path) != std::string::npos);
    CHECK(r.err.find("not a ProfileProto: load it with --trace_path") !=
          std::string::npos);
    CHECK(r.err.find('\n') == r.err.size() - 1);  // one line
  }
}

TEST_CASE("The load-progress line is erased before anything else") {
  // A profile that arrives through a pipe after 1.6 s: the load shows
  // progress on a terminal, then erases it before the notes and the report.
  const std::string fifo = testing::TempDir() + "/slow_profile";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const std::string bytes = testing::ReadFile(
      testing::CorpusFile("shiyudian-resnet-tf-dist/profile_0_tiny"));
  std::thread writer([&] {
    const int fd = ::open(fifo.c_str(), O_WRONLY);
    std::this_thread::sleep_for(std::chrono::milliseconds(1600));
    size_t done = 0;
    while (fd >= 0 && done < bytes.size()) {
      const ssize_t w = ::write(fd, bytes.data() + done, bytes.size() - done);
      if (w <= 0) break;
      done += static_cast<size_t>(w);
    }
    if (fd >= 0) ::close(fd);
  });
  std::istringstream in;
  std::ostringstream out, err;
  const int code =
      cli::RunApp({"--profile_path=" + fifo, "summary"},
                  cli::AppIo{&in, &out, &err, /*interactive=*/true});
  writer.join();
  CHECK(code == 0);
  CHECK(out.str().find("nodes:") != std::string::npos);
  const std::string e = err.str();
  REQUIRE(e.rfind("\rloading " + fifo + " ... 1s", 0) == 0);
  const size_t erase = e.find("\r\033[K");
  REQUIRE(erase != std::string::npos);
  CHECK(e.substr(0, erase).find('\n') == std::string::npos);
  CHECK(e.find("loading", erase) == std::string::npos);
}

TEST_CASE("The shell tokenizer honours quotes") {
  auto t = cli::Tokenize("scope -show_name_regexes 'a b.*' \"x\"");
  REQUIRE(t.ok());
  CHECK(*t ==
        std::vector<std::string>{"scope", "-show_name_regexes", "a b.*", "x"});
  CHECK_FALSE(cli::Tokenize("scope 'open").ok());
  auto blank = cli::Tokenize("   \t ");
  REQUIRE(blank.ok());
  CHECK(blank->empty());
}

TEST_CASE("Quoted commas stay inside one regex") {
  auto t = cli::Tokenize(
      "scope -show_name_regexes 'Conv2D_{0,1}',DW.* -output "
      "'file:outfile=/tmp/a,b'");
  REQUIRE(t.ok());
  Options o;
  REQUIRE(ParseOptionTokens(*t, 1, &o).ok());
  CHECK(o.show_name_regexes ==
        std::vector<std::string>{"Conv2D_{0,1}", "DW.*"});
  CHECK(o.output_options.at("outfile") == "/tmp/a,b");
}

TEST_CASE("A whitespace-only line prints the options instead of crashing") {
  InputPaths in;
  in.profile_path =
      testing::CorpusFile("shiyudian-resnet-tf-dist/profile_0_tiny");
  auto loaded = LoadProfile(in);
  REQUIRE(loaded.ok());
  std::ostringstream out, err;
  cli::Shell shell(std::move(*loaded), in, Options(), &out, &err);
  REQUIRE(shell.RunLine("   \t").ok());
  CHECK(out.str().find("-max_depth                  10") != std::string::npos);
}

TEST_CASE("diff and base: a run compared with its base from the command line") {
  const std::string runs = testing::CorpusFile("shiyudian-resnet-tf-dist");
  const std::string current = "--profile_path=" + runs + "/profile_100";
  const std::string base = "--base_profile_path=" + runs + "/profile_0";
  RunResult r = RunTfprof({current, base, "diff", "op", "-max_depth", "2",
                           "-order_by", "micros", "-output", "csv"});
  CHECK(r.code == 0);
  CHECK(r.out.rfind("name,depth,in,micros_base,micros_current,micros_delta,"
                    "p_value,q_value,significant,verdict,ci_low,ci_high,"
                    "more_steps_needed,shift\n_TFProfRoot,0,both,",
                    0) == 0);
  // profile_0 has one step: no verdicts (inconclusive, 2 more steps).
  CHECK(r.out.find(",,,false,inconclusive,,,2,\n") != std::string::npos);
  CHECK(r.err.find("no verdicts: they need 3 or more steps") !=
        std::string::npos);
  // -max_depth counts levels as the views do, the root the first: the diff
  // of a tree view lists the names its view lists.
  for (const char* view : {"scope", "graph", "code"}) {
    INFO(view);
    const auto names = [](const std::string& csv) {
      std::set<std::string> out;
      for (absl::string_view line : absl::StrSplit(csv, '\n')) {
        if (!line.empty())
          out.insert(std::string(line.substr(0, line.find(','))));
      }
      out.erase("name");
      return out;
    };
    RunResult plain =
        RunTfprof({current, view, "-max_depth", "2", "-output", "csv"});
    RunResult diffed = RunTfprof(
        {current, base, "diff", view, "-max_depth", "2", "-output", "csv"});
    if (plain.code != 0) continue;  // (code: profile_100 keeps no stacks)
    REQUIRE(diffed.code == 0);
    CHECK(names(plain.out).size() > 2);
    CHECK(names(diffed.out) == names(plain.out));
  }
  // Without a base: an error that says how to load one.
  r = RunTfprof({current, "diff", "scope"});
  CHECK(r.code == 1);
  CHECK(r.err.find("--base_profile_path") != std::string::npos);
  // Bad diff options are usage errors naming the option.
  r = RunTfprof({current, base, "diff", "scope", "-map", "a(=>b"});
  CHECK(r.code == 2);
  CHECK(r.err.find("invalid regex") != std::string::npos);
  r = RunTfprof({current, base, "diff", "scope", "-alpha", "2"});
  CHECK(r.code == 2);
  r = RunTfprof({current, base, "diff", "nosuchview"});
  CHECK(r.code == 2);
  r = RunTfprof({current, base, "diff", "scope", "-output", "pprof"});
  CHECK(r.code == 2);
  // The shell loads, replaces and drops the base; outputs never overwrite
  // an input of either run.
  r = RunTfprof({current, "--keep_going"},
                "base " + runs +
                    "/profile_0\n"
                    "diff scope -max_depth 2 -order_by micros\n"
                    "diff scope -output markdown:outfile=" +
                    runs +
                    "/profile_0\n"
                    "base none\n"
                    "diff scope\n");
  CHECK(r.code != 0);
  CHECK(r.err.find("base: 2080 nodes, 1 step") != std::string::npos);
  CHECK(r.out.find("  gradients (micros 0us -> 14.01ms, +14.01ms, new)") !=
        std::string::npos);
  CHECK(r.err.find("refusing to overwrite") != std::string::npos);
  CHECK(r.err.find("base dropped") != std::string::npos);
  CHECK(r.err.find("diff needs a base run") != std::string::npos);
  // `base FILE` knows a trace from a ProfileProto by content, not by name: a
  // ProfileProto called *.pb and a gzipped PyTorch trace without its
  // extension both load.
  const std::string tmp = testing::TempDir();
  testing::WriteFile(tmp + "/run.pb", testing::ReadFile(runs + "/profile_0"));
  testing::WriteFile(
      tmp + "/trace_without_extension",
      testing::ReadFile(testing::CorpusFile(
          "pytorch-kineto/worker0.1623143089861.pt.trace.json.gz")));
  r = RunTfprof({current}, "base " + tmp + "/run.pb\nbase " + tmp +
                               "/trace_without_extension\n");
  CHECK(r.code == 0);
  CHECK(r.err.find("base: 2080 nodes, 1 step") != std::string::npos);
  CHECK(r.err.find("base: 188 nodes, 6 steps") != std::string::npos);
  // A missing base file is a load error naming it.
  r = RunTfprof({current, "--base_profile_path=/no/such/profile", "summary"});
  CHECK(r.code == 1);
  CHECK(r.err.find("/no/such/profile") != std::string::npos);
}

}  // namespace
}  // namespace tfprof
