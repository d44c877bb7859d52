#include "tests/corpus_util.h"

#include <algorithm>
#include <cstdio>

#include "tests/json_parse.h"
#include "tests/test_util.h"

namespace tfprof {
namespace testing {

InputPaths TfTestData(const std::string& version) {
  const std::string d = "tf-testdata/" + version + "/";
  InputPaths p;
  p.graph_path = CorpusFile(d + "graph.pbtxt");
  p.run_meta_path = CorpusFile(d + "run_meta");
  p.op_log_path = CorpusFile(d + "tfprof_log");
  const std::string index = CorpusFile(d + "ckpt.index");
  p.checkpoint_path = index.substr(0, index.size() - 6);  // without ".index"
  return p;
}

namespace {

// An input path that is unset, or names a readable file.
bool Usable(const std::string& path) { return path.empty() || Readable(path); }

// The cases whose files are there (all bundled ones; the wider corpus's when
// it is present). Prints one "skipped" line naming the missing cases.
std::vector<CorpusCase> Available(const std::vector<CorpusCase>& cases) {
  std::vector<CorpusCase> out;
  std::string missing;
  for (const CorpusCase& c : cases) {
    const InputPaths& p = c.paths;
    if (Usable(p.profile_path) && Usable(p.graph_path) &&
        Usable(p.run_meta_path) && Usable(p.op_log_path) &&
        Usable(p.trace_path)) {
      out.push_back(c);
    } else {
      missing += (missing.empty() ? "" : ", ") + c.name;
    }
  }
  if (!missing.empty()) {
    std::printf("skipped: corpus not found at %s (%s)\n", CorpusDir().c_str(),
                missing.c_str());
  }
  return out;
}

}  // namespace

std::vector<CorpusCase> CorpusCases() {
  std::vector<CorpusCase> cases;
  auto c = [](const std::string& rel) { return CorpusFile(rel); };
  for (const char* f : {"profile_0_tiny", "profile_0", "profile_100"}) {
    InputPaths p;
    p.profile_path = c(std::string("shiyudian-resnet-tf-dist/") + f);
    cases.push_back({std::string("shiyudian/") + f, p});
  }
  cases.push_back({"tf-testdata/current", TfTestData("current")});
  cases.push_back({"tf-testdata/tf-1.2", TfTestData("tf-1.2")});
  auto graph_only = [&](const std::string& name, const std::string& path) {
    InputPaths p;
    p.graph_path = c(path);
    cases.push_back({name, p});
  };
  auto run_meta_only = [&](const std::string& name, const std::string& path) {
    InputPaths p;
    p.run_meta_path = c(path);
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
    p.trace_path = c(path);
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
  return Available(cases);
}

double TorchMaxAllocated(const std::string& run) {
  const std::string refs = "gpu-h200-2026/torch_refs.json";
  if (!HaveCorpusFile(refs)) return -1;
  JsonValue doc;
  std::string error;
  if (!ParseJsonFile(CorpusFile(refs), &doc, &error)) return -1;
  double most = -1;
  for (const JsonValue& s : doc.at(run).at("steps").array) {
    if (s.at("active").boolean) {
      most = std::max(most, s.at("max_allocated").number);
    }
  }
  return most;
}

}  // namespace testing
}  // namespace tfprof
