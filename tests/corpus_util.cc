#include "tests/corpus_util.h"

#include "tests/test_util.h"

namespace tfprof {
namespace testing {

InputPaths TfTestData(const std::string& version) {
  const std::string d = CorpusDir() + "/tf-testdata/" + version + "/";
  InputPaths p;
  p.graph_path = d + "graph.pbtxt";
  p.run_meta_path = d + "run_meta";
  p.op_log_path = d + "tfprof_log";
  p.checkpoint_path = d + "ckpt";
  return p;
}

std::vector<CorpusCase> CorpusCases() {
  const std::string c = CorpusDir() + "/";
  std::vector<CorpusCase> cases;
  for (const char* f : {"profile_0_tiny", "profile_0", "profile_100"}) {
    InputPaths p;
    p.profile_path = c + "shiyudian-resnet-tf-dist/" + f;
    cases.push_back({std::string("shiyudian/") + f, p});
  }
  cases.push_back({"tf-testdata/current", TfTestData("current")});
  cases.push_back({"tf-testdata/tf-1.2", TfTestData("tf-1.2")});
  auto graph_only = [&](const std::string& name, const std::string& path) {
    InputPaths p;
    p.graph_path = c + path;
    cases.push_back({name, p});
  };
  auto run_meta_only = [&](const std::string& name, const std::string& path) {
    InputPaths p;
    p.run_meta_path = c + path;
    cases.push_back({name, p});
  };
  graph_only("yaroslavvb/resnet_8_simple",
             "yaroslavvb-stuff/resnet_8_simple.pbtxt");
  graph_only("tensorboard/functionaltests_graph",
             "tensorboard/functionaltests_graph.pbtxt");
  graph_only("tensorboard/graphdef_mnist", "tensorboard/graphdef_mnist.pbtxt");
  run_meta_only("yaroslavvb/dynamic_stitch_gpu_profile",
                "yaroslavvb-stuff/dynamic_stitch_gpu_profile.pbtxt");
  run_meta_only("yaroslavvb/feed_dict", "yaroslavvb-stuff/feed_dict.pbtxt");
  run_meta_only("tensorboard/run_metadata_step99",
                "tensorboard/run_metadata_run_step99_tag_train.pbtxt");
  // Traces (--trace_path).
  auto trace = [&](const std::string& name, const std::string& path) {
    InputPaths p;
    p.trace_path = c + path;
    cases.push_back({name, p});
  };
  trace("trace/ANNA_timeline_01", "tf1-timelines/ANNA_timeline_01.json");
  trace("trace/conv_relation", "tf1-timelines/conv_relation_timeline.ctf.json");
  trace("trace/dlprof_timeline", "tf1-timelines/dlprof_timeline.ctf.json");
  trace("trace/dlprof_mnist_xla",
        "tf1-timelines/dlprof_mnist_xla_timeline_xla.ctf.json");
  trace("trace/mnist-xla", "tf1-timelines/mnist-xla_timeline.ctf.json");
  trace("trace/shiyudian_timeline",
        "shiyudian-resnet-tf-dist/timeline-1300001.json");
  trace("trace/dynamic_stitch",
        "yaroslavvb-stuff/dynamic_stitch_gpu_profile.json");
  trace("trace/timeline.feed", "yaroslavvb-stuff/timeline.feed.json");
  trace("trace/kineto_worker0",
        "pytorch-kineto/worker0.1623143089861.pt.trace.json.gz");
  trace("trace/hta_alexnet",
        "hta/alexnet_benchmark_result_2869224_1695835535_trace.json.gz");
  trace("trace/hta_cpu_only",
        "hta/cpu_only_rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz");
  trace("trace/aoberai_xplane",
        "aoberai-chess-engine/train/plugins/profile/2021_06_16_00_30_02/"
        "aoberai.xplane.pb");
  trace("trace/demo_multi_worker_xplane",
        "tensorflow-profiler-demo/GPU-multi-worker/"
        "34.83.195.179_6003.xplane.pb");
  return cases;
}

}  // namespace testing
}  // namespace tfprof
