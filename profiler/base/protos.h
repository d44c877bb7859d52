// Short names for the wire-compatible protobuf messages in proto/.
#ifndef TFPROF_PROFILER_BASE_PROTOS_H_
#define TFPROF_PROFILER_BASE_PROTOS_H_

#include <string>

#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "google/protobuf/message_lite.h"
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

// A message's bytes with every map in key order, so that one message always
// gives the same bytes (protobuf's own order for maps varies from run to
// run). What every binary output writes.
inline std::string DeterministicBytes(
    const google::protobuf::MessageLite& message) {
  std::string bytes;
  {
    google::protobuf::io::StringOutputStream stream(&bytes);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    message.SerializeToCodedStream(&coded);
  }
  return bytes;
}

}  // namespace tfprof

#endif  // TFPROF_PROFILER_BASE_PROTOS_H_
