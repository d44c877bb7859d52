// Shared pieces of the libFuzzer targets.
#ifndef TFPROF_TESTS_FUZZ_FUZZ_UTIL_H_
#define TFPROF_TESTS_FUZZ_FUZZ_UTIL_H_

#include <memory>
#include <string>

#include "google/protobuf/text_format.h"
#include "profiler/load/loader.h"
#include "profiler/render/render_text.h"
#include "profiler/views/views.h"

namespace tfprof {

// Every view, with most attributes, rendered: what a user would run.
inline void QueryEveryView(const Model& model) {
  Views views(&model, nullptr);
  Options o;
  o.max_depth = 1000;
  o.select = {Attr::kMicros,   Attr::kBytes,      Attr::kParams,
              Attr::kFloatOps, Attr::kOccurrence, Attr::kInputShapes,
              Attr::kDevice,   Attr::kOpTypes};
  for (ViewKind v :
       {ViewKind::kScope, ViewKind::kGraph, ViewKind::kOp, ViewKind::kCode}) {
    auto r = views.Query(v, o);
    if (r.ok()) (void)RenderText(*r);
  }
}

// A small profile: a variable, a MatMul on a GPU and a constant, one step.
inline std::unique_ptr<LoadedProfile> SmallProfile() {
  auto loaded = std::make_unique<LoadedProfile>();
  tfcore::GraphDef graph;
  google::protobuf::TextFormat::ParseFromString(
      R"pb(node {
             name: "a/w"
             op: "VariableV2"
             attr {
               key: "shape"
               value { shape { dim { size: 3 } } }
             }
           }
           node { name: "a/mm" op: "MatMul" input: "a/w" input: "x" }
           node { name: "x" op: "Const" })pb",
      &graph);
  loaded->model.AddGraph(graph);
  tfcore::RunMetadata rm;
  google::protobuf::TextFormat::ParseFromString(
      R"pb(step_stats {
             dev_stats {
               device: "/job:l/replica:0/task:0/gpu:0"
               node_stats {
                 node_name: "a/mm"
                 all_start_micros: 5
                 op_end_rel_micros: 7
               }
             }
           })pb",
      &rm);
  (void)loaded->model.AddRunMeta(0, rm);
  return loaded;
}

}  // namespace tfprof

#endif  // TFPROF_TESTS_FUZZ_FUZZ_UTIL_H_
