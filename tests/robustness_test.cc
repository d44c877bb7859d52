// Hostile and broken inputs: damaged corpus files, degenerate graphs and
// random shell input never crash, hang or corrupt anything.
#include <catch2/catch.hpp>
#include <random>
#include <sstream>

#include "cli/app.h"
#include "cli/shell.h"
#include "google/protobuf/text_format.h"
#include "profiler/base/gzip.h"
#include "profiler/load/loader.h"
#include "profiler/load/profile_reader.h"
#include "profiler/render/render_text.h"
#include "profiler/views/views.h"
#include "tests/corpus_util.h"
#include "tests/test_util.h"

namespace tfprof {
namespace {

// Loads `paths`; when that works, every view must answer.
void LoadAndQuery(const InputPaths& paths) {
  auto loaded = LoadProfile(paths);
  if (!loaded.ok()) {
    const std::string msg(loaded.status().message());
    CHECK_FALSE(msg.empty());
    CHECK(msg.find('\n') == std::string::npos);
    return;
  }
  Views views(&(*loaded)->model, (*loaded)->checkpoint.get());
  Options o;
  o.select = {Attr::kMicros,   Attr::kBytes,      Attr::kParams,
              Attr::kFloatOps, Attr::kOccurrence, Attr::kInputShapes,
              Attr::kDevice,   Attr::kOpTypes};
  for (ViewKind v :
       {ViewKind::kScope, ViewKind::kGraph, ViewKind::kOp, ViewKind::kCode}) {
    auto r = views.Query(v, o);
    if (r.ok()) (void)RenderText(*r);
  }
}

// Truncations at spread offsets and bit flips at random places.
void Damage(const std::string& original, const std::string& name,
            const std::function<InputPaths(const std::string&)>& inputs,
            int tries = 24) {
  const std::string dir = testing::TempDir();
  const std::string path = dir + "/" + name;
  std::mt19937 rng(7);
  const size_t n = original.size();
  for (int i = 0; i < tries; ++i) {
    const size_t cut = n * static_cast<size_t>(i) / static_cast<size_t>(tries);
    testing::WriteFile(path, original.substr(0, cut));
    LoadAndQuery(inputs(path));
  }
  for (int i = 0; i < tries; ++i) {
    std::string bad = original;
    for (int k = 0; k < 3; ++k) {
      bad[rng() % n] ^= static_cast<char>(1u << (rng() % 8));
    }
    testing::WriteFile(path, bad);
    LoadAndQuery(inputs(path));
  }
}

TEST_CASE("Damaged corpus files give an error or a correct load") {
  const std::string tiny = testing::ReadFile(
      testing::CorpusFile("shiyudian-resnet-tf-dist/profile_0_tiny"));
  Damage(tiny, "profile", [](const std::string& p) {
    InputPaths in;
    in.profile_path = p;
    return in;
  });
  const InputPaths tfdata = testing::TfTestData();
  Damage(testing::ReadFile(tfdata.run_meta_path), "run_meta",
         [&](const std::string& p) {
           InputPaths in = tfdata;
           in.run_meta_path = p;
           return in;
         });
  Damage(testing::ReadFile(tfdata.graph_path), "graph.pbtxt",
         [&](const std::string& p) {
           InputPaths in = tfdata;
           in.graph_path = p;
           return in;
         });
  Damage(testing::ReadFile(tfdata.op_log_path), "tfprof_log",
         [&](const std::string& p) {
           InputPaths in = tfdata;
           in.op_log_path = p;
           return in;
         });
  auto run_meta = [](const std::string& p) {
    InputPaths in;
    in.run_meta_path = p;
    return in;
  };
  auto graph = [](const std::string& p) {
    InputPaths in;
    in.graph_path = p;
    return in;
  };
  auto profile = [](const std::string& p) {
    InputPaths in;
    in.profile_path = p;
    return in;
  };
  for (const char* f : {"yaroslavvb-stuff/feed_dict.pbtxt",
                        "yaroslavvb-stuff/dynamic_stitch_gpu_profile.pbtxt",
                        "tensorboard/run_metadata_run_step99_tag_train.pbtxt",
                        "tf-testdata/tf-1.2/run_meta"}) {
    if (!testing::HaveCorpusFile(f)) continue;
    INFO(f);
    Damage(testing::ReadFile(testing::CorpusFile(f)), "rm", run_meta, 8);
  }
  for (const char* f :
       {"yaroslavvb-stuff/resnet_8_simple.pbtxt",
        "tensorboard/functionaltests_graph.pbtxt",
        "tensorboard/graphdef_mnist.pbtxt", "tf-testdata/tf-1.2/graph.pbtxt"}) {
    if (!testing::HaveCorpusFile(f)) continue;
    INFO(f);
    Damage(testing::ReadFile(testing::CorpusFile(f)), "graph", graph, 8);
  }
  for (const char* f : {"shiyudian-resnet-tf-dist/profile_0",
                        "shiyudian-resnet-tf-dist/profile_100"}) {
    INFO(f);
    Damage(testing::ReadFile(testing::CorpusFile(f)), "profile", profile, 4);
  }
  // Every trace file of the corpus (gzip ones damaged as stored).
  auto trace = [](const std::string& p) {
    InputPaths in;
    in.trace_path = p;
    return in;
  };
  for (const auto& cc : testing::CorpusCases()) {
    if (cc.paths.trace_path.empty()) continue;
    INFO(cc.name);
    const std::string& f = cc.paths.trace_path;
    const std::string ext =
        f.size() > 3 && f.substr(f.size() - 3) == ".gz" ? ".json.gz" : "";
    Damage(testing::ReadFile(f), "trace" + ext, trace, 6);
  }
}

// A cut-off XSpace says so, by its name, gzipped or not, where another
// file gets the list of formats tfprof reads.
TEST_CASE("A truncated XSpace is named as one") {
  absl::StatusOr<std::string> whole = Gunzip(testing::ReadFile(
      testing::BundledCorpusDir() + "/gpu-h200-2026/jax_lm_cb.xplane.pb.gz"));
  REQUIRE(whole.ok());
  const std::string dir = testing::TempDir();
  const std::string cut = whole->substr(0, 300000);
  testing::WriteFile(dir + "/cut.xplane.pb", cut);
  testing::WriteFile(dir + "/cut.bin", cut);
  for (const char* file : {"/cut.xplane.pb", "/cut.bin"}) {
    InputPaths in;
    in.trace_path = dir + file;
    auto loaded = LoadProfile(in);
    REQUIRE_FALSE(loaded.ok());
    const std::string message(loaded.status().message());
    INFO(message);
    CHECK(message.find(in.trace_path) != std::string::npos);
    CHECK(message.find('\n') == std::string::npos);
    CHECK((message.find("not a readable XSpace") != std::string::npos) ==
          (std::string(file) == "/cut.xplane.pb"));
  }
}

TEST_CASE("Absurd length fields are rejected, not allocated") {
  // Field 1 (nodes) of a ProfileProto claiming ~4 GiB of payload.
  const std::string bad("\x0a\xff\xff\xff\xff\x0f\x01\x02", 8);
  const std::string dir = testing::TempDir();
  testing::WriteFile(dir + "/huge", bad);
  InputPaths in;
  in.profile_path = dir + "/huge";
  auto r = LoadProfile(in);
  REQUIRE_FALSE(r.ok());
  CHECK(std::string(r.status().message()).find(dir + "/huge") !=
        std::string::npos);
}

void QueryAll(const Model& m, int64_t max_depth = 1000000) {
  Views views(&m, nullptr);
  Options o;
  o.max_depth = max_depth;
  o.select = {Attr::kMicros, Attr::kParams, Attr::kOccurrence,
              Attr::kInputShapes};
  for (ViewKind v : {ViewKind::kScope, ViewKind::kGraph, ViewKind::kOp}) {
    auto r = views.Query(v, o);
    REQUIRE(r.ok());
    CHECK_FALSE(RenderText(*r).empty());
  }
}

TEST_CASE("A scope 10,000 levels deep") {
  std::string name = "n";
  for (int i = 0; i < 10000; ++i) name += "/n";
  tfcore::GraphDef g;
  auto* node = g.add_node();
  node->set_name(name);
  node->set_op("Const");
  Model m;
  m.AddGraph(g);
  QueryAll(m);
}

TEST_CASE("A dataflow chain of 100,000 nodes, and a node with 100,000 inputs") {
  tfcore::GraphDef g;
  for (int i = 0; i < 100000; ++i) {
    auto* n = g.add_node();
    n->set_name("c" + std::to_string(i));
    n->set_op("Identity");
    if (i > 0) n->add_input("c" + std::to_string(i - 1));
  }
  auto* wide = g.add_node();
  wide->set_name("wide");
  wide->set_op("AddN");
  for (int i = 0; i < 100000; ++i) wide->add_input("c" + std::to_string(i));
  Model m;
  m.AddGraph(g);
  QueryAll(m);
}

TEST_CASE("A scope with a million children and a node with a million inputs") {
  tfcore::GraphDef g;
  auto* wide = g.add_node();
  wide->set_name("sum");
  wide->set_op("AddN");
  for (int i = 0; i < 1000000; ++i) {
    auto* n = g.add_node();
    n->set_name("wide/op" + std::to_string(i));
    n->set_op("Const");
    wide->add_input(n->name());
  }
  Model m;
  m.AddGraph(g);
  REQUIRE(m.size() == 1000001);
  Views views(&m, nullptr);
  Options o;
  o.max_depth = 3;
  o.select = {Attr::kOccurrence};
  auto scope = views.Query(ViewKind::kScope, o);
  REQUIRE(scope.ok());
  // The root, "sum", "wide" and its million children.
  CHECK(scope->nodes.size() == 1000003);
  auto graph = views.Query(ViewKind::kGraph, o);
  REQUIRE(graph.ok());
  CHECK(graph->nodes.size() == 1000002);  // root, sum and its inputs
  auto op = views.Query(ViewKind::kOp, o);
  REQUIRE(op.ok());
  REQUIRE(op->nodes.size() == 3);
  CHECK(op->nodes[op->nodes[0].children[0]].members.size() +
            op->nodes[op->nodes[0].children[1]].members.size() ==
        1000001);
}

TEST_CASE("Cycles, self-inputs, missing inputs and duplicate names") {
  Model m;
  m.AddGraph(testing::ParseTextProto<tfcore::GraphDef>(R"pb(
    node { name: "a" op: "Merge" input: "b" }
    node { name: "b" op: "NextIteration" input: "a" }
    node { name: "self" op: "Loop" input: "self" input: "^self" }
    node { name: "orphan" op: "Add" input: "nowhere:3" input: "^gone" }
    node { name: "a" op: "Duplicate" }
    node { name: "" op: "Empty" }
    node { name: "x:1" op: "Odd" input: "::" input: "^" })pb"));
  QueryAll(m);
  // Cycles have no sinks: their nodes are simply not reached in the graph
  // view, and the scope view still shows them.
  Views views(&m, nullptr);
  auto r = views.Query(ViewKind::kScope, Options());
  REQUIRE(r.ok());
  CHECK(RenderText(*r).find("  a (") != std::string::npos);
  // A round trip keeps only resolvable inputs.
  auto back = ModelFromProfileProto(m.ToProfileProto());
  REQUIRE(back.ok());
  QueryAll(*back);
}

TEST_CASE("Negative, huge and absent statistics") {
  Model m;
  m.AddGraph(testing::ParseTextProto<tfcore::GraphDef>(R"pb(
    node {
      name: "v"
      op: "VariableV2"
      attr {
        key: "shape"
        value {
          shape {
            dim { size: 9223372036854775807 }
            dim { size: 9223372036854775807 }
          }
        }
      }
    }
    node {
      name: "w"
      op: "VariableV2"
      attr {
        key: "shape"
        value { shape { dim { size: -5 } } }
      }
    })pb"));
  REQUIRE(m.AddRunMeta(0, testing::ParseTextProto<tfcore::RunMetadata>(R"pb(
                         step_stats {
                           dev_stats {
                             device: "/job:l/replica:0/task:0/cpu:0"
                             node_stats {
                               node_name: "v"
                               all_start_micros: 9223372036854775000
                               op_end_rel_micros: -50
                               memory {
                                 allocator_name: "GPU"
                                 total_bytes: -100
                                 peak_bytes: 9223372036854775807
                               }
                             }
                             node_stats {
                               node_name: "w"
                               all_start_micros: -5
                               op_end_rel_micros: 3
                             }
                           }
                         })pb"))
              .ok());
  CHECK(m.Find("v")->Parameters() == INT64_MAX);  // saturated
  CHECK(m.Find("w")->Parameters() == 0);
  QueryAll(m);
  // Unknown steps are reported, empty profiles answer.
  Views views(&m, nullptr);
  Options o;
  o.step = 5;
  CHECK_FALSE(views.Query(ViewKind::kScope, o).ok());
  Model empty;
  QueryAll(empty);
  tfpb::ProfileProto p;
  p.add_steps(3);  // a step no node ran in
  (*p.mutable_nodes())[0].set_name("a");
  (*(*p.mutable_nodes())[0].mutable_execs())[9].set_run_count(1);
  auto loaded = ModelFromProfileProto(p);
  REQUIRE(loaded.ok());
  QueryAll(*loaded);
}

TEST_CASE("Extreme and empty options") {
  auto loaded = LoadProfile(testing::TfTestData());
  REQUIRE(loaded.ok());
  Views views(&(*loaded)->model, nullptr);
  Options o;
  o.max_depth = INT64_MAX;
  o.min_micros = -100;
  o.account_type_regexes.clear();
  o.show_name_regexes.clear();
  o.select.clear();
  for (ViewKind v : {ViewKind::kScope, ViewKind::kGraph, ViewKind::kOp}) {
    auto r = views.Query(v, o);
    REQUIRE(r.ok());
    CHECK(RenderText(*r).rfind("node name | ", 0) == 0);
  }
}

TEST_CASE("The shell survives 10,000 random lines") {
  InputPaths in;
  in.profile_path =
      testing::CorpusFile("shiyudian-resnet-tf-dist/profile_0_tiny");
  auto loaded = LoadProfile(in);
  REQUIRE(loaded.ok());
  std::ostringstream out, err;
  cli::Shell shell(std::move(*loaded), in, Options(), &out, &err);
  const std::vector<std::string> words = {"scope",
                                          "graph",
                                          "op",
                                          "code",
                                          "set",
                                          "help",
                                          "advise",
                                          "check",
                                          "-max_depth",
                                          "-select",
                                          "-order_by",
                                          "-output",
                                          "-step",
                                          "micros",
                                          "bytes",
                                          "name",
                                          "1",
                                          "-1",
                                          "999999999999999999999",
                                          "'",
                                          "\"",
                                          ",",
                                          "a(b",
                                          ".*",
                                          "-min_micros",
                                          "none",
                                          "file:",
                                          "json",
                                          "timeline:outfile",
                                          "params<=",
                                          "micros[.*]<1",
                                          "-show_name_regexes",
                                          "",
                                          " ",
                                          "\t",
                                          "-account_displayed_op_only",
                                          "summary",
                                          "timing",
                                          "on",
                                          "x"};
  std::mt19937 rng(42);
  for (int i = 0; i < 10000 && !shell.quit_requested(); ++i) {
    std::string line;
    const int n = static_cast<int>(rng() % 6);
    for (int k = 0; k < n; ++k) {
      line += words[rng() % words.size()];
      line += (rng() % 4 == 0) ? "" : " ";
    }
    (void)shell.RunLine(line);  // errors are fine; crashes are not
    if (out.tellp() > (1 << 20)) out.str("");
  }
}

}  // namespace
}  // namespace tfprof

namespace tfprof {
namespace {

TEST_CASE(
    "Regression: totals that overflow int64 saturate (found by fuzzing)") {
  // A ProfileProto whose parameter counts sum past 2^63 (fuzz_profile_proto
  // found the signed overflow under UBSan).
  InputPaths in;
  in.profile_path =
      testing::SourceDir() + "/testdata/regression/profile_overflow_totals";
  auto loaded = LoadProfile(in);
  REQUIRE(loaded.ok());
  QueryAll((*loaded)->model);
  Views views(&(*loaded)->model, nullptr);
  Options o;
  o.select = {Attr::kParams};
  auto r = views.Query(ViewKind::kScope, o);
  REQUIRE(r.ok());
  CHECK(r->root().total.parameters == INT64_MAX);
}

}  // namespace
}  // namespace tfprof
