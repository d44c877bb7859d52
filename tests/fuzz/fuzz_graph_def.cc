// Fuzzes GraphDef parsing (text and binary) and graph building.
#include <cstddef>
#include <cstdint>
#include <string>

#include "profiler/load/loader.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  tfprof::tfcore::GraphDef graph;
  if (!tfprof::ParseProto("fuzz", bytes, true, &graph).ok()) return 0;
  tfprof::Model model;
  model.AddGraph(graph);
  tfprof::QueryEveryView(model);
  return 0;
}
