// Fuzzes the ProfileProto loader and the views over what it loads; and the
// streamed load of the same bytes (small blocks, so that each block's
// nodes are shared out to two decoders) against the one-decoder decode of
// them in memory: both fail, or both give the same profile.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "profiler/load/loader.h"
#include "profiler/load/profile_reader.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

void CompareStreamedLoad(const std::string& bytes, size_t block) {
  if (bytes.empty()) return;  // (an empty file is refused by name)
  static const std::string path =
      "/tmp/tfprof_fuzz_profile_" + std::to_string(::getpid());
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return;
  const bool written =
      std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  if (std::fclose(f) != 0 || !written) return;
  auto streamed = tfprof::ReadProfileProtoFile(path, nullptr, block);
  if (!streamed.ok() &&
      streamed.status().code() == absl::StatusCode::kFailedPrecondition) {
    return;  // looks like text format: handed to protobuf's text parser
  }
  auto decoded = tfprof::DecodeProfileProto(bytes, "fuzz");
  if (streamed.ok() != decoded.ok()) __builtin_trap();
  if (streamed.ok() && streamed->model.SerializedProfileProto() !=
                           decoded->SerializedProfileProto()) {
    __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  CompareStreamedLoad(bytes, 64 + (size > 0 ? data[0] % 64 : 0) * 16);
  tfprof::tfpb::ProfileProto profile;
  if (!tfprof::ParseProto("fuzz", bytes, false, &profile).ok()) return 0;
  auto model = tfprof::ModelFromProfileProto(profile);
  if (model.ok()) tfprof::QueryEveryView(*model);
  return 0;
}
