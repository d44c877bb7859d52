#include "cli/hugepages.h"

#include <gnu/libc-version.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

namespace tfprof {
namespace cli {
namespace {

bool GlibcHasHugetlbTunable() {
  int major = 0, minor = 0;
  if (std::sscanf(gnu_get_libc_version(), "%d.%d", &major, &minor) != 2) {
    return false;
  }
  return major > 2 || (major == 2 && minor >= 35);
}

bool HugePagesOnRequest() {
  std::ifstream in("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string line;
  return std::getline(in, line) && line.find("[madvise]") != std::string::npos;
}

}  // namespace

void MaybeReexecWithHugePages(char** argv) {
  if (std::getenv("GLIBC_TUNABLES") != nullptr) return;
  const char* want = std::getenv("TFPROF_HUGEPAGES");
  if (want != nullptr && std::strcmp(want, "0") == 0) return;
  if (!GlibcHasHugetlbTunable() || !HugePagesOnRequest()) return;
  if (::setenv("GLIBC_TUNABLES", "glibc.malloc.hugetlb=1", 1) != 0) return;
  ::execv("/proc/self/exe", argv);
  ::unsetenv("GLIBC_TUNABLES");  // exec failed: go on as we are
}

}  // namespace cli
}  // namespace tfprof
