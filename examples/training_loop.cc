// Plays a training loop from recorded RunMetadata and profiles it with the
// C++ API: ProfilerHook writes timeline-<step>.json every few steps, and
// ProfileContext traces steps into a Profiler and dumps profile_<step>,
// which `tfprof --profile_path=OUT/profile_<step>` opens.
//
// Usage: training_loop GRAPH RUN_METADATA OUT_DIR [STEPS]
#include <cstdlib>
#include <iostream>
#include <string>

#include "profiler/load/loader.h"
#include "profiler/tfprof.h"

int main(int argc, char** argv) {
  if (argc < 4) {
    std::cerr << "usage: training_loop GRAPH RUN_METADATA OUT_DIR [STEPS]\n";
    return 2;
  }
  const std::string graph_path = argv[1], run_meta_path = argv[2],
                    out_dir = argv[3];
  const int64_t steps = argc > 4 ? std::atoll(argv[4]) : 12;

  tensorflow::GraphDef graph;
  tensorflow::RunMetadata recorded;
  absl::Status s = tfprof::ReadProtoFile(graph_path, true, &graph);
  if (s.ok()) s = tfprof::ReadProtoFile(run_meta_path, false, &recorded);
  if (!s.ok()) {
    std::cerr << "training_loop: " << s.message() << "\n";
    return 1;
  }

  // A timeline every 5 steps, as tf.train.ProfilerHook(save_steps=5) would.
  auto hook = tfprof::ProfilerHook::Create(5, std::nullopt, out_dir);
  // Trace steps 2, 4 and 6 into a profile dumped after step 6.
  tfprof::ProfileContext context(out_dir, std::set<int64_t>{2, 4, 6},
                                 std::set<int64_t>{6});
  context.AddGraph(graph);
  if (!hook.ok()) {
    std::cerr << "training_loop: " << hook.status().message() << "\n";
    return 1;
  }

  int64_t global_step = 0;
  for (int64_t run = 0; run < steps; ++run) {
    const bool hook_trace = hook->BeforeRun();
    const bool context_trace = context.ShouldTrace(run, {"train_op"});
    // A real loop would now call Session::Run with FULL_TRACE when either
    // asks for it; here the recorded RunMetadata stands in for the result.
    const tensorflow::RunMetadata* run_meta =
        hook_trace || context_trace ? &recorded : nullptr;
    auto timeline = hook->AfterRun(global_step, recorded);
    if (!timeline.ok()) {
      std::cerr << "training_loop: " << timeline.status().message() << "\n";
      return 1;
    }
    if (!timeline->empty()) std::cout << "wrote " << *timeline << "\n";
    s = context.AfterRun(run, context_trace ? run_meta : nullptr);
    if (!s.ok()) {
      std::cerr << "training_loop: " << s.message() << "\n";
      return 1;
    }
    ++global_step;
  }
  std::cout << "traced " << context.traced_steps() << " steps; profile in "
            << out_dir << "/profile_6\n";
  return 0;
}
