// Fuzzes RunMetadata parsing, step accounting and the step timeline.
#include <cstddef>
#include <cstdint>
#include <string>

#include "profiler/load/loader.h"
#include "profiler/render/step_timeline.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  tfprof::tfcore::RunMetadata run_meta;
  if (!tfprof::ParseProto("fuzz", bytes, false, &run_meta).ok()) return 0;
  tfprof::Model model;
  if (!model.AddRunMeta(0, run_meta).ok()) return 0;
  tfprof::QueryEveryView(model);
  tfprof::StepTimelineOptions opts;
  opts.show_memory = true;
  (void)tfprof::StepStatsTimeline(run_meta.step_stats(), opts);
  return 0;
}
