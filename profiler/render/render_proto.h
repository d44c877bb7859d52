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

}  // namespace tfprof

#endif  // TFPROF_PROFILER_RENDER_RENDER_PROTO_H_
