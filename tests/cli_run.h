// Running the tfprof program in-process for tests: its exit code and what
// it printed, as a user would see them.
#ifndef TFPROF_TESTS_CLI_RUN_H_
#define TFPROF_TESTS_CLI_RUN_H_

#include <sstream>
#include <string>
#include <vector>

#include "cli/app.h"
#include "tests/test_util.h"

namespace tfprof {
namespace testing {

struct RunResult {
  int code;
  std::string out;
  std::string err;
};

inline RunResult RunTfprof(const std::vector<std::string>& args,
                           const std::string& stdin_text = "") {
  std::istringstream in(stdin_text);
  std::ostringstream out, err;
  cli::AppIo io{&in, &out, &err, false};
  int code = cli::RunApp(args, io);
  return {code, out.str(), err.str()};
}

// The small ProfileProto of the corpus, as a flag.
inline std::string Profile() {
  return "--profile_path=" +
         CorpusFile("shiyudian-resnet-tf-dist/profile_0_tiny");
}

}  // namespace testing
}  // namespace tfprof

#endif  // TFPROF_TESTS_CLI_RUN_H_
