// The tfprof program's answers to mistakes: usage, flags that are wrong or
// empty, scripts, options a command does not use, load errors; each a
// clear line and the documented exit code.
#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "tests/cli_run.h"
#include "tests/corpus_util.h"
#include "tests/test_util.h"

namespace tfprof {
namespace {

using testing::Profile;
using testing::RunResult;
using testing::RunTfprof;

TEST_CASE("No arguments print a short usage and succeed") {
  RunResult r = RunTfprof({});
  CHECK(r.code == 0);
  CHECK(r.out.find("--profile_path") != std::string::npos);
}

TEST_CASE("The help flag lists every flag with its default") {
  RunResult r = RunTfprof({"--help"});
  CHECK(r.code == 0);
  for (const char* f : {"--profile_path=", "--graph_path=", "--run_meta_path=",
                        "--op_log_path=", "--checkpoint_path=", "--max_depth=",
                        "--start_name_regexes=", "--account_type_regexes=",
                        "--output=", "--script"}) {
    CHECK(r.out.find(f) != std::string::npos);
  }
  CHECK(r.out.find("(default: 10)") != std::string::npos);
}

TEST_CASE("Unknown flags and bad values are usage errors with hints") {
  RunResult r = RunTfprof({"--max_dept=3"});
  CHECK(r.code == 2);
  CHECK(r.err.find("did you mean --max_depth") != std::string::npos);
  r = RunTfprof({"--max_depth=abc", Profile()});
  CHECK(r.code == 2);
  CHECK(r.err.find("max_depth") != std::string::npos);
  r = RunTfprof({Profile(), "scop"});
  CHECK(r.code == 2);
  CHECK(r.err.find("did you mean 'scope'") != std::string::npos);
  r = RunTfprof({Profile(), "scope", "-order_by", "nme"});
  CHECK(r.code == 2);
  CHECK(r.err.find("did you mean name") != std::string::npos);
}

// Script mistakes say so and fail, rather than run nothing and succeed.
TEST_CASE(
    "An empty file flag a directory as script or a script beside a command "
    "fail") {
  RunResult r = RunTfprof({"--profile_path=", "scope"});
  CHECK(r.code == 2);
  CHECK(r.err ==
        "tfprof: flag --profile_path is empty: give a file "
        "(--profile_path=FILE), or leave the flag out\n");
  r = RunTfprof({Profile(), "--script=" + testing::TempDir()});
  CHECK(r.code == 1);
  CHECK(r.err.find("is a directory, expected a file of commands") !=
        std::string::npos);
  const std::string script = testing::TempDir() + "/one.tfprof";
  testing::WriteFile(script, "scope -max_depth 1\n");
  r = RunTfprof({Profile(), "--script=" + script, "op"});
  CHECK(r.code == 2);
  CHECK(r.err.find("give it no command as well (got 'op')") !=
        std::string::npos);
  r = RunTfprof({Profile(), "--script=" + script});
  CHECK(r.code == 0);
  CHECK(r.out.find("_TFProfRoot") != std::string::npos);
  // A base that does not load is an input error (exit 1), as with the
  // --base_ flags.
  const std::string garbage = testing::TempDir() + "/garbage.pb";
  testing::WriteFile(garbage, std::string("\x0a\xff\xff\x01", 4));
  testing::WriteFile(script, "base " + garbage + "\n");
  r = RunTfprof({Profile(), "--script=" + script});
  CHECK(r.code == 1);
  CHECK(r.err.find(garbage) != std::string::npos);
}

// diff's tables refuse the diff options they do not use.
TEST_CASE("diff steps summary and top refuse options they do not use") {
  const std::vector<std::string> runs = {
      "--profile_path=" +
          testing::CorpusFile("shiyudian-resnet-tf-dist/profile_100"),
      "--base_profile_path=" +
          testing::CorpusFile("shiyudian-resnet-tf-dist/profile_0")};
  const std::vector<std::vector<std::string>> refused = {
      {"steps", "-significant_only", "true"},
      {"steps", "-map", "a=>b"},
      {"summary", "-alpha", "0.01"},
      {"summary", "-min_change", "5%"},
      {"top", "-significant_only", "false"}};
  for (const std::vector<std::string>& args : refused) {
    std::vector<std::string> command = runs;
    command.push_back("diff");
    command.insert(command.end(), args.begin(), args.end());
    const RunResult r = RunTfprof(command);
    INFO(args[0] << " " << args[1]);
    CHECK(r.code == 2);
    CHECK(r.err.find("diff " + args[0] + " does not use " + args[1]) !=
          std::string::npos);
  }
  std::vector<std::string> used = runs;
  used.insert(used.end(), {"diff", "steps", "-min_change", "5%"});
  CHECK(RunTfprof(used).code == 0);
}

TEST_CASE("Load errors exit 1 and name the file") {
  RunResult r = RunTfprof({"--profile_path=/no/such/file", "scope"});
  CHECK(r.code == 1);
  CHECK(r.err.find("/no/such/file") != std::string::npos);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
}

}  // namespace
}  // namespace tfprof
