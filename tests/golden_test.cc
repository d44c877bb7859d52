// Golden reports: each file in testdata/golden/ names its inputs and a
// command, and holds the expected report (the text after "Profile:").
//
// File layout:
//   # inputs: <corpus case, see tests/corpus_util.cc>
//   # command: <view> [-option value ...], or advise [...] (the shell's
//              output of the command)
//   # (any other '#' lines are comments)
//   # ---
//   <expected report>
//
// Update mode: TFPROF_UPDATE_GOLDENS=1 rewrites the expected part of every
// file that differs and prints a diff of what changed.
#include <dirent.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <map>
#include <sstream>

#include "cli/shell.h"
#include "profiler/render/render_text.h"
#include "profiler/views/views.h"
#include "tests/corpus_util.h"
#include "tests/test_util.h"

namespace tfprof {
namespace {

struct Golden {
  std::string path;
  std::string header;  // everything up to and including "# ---\n"
  std::string inputs;
  std::string command;
  std::string expected;
};

Golden ParseGolden(const std::string& path) {
  Golden g;
  g.path = path;
  const std::string text = testing::ReadFile(path);
  const size_t sep = text.find("# ---\n");
  REQUIRE(sep != std::string::npos);
  g.header = text.substr(0, sep + 6);
  g.expected = text.substr(sep + 6);
  std::istringstream in(g.header);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("# inputs: ", 0) == 0) g.inputs = line.substr(10);
    if (line.rfind("# command: ", 0) == 0) g.command = line.substr(11);
  }
  return g;
}

std::vector<std::string> GoldenFiles() {
  std::vector<std::string> files;
  const std::string dir = testing::SourceDir() + "/testdata/golden";
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return files;
  while (dirent* e = ::readdir(d)) {
    const std::string n = e->d_name;
    if (n.size() > 4 && n.substr(n.size() - 4) == ".txt") {
      files.push_back(dir + "/" + n);
    }
  }
  ::closedir(d);
  std::sort(files.begin(), files.end());
  return files;
}

std::string Diff(const std::string& a, const std::string& b) {
  const std::string dir = testing::TempDir();
  testing::WriteFile(dir + "/expected", a);
  testing::WriteFile(dir + "/actual", b);
  const std::string cmd =
      "diff -u " + dir + "/expected " + dir + "/actual > " + dir + "/diff";
  const int differ = std::system(cmd.c_str());  // diff exits 1 when they do
  (void)differ;
  return testing::ReadFile(dir + "/diff");
}

void Check(const std::string& f, const Golden& g, const std::string& actual,
           bool update) {
  if (actual == g.expected) return;
  if (update) {
    testing::WriteFile(f, g.header + actual);
    WARN("updated " << f << "\n" << Diff(g.expected, actual));
  } else {
    FAIL_CHECK(
        "golden mismatch; rerun with TFPROF_UPDATE_GOLDENS=1 to "
        "update\n"
        << Diff(g.expected, actual));
  }
}

TEST_CASE("Golden reports match") {
  std::map<std::string, InputPaths> inputs;
  for (const auto& c : testing::CorpusCases()) inputs[c.name] = c.paths;
  const bool update = std::getenv("TFPROF_UPDATE_GOLDENS") != nullptr;
  const std::vector<std::string> files = GoldenFiles();
  REQUIRE(files.size() >= 10);
  std::map<std::string, std::unique_ptr<LoadedProfile>> cache;
  for (const std::string& f : files) {
    Golden g = ParseGolden(f);
    INFO(f);
    REQUIRE(inputs.count(g.inputs) == 1);
    auto& loaded = cache[g.inputs];
    if (loaded == nullptr) {
      auto l = LoadProfile(inputs[g.inputs]);
      REQUIRE(l.ok());
      loaded = std::move(*l);
    }
    auto words = cli::Tokenize(g.command);
    REQUIRE(words.ok());
    REQUIRE_FALSE(words->empty());
    if ((*words)[0] == "advise") {
      // Reports of the checkers, as the shell prints them (stdout only).
      auto fresh = LoadProfile(inputs[g.inputs]);
      REQUIRE(fresh.ok());
      std::ostringstream out, err;
      cli::Shell shell(std::move(*fresh), inputs[g.inputs], Options(), &out,
                       &err);
      REQUIRE(shell.RunLine(g.command).ok());
      Check(f, g, out.str(), update);
      continue;
    }
    const std::map<std::string, ViewKind> views = {{"scope", ViewKind::kScope},
                                                   {"graph", ViewKind::kGraph},
                                                   {"op", ViewKind::kOp},
                                                   {"code", ViewKind::kCode}};
    REQUIRE(views.count((*words)[0]) == 1);
    Options o;
    REQUIRE(ParseOptionTokens(*words, 1, &o).ok());
    Views v(&loaded->model, loaded->checkpoint.get());
    auto r = v.Query(views.at((*words)[0]), o);
    REQUIRE(r.ok());
    Check(f, g, RenderText(*r), update);
  }
}

}  // namespace
}  // namespace tfprof
