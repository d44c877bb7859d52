// tfprof: query profiles of TensorFlow runs from the command line.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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
  tfprof::cli::RemoveTemporaryFilesOnSignals();
  std::vector<std::string> args(argv + 1, argv + argc);
  tfprof::cli::AppIo io{&std::cin, &std::cout, &std::cerr,
                        ::isatty(STDIN_FILENO) != 0, /*exiting=*/true};
  const int rc = tfprof::cli::RunApp(args, io);
  // A report that could not be written (a full disk, a closed pipe with
  // SIGPIPE ignored) is an error, not a success with nothing to show.
  std::cout.flush();
  std::fflush(stdout);
  if (std::ferror(stdout) != 0 || !std::cout) {
    // (A write that failed earlier left its reason in errno, unless a later
    // call replaced it: only a write's reasons are named.)
    const int err = errno == ENOSPC || errno == EPIPE || errno == EIO ||
                            errno == EDQUOT || errno == EFBIG || errno == EBADF
                        ? errno
                        : 0;
    std::fprintf(stderr, "tfprof: writing standard output failed (%s)\n",
                 err != 0 ? std::strerror(err) : "write error");
    return rc != 0 ? rc : 1;
  }
  return rc;
}
