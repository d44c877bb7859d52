// Fuzzes the shell: each input is one command line run against a small
// profile (SmallProfile). The http command (which serves until stopped) is
// left out; fuzz_web_api covers what it serves.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <sstream>
#include <string>

#include "cli/shell.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

tfprof::cli::Shell* MakeShell() {
  std::unique_ptr<tfprof::LoadedProfile> loaded = tfprof::SmallProfile();
  static std::ostringstream out, err;
  return new tfprof::cli::Shell(std::move(loaded), tfprof::InputPaths(),
                                tfprof::Options(), &out, &err);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static tfprof::cli::Shell* shell = MakeShell();
  std::string line(reinterpret_cast<const char*>(data), size);
  // Keep the fuzzer from writing files or leaving the shell.
  if (line.find("outfile") != std::string::npos ||
      line.find("save") != std::string::npos ||
      line.find("timeline") != std::string::npos ||
      line.find("quit") != std::string::npos ||
      line.find("http") != std::string::npos ||
      line.find("exit") != std::string::npos) {
    return 0;
  }
  (void)shell->RunLine(line);
  return 0;
}
