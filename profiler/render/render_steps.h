// The steps table as text, CSV or JSON.
#ifndef TFPROF_PROFILER_RENDER_RENDER_STEPS_H_
#define TFPROF_PROFILER_RENDER_RENDER_STEPS_H_

#include <string>

#include "profiler/views/steps.h"

namespace tfprof {

// A table for reading, then the wall time's mean, median, min and max.
std::string RenderStepsText(const StepTable& table);
// Header: step,wall_micros,accelerator_micros,compute_micros,memcpy_micros,
// idle_micros,kernels,peak_bytes,peak_allocator,wall_from; times as exact
// decimal microseconds.
std::string RenderStepsCsv(const StepTable& table);
// {"wall_source", "wall_micros": {mean, median, min, max}, "steps": [...]}
// with the CSV's fields per step.
std::string RenderStepsJson(const StepTable& table);

}  // namespace tfprof

#endif  // TFPROF_PROFILER_RENDER_RENDER_STEPS_H_
