// The steps table as text, CSV or JSON.
#ifndef TFPROF_PROFILER_RENDER_RENDER_STEPS_H_
#define TFPROF_PROFILER_RENDER_RENDER_STEPS_H_

#include <string>

#include "profiler/views/steps.h"

namespace tfprof {

// A table for reading, then the wall time's mean, median, min and max.
std::string RenderStepsText(const StepTable& table);
// Header: step,wall_micros,accelerator_micros,compute_micros,memcpy_micros,
// idle_micros,kernels,peak_bytes,peak_allocator,wall_from,flops,mfu; times
// as exact decimal microseconds, flops by the extended rule, mfu a fraction
// (empty when n/a; the table's mfu_text says against which peak).
std::string RenderStepsCsv(const StepTable& table);
// {"wall_source", "wall_micros": {mean, median, min, max}, "mfu_text",
// "steps": [...]} with the CSV's fields per step (mfu null when n/a).
std::string RenderStepsJson(const StepTable& table);

}  // namespace tfprof

#endif  // TFPROF_PROFILER_RENDER_RENDER_STEPS_H_
