// The Bazel and CMake builds list the same sources and tests.
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <initializer_list>
#include <set>
#include <string>
#include <vector>

#include "tests/test_util.h"

namespace tfprof {
namespace {

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool IsDir(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool HasBuild(const std::string& dir) {
  return ::access((testing::SourceDir() + "/" + dir + "/BUILD").c_str(),
                  F_OK) == 0;
}

// The files of `dir` whose names end with one of `suffixes`, with those of
// its subfolders that are no package of their own ("checkers/memory.cc").
std::set<std::string> FilesIn(const std::string& dir,
                              std::initializer_list<const char*> suffixes,
                              const std::string& prefix = "") {
  std::set<std::string> out;
  DIR* d = ::opendir((testing::SourceDir() + "/" + dir).c_str());
  REQUIRE(d != nullptr);
  while (dirent* e = ::readdir(d)) {
    const std::string n = e->d_name;
    if (n == "." || n == "..") continue;
    const std::string sub = dir + "/" + n;
    if (IsDir(testing::SourceDir() + "/" + sub)) {
      if (dir.rfind("profiler", 0) == 0 && !HasBuild(sub)) {
        out.merge(FilesIn(sub, suffixes, prefix + n + "/"));
      }
      continue;
    }
    for (const char* s : suffixes) {
      if (EndsWith(n, s)) out.insert(prefix + n);
    }
  }
  ::closedir(d);
  return out;
}

std::set<std::string> SourcesIn(const std::string& dir) {
  return FilesIn(dir, {".cc", ".proto"});
}

// profiler/ and every package below it (directories with a BUILD file).
std::vector<std::string> ProfilerPackages() {
  std::vector<std::string> out;
  std::vector<std::string> todo = {"profiler"};
  while (!todo.empty()) {
    const std::string dir = todo.back();
    todo.pop_back();
    out.push_back(dir);
    DIR* d = ::opendir((testing::SourceDir() + "/" + dir).c_str());
    REQUIRE(d != nullptr);
    while (dirent* e = ::readdir(d)) {
      const std::string n = e->d_name;
      if (n == "." || n == "..") continue;
      const std::string sub = dir + "/" + n;
      if (HasBuild(sub)) todo.push_back(sub);
    }
    ::closedir(d);
  }
  return out;
}

TEST_CASE("Every source file is in both BUILD and CMakeLists.txt") {
  const std::string cmake =
      testing::ReadFile(testing::SourceDir() + "/CMakeLists.txt");
  std::vector<std::string> dirs = ProfilerPackages();
  CHECK(dirs.size() >= 12);  // the API, 7 layers, 4 importer packages
  for (const char* d : {"cli", "tests", "proto", "examples"}) {
    dirs.push_back(d);
  }
  for (const std::string& dir : dirs) {
    const std::string build =
        testing::ReadFile(testing::SourceDir() + "/" + dir + "/BUILD");
    const std::set<std::string> files = SourcesIn(dir);
    CHECK_FALSE(files.empty());
    for (const std::string& f : files) {
      INFO(dir + "/" + f);
      if (dir == "tests" && EndsWith(f, "_test.cc")) {
        // Tests are listed by name: "<name>" in BUILD, <name> in CMake.
        const std::string name = f.substr(0, f.size() - 3);
        CHECK(build.find("\"" + name + "\"") != std::string::npos);
        CHECK(cmake.find("  " + name + "\n") != std::string::npos);
      } else {
        CHECK(build.find("\"" + f + "\"") != std::string::npos);
        CHECK(cmake.find(dir + "/" + f) != std::string::npos);
      }
    }
  }
}

TEST_CASE("Every library header is listed in its package's BUILD") {
  for (const std::string& dir : ProfilerPackages()) {
    const std::string build =
        testing::ReadFile(testing::SourceDir() + "/" + dir + "/BUILD");
    for (const std::string& h : FilesIn(dir, {".h"})) {
      INFO(dir + "/" + h);
      CHECK(build.find("\"" + h + "\"") != std::string::npos);
    }
  }
}

}  // namespace
}  // namespace tfprof
