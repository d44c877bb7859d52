// Short names for the wire-compatible protobuf messages in proto/.
#ifndef TFPROF_PROFILER_BASE_PROTOS_H_
#define TFPROF_PROFILER_BASE_PROTOS_H_

#include "proto/tf_graph.pb.h"
#include "proto/tf_step_stats.pb.h"
#include "proto/tfprof_log.pb.h"
#include "proto/tfprof_options.pb.h"
#include "proto/tfprof_output.pb.h"

namespace tfprof {

// TensorFlow's core messages (GraphDef, RunMetadata, ...).
namespace tfcore = ::tensorflow;
// tfprof's own messages (ProfileProto, OpLogProto, GraphNodeProto, ...).
namespace tfpb = ::tensorflow::tfprof;

}  // namespace tfprof

#endif  // TFPROF_PROFILER_BASE_PROTOS_H_
