// Fuzzes OpLogProto merging and the code view built from call stacks.
#include <cstddef>
#include <cstdint>
#include <string>

#include "profiler/load/loader.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  tfprof::tfpb::OpLogProto op_log;
  if (!tfprof::ParseProto("fuzz", bytes, false, &op_log).ok()) return 0;
  tfprof::Model model;
  tfprof::tfcore::GraphDef graph;
  for (const auto& entry : op_log.log_entries()) {
    auto* node = graph.add_node();
    node->set_name(entry.name());
    node->set_op("Op");
  }
  model.AddGraph(graph);
  model.AddOpLog(op_log);
  tfprof::QueryEveryView(model);
  return 0;
}
