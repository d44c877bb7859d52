// The kernel view: a flat list of accelerator kernels by name, with the ops
// that launched them, from the accelerator work of Model::activity() (a
// trace's kernels, or RunMetadata GPU stream stats, named by op type).
// Not part of tfprof; its rows and output follow the op view's.
#ifndef TFPROF_PROFILER_VIEWS_KERNELS_H_
#define TFPROF_PROFILER_VIEWS_KERNELS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "profiler/model/model.h"
#include "profiler/views/options.h"
#include "profiler/views/result.h"

namespace tfprof {

// The -order_by values the kernel view takes (a kernel has no bytes, CPU
// time or parameters): it rejects the others as an invalid value.
std::vector<std::string> KernelOrderByValues();

// Whether the model has accelerator kernels (the kernel view needs them).
bool HasKernels(const Model& model);

// Rows: one per kernel name. A row's own figures are its launches
// (run_count) and their summed duration (accelerator and total micros,
// rounded once from nanoseconds); for -step -1 both are averaged over the
// steps the kernel ran in (integer division, tfprof's rule for nodes). Its
// float ops are those of the ops that launched it (the extended rule), each
// op's split over its kernels by their time. -min_* compare a row's own
// figures; -order_by micros, accelerator_micros, occurrence (launches),
// float_ops or name (others are an error); -show/-hide_name_regexes match
// kernel names, -start/-trim_name_regexes and -max_depth limit the list as in
// the op view. Kernels do not nest, so a row's total is its own figures (the op
// view's totals are cumulative down its list); the root's total covers every
// kernel of the step, shown or not. Members are the launching ops with their
// share of the kernel.
absl::StatusOr<ResultTree> QueryKernelView(const Model& model,
                                           const Options& opts);

// -show_kernels for the scope, graph and code views: under each displayed
// node that launched kernels in the query's step (on streams matching
// -device_regexes), one child per kernel name (fixed type "_kernel", after
// the node's own children) with its launches and time, averaged as the
// kernel view does. The node's totals stay as they are: its accelerator time
// already holds these kernels. Code view nodes take their graph nodes'.
void AttachKernels(const Model& model, ResultTree* tree);

}  // namespace tfprof

#endif  // TFPROF_PROFILER_VIEWS_KERNELS_H_
