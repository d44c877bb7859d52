// Reports of `check` gates for CI systems: JUnit XML (one test case per
// condition) and a Markdown table for a pull-request comment.
#ifndef TFPROF_PROFILER_ADVISE_GATES_REPORT_H_
#define TFPROF_PROFILER_ADVISE_GATES_REPORT_H_

#include <string>
#include <vector>

#include "profiler/advise/gates.h"

namespace tfprof {

// <testsuites><testsuite name="tfprof check"> with a <testcase> per
// condition (its text as the name); a failed one has a <failure> with the
// gate's message, an inconclusive one is <skipped> with it.
std::string RenderGatesJUnit(const std::vector<GateResult>& results);

// | result | condition | value | limit | nodes |
std::string RenderGatesMarkdown(const std::vector<GateResult>& results);

}  // namespace tfprof

#endif  // TFPROF_PROFILER_ADVISE_GATES_REPORT_H_
