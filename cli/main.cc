// tfprof: query profiles of TensorFlow runs from the command line.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "cli/app.h"
#include "cli/hugepages.h"

int main(int argc, char** argv) {
  tfprof::cli::MaybeReexecWithHugePages(argv);
  // Under `bazel run`, relative paths are meant from the user's directory.
  if (const char* dir = std::getenv("BUILD_WORKING_DIRECTORY")) {
    if (::chdir(dir) != 0) std::perror(dir);
  }
  std::vector<std::string> args(argv + 1, argv + argc);
  tfprof::cli::AppIo io{&std::cin, &std::cout, &std::cerr,
                        ::isatty(STDIN_FILENO) != 0, /*exiting=*/true};
  return tfprof::cli::RunApp(args, io);
}
