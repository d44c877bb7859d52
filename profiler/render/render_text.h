// Text rendering of view results, in tfprof's report layout.
#ifndef TFPROF_PROFILER_RENDER_RENDER_TEXT_H_
#define TFPROF_PROFILER_RENDER_RENDER_TEXT_H_

#include <string>

#include "profiler/model/model.h"
#include "profiler/views/result.h"

namespace tfprof {

// The report body: legend line and node lines, exactly as tfprof prints them
// after "Profile:".
std::string RenderText(const ResultTree& result);

// The short explanation printed before a report: a "Doc:" block describing
// the view and the selected attributes, then "Profile:". Starts with a
// warning when accelerator ops lack stream timing.
std::string RenderPreamble(const ResultTree& result, const Model& model);

// Preamble + body.
std::string RenderReport(const ResultTree& result, const Model& model);

}  // namespace tfprof

#endif  // TFPROF_PROFILER_RENDER_RENDER_TEXT_H_
