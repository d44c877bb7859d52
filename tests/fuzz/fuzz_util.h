// Shared pieces of the libFuzzer targets.
#ifndef TFPROF_TESTS_FUZZ_FUZZ_UTIL_H_
#define TFPROF_TESTS_FUZZ_FUZZ_UTIL_H_

#include <string>

#include "profiler/render/render_text.h"
#include "profiler/views/views.h"

namespace tfprof {

// Every view, with most attributes, rendered: what a user would run.
inline void QueryEveryView(const Model& model) {
  Views views(&model, nullptr);
  Options o;
  o.max_depth = 1000;
  o.select = {"micros",     "bytes",        "params", "float_ops",
              "occurrence", "input_shapes", "device", "op_types"};
  for (ViewKind v :
       {ViewKind::kScope, ViewKind::kGraph, ViewKind::kOp, ViewKind::kCode}) {
    auto r = views.Query(v, o);
    if (r.ok()) (void)RenderText(*r);
  }
}

}  // namespace tfprof

#endif  // TFPROF_TESTS_FUZZ_FUZZ_UTIL_H_
