// Fuzzes the trace importers (TensorFlow timelines, Kineto, XSpace; gzip
// too): format detection, conversion, and the model and views built from
// the result.
#include <cstddef>
#include <cstdint>
#include <string>

#include "profiler/importers/trace_import.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  auto trace = tfprof::ImportTraceContents({"fuzz"}, {bytes});
  if (!trace.ok()) return 0;
  tfprof::Model model;
  model.AddGraph(trace->graph);
  model.AddOpLog(trace->op_log);
  for (const auto& [step, run_meta] : trace->steps) {
    if (!model.AddRunMeta(step, run_meta).ok()) return 0;
  }
  tfprof::QueryEveryView(model);
  return 0;
}
