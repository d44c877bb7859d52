// The result tree as data for scripts: JSON (the displayed tree) and CSV
// (one row per displayed node), with raw numbers (microseconds, bytes,
// counts), self and total values of every selected attribute.
#ifndef TFPROF_PROFILER_RENDER_RENDER_JSON_CSV_H_
#define TFPROF_PROFILER_RENDER_RENDER_JSON_CSV_H_

#include <string>

#include "profiler/views/result.h"

namespace tfprof {

// {"view", "step", "select", "units", "root": {name, accounted, <attribute>:
// {self, total}, ..., children: [...]}}.
std::string RenderJson(const ResultTree& result);

// A header, then one row per displayed node: tree views in pre-order with a
// depth column, the op view in its row order.
std::string RenderCsv(const ResultTree& result);

}  // namespace tfprof

#endif  // TFPROF_PROFILER_RENDER_RENDER_JSON_CSV_H_
