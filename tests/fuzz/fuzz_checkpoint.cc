// Fuzzes the checkpoint reader: the input is the .index file, with a fixed
// data shard next to it.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "profiler/load/checkpoint.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string prefix =
      "/tmp/tfprof_fuzz_ckpt_" + std::to_string(::getpid());
  static const bool shard_written = [] {
    std::FILE* f = std::fopen((prefix + ".data-00000-of-00001").c_str(), "wb");
    if (f == nullptr) return false;
    std::string zeros(4096, '\0');
    std::fwrite(zeros.data(), 1, zeros.size(), f);
    std::fclose(f);
    return true;
  }();
  if (!shard_written) return 0;
  std::FILE* f = std::fopen((prefix + ".index").c_str(), "wb");
  if (f == nullptr) return 0;
  std::fwrite(data, 1, size, f);
  std::fclose(f);
  auto ckpt = tfprof::Checkpoint::Open(prefix);
  if (ckpt.ok()) {
    for (const std::string& name : ckpt->names()) (void)ckpt->Read(name);
  }
  return 0;
}
