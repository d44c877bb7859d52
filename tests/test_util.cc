#include "tests/test_util.h"

#include <stdlib.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace tfprof {
namespace testing {

std::string SourceDir() {
  if (const char* env = std::getenv("TFPROF_SOURCE_DIR")) return env;
  // Under Bazel, runfiles are links into the source tree.
  char buf[PATH_MAX];
  if (::realpath("tests/test_util.h", buf) != nullptr) {
    std::string p(buf);
    return p.substr(0, p.size() - std::string("/tests/test_util.h").size());
  }
#ifdef TFPROF_SOURCE_DIR
  return TFPROF_SOURCE_DIR;
#else
  return ".";
#endif
}

std::string BundledCorpusDir() { return SourceDir() + "/testdata/corpus"; }

std::string CorpusDir() {
  if (const char* env = std::getenv("TFPROF_CORPUS")) return env;
  return SourceDir() + "/../shared/corpus";
}

bool Readable(const std::string& path) {
  return ::access(path.c_str(), R_OK) == 0;
}

std::string CorpusFile(const std::string& rel) {
  const std::string bundled = BundledCorpusDir() + "/" + rel;
  if (Readable(bundled)) return bundled;
  return CorpusDir() + "/" + rel;
}

bool HaveCorpusFile(const std::string& rel) {
  if (Readable(CorpusFile(rel))) return true;
  std::printf("skipped: corpus not found at %s (%s)\n", CorpusDir().c_str(),
              rel.c_str());
  return false;
}

namespace {

// The directories TempDir made, removed with their files when the test
// program ends.
class TempDirs {
 public:
  ~TempDirs() {
    for (const std::string& d : dirs_) {
      std::error_code ignored;
      std::filesystem::remove_all(d, ignored);
    }
  }
  void Add(const std::string& dir) { dirs_.push_back(dir); }

 private:
  std::vector<std::string> dirs_;
};

}  // namespace

std::string TempDir() {
  static TempDirs made;
  const char* base = std::getenv("TEST_TMPDIR");
  std::string tmpl = std::string(base ? base : "/tmp") + "/tfprof_test.XXXXXX";
  if (::mkdtemp(tmpl.data()) == nullptr) {
    throw std::runtime_error("mkdtemp failed");
  }
  made.Add(tmpl);
  return tmpl;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void WriteFile(const std::string& path, const std::string& contents) {
  std::ofstream out(path, std::ios::binary);
  out << contents;
  if (!out) throw std::runtime_error("cannot write " + path);
}

}  // namespace testing
}  // namespace tfprof
