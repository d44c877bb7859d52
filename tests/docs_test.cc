// The docs match the code: every option is documented with its default and
// help text, and every command appears in the command-line page.
#include <catch2/catch.hpp>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/shell.h"
#include "profiler/advise/advisor.h"
#include "profiler/render/render_steps.h"
#include "profiler/views/options.h"
#include "tests/test_util.h"

namespace tfprof {
namespace {

TEST_CASE("g3doc/options.md has a row per option, matching the code") {
  const std::string doc =
      testing::ReadFile(testing::SourceDir() + "/g3doc/options.md");
  for (const OptionSpec& o : OptionTable()) {
    INFO(o.name);
    const std::string row =
        "| `-" + o.name + "` | " + o.default_text + " | " + o.help + " |";
    CHECK(doc.find(row) != std::string::npos);
  }
}

TEST_CASE("g3doc/command_line.md lists every command") {
  const std::string doc =
      testing::ReadFile(testing::SourceDir() + "/g3doc/command_line.md");
  for (const auto& c : cli::Commands()) {
    INFO(c.name);
    CHECK(doc.find("| `" + c.name) != std::string::npos);
  }
}

TEST_CASE("g3doc/advise.md has a row per checker, matching the code") {
  const std::string doc =
      testing::ReadFile(testing::SourceDir() + "/g3doc/advise.md");
  for (const Checker* c : Checkers()) {
    INFO(c->name());
    std::vector<std::string> opts;
    for (const CheckerOption& o : c->options()) {
      opts.push_back(absl::StrCat("`-", o.name, "` (default ", o.default_value,
                                  "): ", o.help));
    }
    const std::string row = absl::StrCat(
        "| `", c->name(), "` | ", DefaultFor(*c), " | ", c->needs(), " | ",
        opts.empty() ? "none" : absl::StrJoin(opts, "; "), " |");
    CHECK(doc.find(row) != std::string::npos);
    CHECK(doc.find("**" + c->name() + ".**") != std::string::npos);
  }
}

TEST_CASE("g3doc/traces.md gives the steps table's CSV header") {
  const std::string doc =
      testing::ReadFile(testing::SourceDir() + "/g3doc/traces.md");
  const std::string csv = RenderStepsCsv(StepTable());
  const std::string header = csv.substr(0, csv.find('\n'));
  CHECK(doc.find(absl::StrCat("`", header, "`")) != std::string::npos);
}

}  // namespace
}  // namespace tfprof
