// The per-step figures a diff tests, for every row of a view's result, from
// one pass over the model (not one query per step): each row's value of an
// attribute and its runs in every step, the variance its per-occurrence
// jitter implies, and (flat views) the op types its rows hang under, for
// cost shifts. Used by QueryDiff and the check command's verdict terms.
#ifndef TFPROF_PROFILER_VIEWS_DIFF_SAMPLES_H_
#define TFPROF_PROFILER_VIEWS_DIFF_SAMPLES_H_

#include <string>
#include <utility>
#include <vector>

#include "profiler/model/model.h"
#include "profiler/views/result.h"

namespace tfprof {

// Op types with weights (the time of what hangs under each).
using ParentWeights = std::vector<std::pair<std::string, double>>;
// Adds `from`'s weights to `to`'s (by name).
void MergeParents(const ParentWeights& from, ParentWeights* to);

// The figures of a result's rows, row by row.
struct SampleTable {
  size_t steps = 0;              // the model's steps, in order
  std::vector<double> per_step;  // the attribute: rows x steps
  std::vector<double> runs;      // runs (kernel launches): rows x steps
  // The variance of one step's value that a row's occurrences imply: for
  // time attributes, from the durations of a node's (or kernel's)
  // occurrences matched by their position in the step (the k-th run of a
  // node in each step is the same piece of work), with each step's own
  // level removed (two-way residuals); summed over the nodes of a row.
  std::vector<double> jitter;  // per row
  // Flat views: the op types a row hangs under (the op view: the calling
  // node's type; the kernel view: the launching op's).
  std::vector<ParentWeights> parents;  // per row; empty for trees

  void Resize(size_t rows, size_t step_count);
  const double* Values(size_t row) const {
    return per_step.data() + row * steps;
  }
  const double* Runs(size_t row) const { return runs.data() + row * steps; }
};

// The samples of every node of `tree` (a -step -1 query of `model`), by
// node index. False (and *out unusable) when the rows do not account for
// every total of the result (the view's options hide rows that still count
// in their parents', or -show_kernels rows): the caller then queries step
// by step.
bool StepSamples(const ResultTree& tree, const Model& model, Attr attribute,
                 SampleTable* out);

// Graph nodes' figures over the model's steps (all devices), one each
// (zeros for a null node).
struct NodeSample {
  std::vector<double> per_step, runs;
  double jitter = 0;
};
std::vector<NodeSample> NodeSamples(const Model& model,
                                    const std::vector<const GraphNode*>& nodes,
                                    Attr attribute);

// The op types a flat view's row hangs under (see SampleTable::parents),
// from the row's members.
ParentWeights FlatParents(const ResultTree& tree, const ResultNode& row,
                          const Model& model);

// The variance of a step's total that occurrences at matched positions
// imply: `steps` holds each step's occurrence values in order; steps with
// none are left out; 0 unless at least two steps have the same number
// (two or more) of occurrences, and every step with any has that number.
// The residual variance of the two-way layout (step x position) times the
// occurrences per step.
double OccurrenceJitter(const std::vector<std::vector<double>>& steps);

}  // namespace tfprof

#endif  // TFPROF_PROFILER_VIEWS_DIFF_SAMPLES_H_
