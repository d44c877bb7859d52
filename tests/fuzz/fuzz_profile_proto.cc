// Fuzzes the ProfileProto loader and the views over what it loads.
#include <cstddef>
#include <cstdint>
#include <string>

#include "profiler/load/loader.h"
#include "profiler/load/profile_reader.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  tfprof::tfpb::ProfileProto profile;
  if (!tfprof::ParseProto("fuzz", bytes, false, &profile).ok()) return 0;
  auto model = tfprof::ModelFromProfileProto(profile);
  if (model.ok()) tfprof::QueryEveryView(*model);
  return 0;
}
