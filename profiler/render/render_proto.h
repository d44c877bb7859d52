// The result tree as the protos TensorFlow's Python API returned:
// GraphNodeProto (scope, graph views) or MultiGraphNodeProto (op, code).
#ifndef TFPROF_PROFILER_RENDER_RENDER_PROTO_H_
#define TFPROF_PROFILER_RENDER_RENDER_PROTO_H_

#include <string>

#include "profiler/base/protos.h"
#include "profiler/views/result.h"

namespace tfprof {

// Scope and graph views: the displayed tree.
tfpb::GraphNodeProto ToGraphNodeProto(const ResultTree& result);
// Op view: a chain root -> first row -> second row ...; code view: the
// displayed tree. Each node lists its graph nodes.
tfpb::MultiGraphNodeProto ToMultiGraphNodeProto(const ResultTree& result);

// The message of the view's kind, binary or text format.
std::string RenderProto(const ResultTree& result, bool text);

// JSON for scripts: the displayed tree with raw numbers (microseconds,
// bytes, counts), every selected attribute, self and total values.
std::string RenderJson(const ResultTree& result);

// CSV for spreadsheets and scripts: one row per displayed node (tree views:
// pre-order with a depth column; op view: the rows in order), raw numbers,
// self and total per selected attribute.
std::string RenderCsv(const ResultTree& result);

}  // namespace tfprof

#endif  // TFPROF_PROFILER_RENDER_RENDER_PROTO_H_
