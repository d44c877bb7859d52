// View semantics on small hand-made models; expected texts derived by hand
// from tfprof's rules.
#include "profiler/views/views.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "google/protobuf/text_format.h"
#include "profiler/base/parallel.h"
#include "profiler/load/loader.h"
#include "profiler/render/render_json_csv.h"
#include "profiler/render/render_proto.h"
#include "profiler/render/render_text.h"
#include "profiler/session/session.h"
#include "profiler/views/view_structure.h"
#include "tests/corpus_util.h"
#include "tests/test_util.h"
#include "tests/trace_facts_util.h"
#include "tools/synthetic_profile.h"

namespace tfprof {
namespace {

// a/b (MatMul, 10us), a/c (Add, 20us, input a/b), d (Add, 5us, inputs a/b, a/c)
Model SmallModel() {
  Model m;
  m.AddGraph(testing::ParseTextProto<tfcore::GraphDef>(R"pb(
    node { name: "a/b" op: "MatMul" }
    node { name: "a/c" op: "Add" input: "a/b" }
    node { name: "d" op: "Add" input: "a/b" input: "a/c" })pb"));
  REQUIRE(m.AddRunMeta(0, testing::ParseTextProto<tfcore::RunMetadata>(R"pb(
                         step_stats {
                           dev_stats {
                             device: "/job:l/replica:0/task:0/cpu:0"
                             node_stats {
                               node_name: "a/b"
                               all_start_micros: 1
                               op_end_rel_micros: 10
                             }
                             node_stats {
                               node_name: "a/c"
                               all_start_micros: 1
                               op_end_rel_micros: 20
                             }
                             node_stats {
                               node_name: "d"
                               all_start_micros: 1
                               op_end_rel_micros: 5
                             }
                           }
                         })pb"))
              .ok());
  return m;
}

std::string Run(const Model& m, ViewKind v,
                const std::vector<std::string>& opts) {
  Views views(&m, nullptr);
  Options o;
  REQUIRE(ParseOptionTokens(opts, 0, &o).ok());
  auto r = views.Query(v, o);
  REQUIRE(r.ok());
  return RenderText(*r);
}

TEST_CASE("scope view: tree by name, totals include children") {
  Model m = SmallModel();
  CHECK(Run(m, ViewKind::kScope, {"-select", "cpu_micros"}) ==
        "node name | cpu execution time\n"
        "_TFProfRoot (--/35us)\n"
        "  a (0us/30us)\n"
        "    a/b (10us/10us)\n"
        "    a/c (20us/20us)\n"
        "  d (5us/5us)\n");
}

// Names where a scope's run of descendants is interleaved with other names
// ("a/b" < "a/b-x" < "a/b/c": '-' and '.' sort before '/'), a node named as
// a scope, and empty scopes ("/lead", "t/", "u//v").
TEST_CASE("scope view: every prefix once under its parent, children by name") {
  const std::vector<std::string> names = {
      "a/b/c", "a/b-x",   "a/b.c/f", "a/b/d",   "a",
      "a-b/c", "a.1/e",   "/lead",   "/lead/x", "t/",
      "u//v",  "x/y/z/w", "x/y",     "a/b-x/q", "a/b/c/e"};
  tfcore::GraphDef graph;
  for (const std::string& n : names) {
    tfcore::NodeDef* node = graph.add_node();
    node->set_name(n);
    node->set_op("Add");
  }
  Model m;
  m.AddGraph(graph);
  // Expected, independently: a node's parent is its name up to its last
  // '/' (a scope; the root for a name without one).
  std::map<std::string, std::set<std::string>> children;
  std::set<std::string> all(names.begin(), names.end());
  for (const std::string& n : names) {
    for (size_t s = n.find('/'); s != std::string::npos; s = n.find('/', s + 1))
      all.insert(n.substr(0, s));
  }
  for (const std::string& n : all) {
    const size_t s = n.rfind('/');
    children[s == std::string::npos ? kRootName : n.substr(0, s)].insert(n);
  }
  Views views(&m, nullptr);
  Options o;
  o.max_depth = 100;
  for (int round = 0; round < 2; ++round) {  // cold, then from the cache
    absl::StatusOr<ResultTree> r = views.Query(ViewKind::kScope, o);
    REQUIRE(r.ok());
    CHECK(r->nodes.size() == all.size() + 1);
    for (const ResultNode& n : r->nodes) {
      std::vector<std::string> got;
      for (size_t c : n.children) got.push_back(r->nodes[c].name);
      const std::set<std::string>& want = children[n.name];
      CHECK(got == std::vector<std::string>(want.begin(), want.end()));
      // Scopes that are also nodes are those nodes.
      const bool is_node =
          std::find(names.begin(), names.end(), n.name) != names.end();
      CHECK((n.graph_node != nullptr) == is_node);
    }
  }
}

TEST_CASE("scope view: non-accounted parents print --") {
  Model m = SmallModel();
  CHECK(Run(m, ViewKind::kScope,
            {"-select", "cpu_micros", "-account_type_regexes", "MatMul"}) ==
        "node name | cpu execution time\n"
        "_TFProfRoot (--/10us)\n"
        "  a (--/10us)\n"
        "    a/b (10us/10us)\n");
}

TEST_CASE("scope view: ordering, depth and name filters") {
  Model m = SmallModel();
  CHECK(Run(m, ViewKind::kScope,
            {"-select", "cpu_micros", "-order_by", "cpu_micros"}) ==
        "node name | cpu execution time\n"
        "_TFProfRoot (--/35us)\n"
        "  a (0us/30us)\n"
        "    a/c (20us/20us)\n"
        "    a/b (10us/10us)\n"
        "  d (5us/5us)\n");
  CHECK(
      Run(m, ViewKind::kScope, {"-select", "cpu_micros", "-max_depth", "2"}) ==
      "node name | cpu execution time\n"
      "_TFProfRoot (--/35us)\n"
      "  a (0us/30us)\n"
      "  d (5us/5us)\n");
  // A hidden node hands its shown children to its parent.
  CHECK(Run(m, ViewKind::kScope,
            {"-select", "cpu_micros", "-hide_name_regexes", "a"}) ==
        "node name | cpu execution time\n"
        "_TFProfRoot (--/35us)\n"
        "  a/b (10us/10us)\n"
        "  a/c (20us/20us)\n"
        "  d (5us/5us)\n");
  CHECK(Run(m, ViewKind::kScope,
            {"-select", "cpu_micros", "-trim_name_regexes", "a"}) ==
        "node name | cpu execution time\n"
        "_TFProfRoot (--/35us)\n"
        "  a (0us/30us)\n"
        "  d (5us/5us)\n");
  CHECK(Run(m, ViewKind::kScope,
            {"-select", "cpu_micros", "-start_name_regexes", "a/c"}) ==
        "node name | cpu execution time\n"
        "_TFProfRoot (--/35us)\n"
        "  a/c (20us/20us)\n");
  CHECK(Run(m, ViewKind::kScope,
            {"-select", "cpu_micros", "-min_micros", "15"}) ==
        "node name | cpu execution time\n"
        "_TFProfRoot (--/35us)\n"
        "  a (0us/30us)\n"
        "    a/c (20us/20us)\n");
  CHECK(Run(m, ViewKind::kScope,
            {"-select", "cpu_micros", "-min_micros", "15",
             "-account_displayed_op_only", "true"}) ==
        "node name | cpu execution time\n"
        "_TFProfRoot (--/20us)\n"
        "  a (0us/20us)\n"
        "    a/c (20us/20us)\n");
}

TEST_CASE("graph view: from outputs to inputs, shared inputs once") {
  Model m = SmallModel();
  CHECK(Run(m, ViewKind::kGraph, {"-select", "cpu_micros"}) ==
        "node name | cpu execution time\n"
        "_TFProfRoot (--/35us)\n"
        "  d (5us/35us)\n"
        "    a/b (10us/10us)\n"
        "    a/c (20us/20us)\n");
  // Non-accounted nodes are dropped; their accounted inputs move up.
  CHECK(Run(m, ViewKind::kGraph,
            {"-select", "cpu_micros", "-account_type_regexes", "MatMul"}) ==
        "node name | cpu execution time\n"
        "_TFProfRoot (--/10us)\n"
        "  a/b (10us/10us)\n");
}

TEST_CASE("op view: cumulative totals and percentages") {
  Model m = SmallModel();
  CHECK(
      Run(m, ViewKind::kOp,
          {"-select", "cpu_micros,occurrence", "-order_by", "cpu_micros"}) ==
      "node name | cpu execution time | op occurrence (run|defined)\n"
      "Add                              25us (100.00%, 71.43%),        2|2\n"
      "MatMul                            10us (28.57%, 28.57%),        1|1\n");
  CHECK(Run(m, ViewKind::kOp,
            {"-select", "cpu_micros", "-order_by", "cpu_micros", "-max_depth",
             "0"}) ==
        "node name | cpu execution time\n"
        "Add                              25us (100.00%, 71.43%)\n");
  CHECK(Run(m, ViewKind::kOp,
            {"-select", "cpu_micros", "-min_occurrence", "2"}) ==
        "node name | cpu execution time\n"
        "Add                              25us (100.00%, 71.43%)\n");
}

TEST_CASE("occurrence and device attributes in the scope view") {
  Model m = SmallModel();
  CHECK(Run(m, ViewKind::kScope, {"-select", "occurrence,device"}) ==
        "node name | assigned devices | op count (run|defined)\n"
        "_TFProfRoot (--/3|--/4)\n"
        "  a (0/2|1/3)\n"
        "    a/b (/job:l/replica:0/task:0/cpu:0, 1/1|1/1)\n"
        "    a/c (/job:l/replica:0/task:0/cpu:0, 1/1|1/1)\n"
        "  d (/job:l/replica:0/task:0/cpu:0, 1/1|1/1)\n");
}

// A step of SmallModel's graph with other times (`scale` times step 0's).
tfcore::RunMetadata ScaledStep(int scale) {
  tfcore::RunMetadata rm;
  auto* dev = rm.mutable_step_stats()->add_dev_stats();
  dev->set_device("/job:l/replica:0/task:0/cpu:0");
  const std::pair<const char*, int> kNodes[] = {
      {"a/b", 10}, {"a/c", 20}, {"d", 5}};
  for (const auto& [name, micros] : kNodes) {
    auto* ns = dev->add_node_stats();
    ns->set_node_name(name);
    ns->set_all_start_micros(1);
    ns->set_op_end_rel_micros(micros * scale);
  }
  return rm;
}

TEST_CASE("One Views answers alternating views and steps as fresh ones do") {
  // The structures and the stats each view reads are kept between queries
  // (the stats also laid out in each structure's order): a query after
  // another view's, another step's or a change of the model must still see
  // its own.
  Model m = SmallModel();
  REQUIRE(m.AddRunMeta(1, ScaledStep(3)).ok());
  Views views(&m, nullptr);
  auto check = [&](ViewKind v, const std::vector<std::string>& opts) {
    Options o;
    REQUIRE(ParseOptionTokens(opts, 0, &o).ok());
    auto r = views.Query(v, o);
    REQUIRE(r.ok());
    CHECK(RenderText(*r) == Run(m, v, opts));
  };
  const std::vector<std::string> all = {"-select", "micros,occurrence"};
  const std::vector<std::string> step0 = {"-step", "0", "-select", "micros"};
  const std::vector<std::string> step1 = {"-step", "1", "-select", "micros"};
  check(ViewKind::kScope, all);
  check(ViewKind::kGraph, all);
  check(ViewKind::kScope, step0);
  check(ViewKind::kGraph, step1);
  check(ViewKind::kGraph, step0);
  check(ViewKind::kScope, all);
  check(ViewKind::kOp, step1);
  check(ViewKind::kGraph, all);
  // The model grows a step: the kept stats are not those any more.
  REQUIRE(m.AddRunMeta(2, ScaledStep(7)).ok());
  check(ViewKind::kGraph, all);
  check(ViewKind::kScope, all);
  check(ViewKind::kScope, {"-step", "2", "-select", "micros"});
  // The step's figures differ, so a stale copy would show.
  CHECK(Run(m, ViewKind::kScope, step0) != Run(m, ViewKind::kScope, step1));
}

TEST_CASE("an unknown step lists the steps that exist") {
  Model m = SmallModel();
  Views views(&m, nullptr);
  Options o;
  o.step = 7;
  auto r = views.Query(ViewKind::kScope, o);
  REQUIRE_FALSE(r.ok());
  CHECK(std::string(r.status().message()).find("available steps: 0") !=
        std::string::npos);
}

TEST_CASE("code view needs call stacks") {
  Model m = SmallModel();
  Views views(&m, nullptr);
  CHECK_FALSE(views.Query(ViewKind::kCode, Options()).ok());
}

TEST_CASE("code view groups by call stack, gradients beside forward ops") {
  Model m = SmallModel();
  m.AddGraph(testing::ParseTextProto<tfcore::GraphDef>(R"pb(
    node { name: "gradients/a/b_grad/MatMul" op: "MatMul" })pb"));
  m.AddOpLog(testing::ParseTextProto<tfpb::OpLogProto>(R"pb(
    id_to_string { key: 1 value: "/src/model.py" }
    id_to_string { key: 2 value: "build_model" }
    id_to_string { key: 3 value: "a_function_with_a_very_long_name" }
    log_entries {
      name: "a/b"
      code_def {
        traces { file_id: 1 lineno: 10 function_id: 2 }
        traces { file_id: 1 lineno: 20 function_id: 3 }
      }
    }
    log_entries {
      name: "gradients/a/b_grad/MatMul"
      code_def { traces { file_id: 1 lineno: 99 function_id: 2 } }
    })pb"));
  REQUIRE(m.AddRunMeta(0, testing::ParseTextProto<tfcore::RunMetadata>(R"pb(
                         step_stats {
                           dev_stats {
                             device: "/job:l/replica:0/task:0/cpu:0"
                             node_stats {
                               node_name: "gradients/a/b_grad/MatMul"
                               all_start_micros: 1
                               op_end_rel_micros: 7
                             }
                           }
                         })pb"))
              .ok());
  CHECK(Run(m, ViewKind::kCode, {"-select", "cpu_micros"}) ==
        "node name | cpu execution time\n"
        "_TFProfRoot (--/17us)\n"
        "  model.py:10:build_model (0us/10us)\n"
        "    model.py:20:a_function_with_a... (10us/10us)\n"
        "  model.py:10:build_model (gradient) (0us/7us)\n"
        "    model.py:20:a_function_with_a... (gradient) (7us/7us)\n");
  // tfprof crashed on -max_depth 0 in the code view; only the root shows.
  CHECK(Run(m, ViewKind::kCode, {"-select", "cpu_micros", "-max_depth", "0"}) ==
        "node name | cpu execution time\n"
        "_TFProfRoot (--/17us)\n");
}

}  // namespace
}  // namespace tfprof

namespace tfprof {
namespace {

TEST_CASE("Result trees convert to TensorFlow's protos") {
  Model m = SmallModel();
  Views views(&m, nullptr);
  Options o;
  auto scope = views.Query(ViewKind::kScope, o);
  REQUIRE(scope.ok());
  tfpb::GraphNodeProto g = ToGraphNodeProto(*scope);
  CHECK(g.name() == "_TFProfRoot");
  CHECK(g.total_exec_micros() == 35);
  CHECK(g.total_definition_count() == 4);
  REQUIRE(g.children_size() == 2);
  CHECK(g.children(0).name() == "a");
  CHECK(g.children(0).total_cpu_exec_micros() == 30);
  CHECK(g.children(0).total_definition_count() == 3);
  REQUIRE(g.children(0).children_size() == 2);
  const tfpb::GraphNodeProto& ac = g.children(0).children(1);
  CHECK(ac.name() == "a/c");
  CHECK(ac.exec_micros() == 20);
  CHECK(ac.run_count() == 1);
  REQUIRE(ac.devices_size() == 1);
  // a/c reads a/b, whose output shape is unknown.
  REQUIRE(ac.input_shapes().count(0) == 1);
  CHECK(ac.input_shapes().at(0).unknown_rank());

  o.order_by = Attr::kMicros;
  auto op = views.Query(ViewKind::kOp, o);
  REQUIRE(op.ok());
  tfpb::MultiGraphNodeProto mg = ToMultiGraphNodeProto(*op);
  CHECK(mg.total_exec_micros() == 35);
  REQUIRE(mg.children_size() == 1);  // a chain, one row per level
  CHECK(mg.children(0).name() == "Add");
  CHECK(mg.children(0).exec_micros() == 25);
  CHECK(mg.children(0).total_exec_micros() == 35);
  CHECK(mg.children(0).graph_nodes_size() == 2);
  REQUIRE(mg.children(0).children_size() == 1);
  CHECK(mg.children(0).children(0).name() == "MatMul");
  CHECK(mg.children(0).children(0).total_exec_micros() == 10);
}

TEST_CASE("A set cancel flag stops queries") {
  Model m = SmallModel();
  Views views(&m, nullptr);
  std::atomic<bool> cancel{true};
  views.SetCancelFlag(&cancel);
  for (ViewKind v : {ViewKind::kScope, ViewKind::kGraph, ViewKind::kCode}) {
    if (v == ViewKind::kCode) continue;  // needs call stacks
    auto r = views.Query(v, Options());
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == absl::StatusCode::kCancelled);
  }
  cancel = false;
  CHECK(views.Query(ViewKind::kScope, Options()).ok());
}

TEST_CASE("CSV output: a row per displayed node, raw numbers") {
  Model m = SmallModel();
  Views views(&m, nullptr);
  Options o;
  o.select = {Attr::kCpuMicros, Attr::kOccurrence};
  auto r = views.Query(ViewKind::kScope, o);
  REQUIRE(r.ok());
  CHECK(RenderCsv(*r) ==
        "name,depth,accounted,cpu_micros,total_cpu_micros,run_count,"
        "defined_count\n"
        "_TFProfRoot,0,false,0,35,0,4\n"
        "a,1,true,0,30,0,3\n"
        "a/b,2,true,10,10,1,1\n"
        "a/c,2,true,20,20,1,1\n"
        "d,1,true,5,5,1,1\n");
  o.order_by = Attr::kCpuMicros;
  r = views.Query(ViewKind::kOp, o);
  REQUIRE(r.ok());
  CHECK(RenderCsv(*r) ==
        "name,depth,accounted,cpu_micros,total_cpu_micros,run_count,"
        "defined_count\n"
        "Add,1,true,25,35,2,2\n"
        "MatMul,1,true,10,10,1,1\n");
}

TEST_CASE("JSON output carries raw numbers") {
  Model m = SmallModel();
  Views views(&m, nullptr);
  Options o;
  o.select = {Attr::kMicros, Attr::kOccurrence};
  auto r = views.Query(ViewKind::kScope, o);
  REQUIRE(r.ok());
  const std::string json = RenderJson(*r);
  CHECK(json.find("\"view\": \"scope\"") != std::string::npos);
  CHECK(json.find("{\"name\": \"a/c\", \"accounted\": true, \"micros\": "
                  "{\"self\": 20, \"total\": 20}") != std::string::npos);
  CHECK(std::count(json.begin(), json.end(), '{') ==
        std::count(json.begin(), json.end(), '}'));
}

}  // namespace
}  // namespace tfprof

namespace tfprof {
namespace {

// A generated profile large enough that queries build the view structure
// and the statistics on two threads and sort names in two halves; loaded
// once (each test's queries are cold on its own Views).
struct LargeProfile {
  tfpb::ProfileProto proto;  // protobuf's own parse of the same bytes
  std::unique_ptr<LoadedProfile> loaded;  // our load of them
};

const LargeProfile& Large() {
  static const LargeProfile* const large = [] {
    auto* l = new LargeProfile();
    GenOptions g;
    g.nodes = 2 * static_cast<int64_t>(kParallelMinItems);
    g.steps = 2;
    std::string bytes;
    GenerateProfile(g, [&](const std::string& piece) { bytes += piece; });
    InputPaths in;
    in.profile_path = testing::TempDir() + "/large_profile";
    testing::WriteFile(in.profile_path, bytes);
    REQUIRE(l->proto.ParseFromString(bytes));
    auto loaded = LoadProfile(in);
    REQUIRE(loaded.ok());
    l->loaded = std::move(*loaded);
    return l;
  }();
  return *large;
}

TEST_CASE("Large scope tree: every node and scope once, children by name") {
  const LargeProfile& large = Large();
  REQUIRE(large.loaded->model.size() >= kParallelMinItems);
  // Expected names from protobuf's parse: every node and every '/' prefix.
  std::set<std::string> expected = {kRootName};
  for (const auto& [id, node] : large.proto.nodes()) {
    const std::string& name = node.name();
    expected.insert(name);
    for (size_t s = name.find('/'); s != std::string::npos;
         s = name.find('/', s + 1)) {
      expected.insert(name.substr(0, s));
    }
  }
  Views views(&large.loaded->model, nullptr);
  Options o;
  o.max_depth = 1000;
  for (int round = 0; round < 2; ++round) {  // cold, then from the cache
    auto r = views.Query(ViewKind::kScope, o);
    REQUIRE(r.ok());
    std::set<std::string> seen;
    for (const ResultNode& n : r->nodes) {
      CHECK(seen.insert(n.name).second);
      for (size_t i = 0; i < n.children.size(); ++i) {
        const std::string& child = r->nodes[n.children[i]].name;
        const std::string parent = n.name == kRootName ? "" : n.name + "/";
        CHECK(child.compare(0, parent.size(), parent) == 0);
        CHECK(child.find('/', parent.size()) == std::string::npos);
        if (i > 0) CHECK(r->nodes[n.children[i - 1]].name < child);
      }
    }
    CHECK(seen == expected);
  }
}

TEST_CASE("Large graph view: a node's children are its inputs that are nodes") {
  const LargeProfile& large = Large();
  std::map<std::string, std::set<std::string>> inputs;
  for (const auto& [id, node] : large.proto.nodes()) {
    auto& set = inputs[node.name()];
    for (const auto& [slot, input_id] : node.inputs()) {
      auto it = large.proto.nodes().find(input_id);
      if (it != large.proto.nodes().end()) set.insert(it->second.name());
    }
  }
  Views views(&large.loaded->model, nullptr);
  Options o;
  o.max_depth = 1000000;
  auto r = views.Query(ViewKind::kGraph, o);
  REQUIRE(r.ok());
  // Each node is shown once; its shown children are inputs of it, in name
  // order (an input already shown elsewhere is not repeated).
  std::set<std::string> seen;
  for (const ResultNode& n : r->nodes) {
    CHECK(seen.insert(n.name).second);
    if (n.name == kRootName) continue;
    for (size_t i = 0; i < n.children.size(); ++i) {
      const std::string& child = r->nodes[n.children[i]].name;
      CHECK(inputs[n.name].count(child) == 1);
      if (i > 0) CHECK(r->nodes[n.children[i - 1]].name < child);
    }
  }
  CHECK(seen.size() == inputs.size() + 1);
}

// Whether two trees' rows hold the same: every renderer's output (JSON and
// text) and what only some read (graph nodes, members, tensors, kernels,
// frames, float-op facts). Names the first row that differs.
void CheckSameRows(const ResultTree& a, const ResultTree& b) {
  REQUIRE(a.nodes.size() == b.nodes.size());
  CHECK(a.notes == b.notes);
  CHECK(RenderJson(a) == RenderJson(b));
  CHECK(RenderText(a) == RenderText(b));
  for (size_t i = 0; i < a.nodes.size(); ++i) {
    const ResultNode& x = a.nodes[i];
    const ResultNode& y = b.nodes[i];
    // (Both records are int64 fields only: compared as bytes.)
    static_assert(sizeof(NodeStats) == 10 * sizeof(int64_t));
    static_assert(sizeof(Totals) == 11 * sizeof(int64_t));
    auto same_stats = [](const NodeStats& p, const NodeStats& q) {
      return std::memcmp(&p, &q, sizeof(p)) == 0;
    };
    auto same_members = [&](const std::vector<MemberNode>& p,
                            const std::vector<MemberNode>& q) {
      if (p.size() != q.size()) return false;
      for (size_t k = 0; k < p.size(); ++k) {
        if (p[k].node != q[k].node || !same_stats(p[k].stats, q[k].stats)) {
          return false;
        }
      }
      return true;
    };
    auto same_frame = [](const CodeFrame* p, const CodeFrame* q) {
      return p == nullptr
                 ? q == nullptr
                 : q != nullptr && p->file == q->file &&
                       p->function == q->function && p->line == q->line;
    };
    auto same_flops = [](const FlopFacts* p, const FlopFacts* q) {
      return p == nullptr
                 ? q == nullptr
                 : q != nullptr && p->bytes == q->bytes &&
                       p->flop_rate == q->flop_rate &&
                       p->rate_micros == q->rate_micros &&
                       p->intensity == q->intensity && p->split == q->split;
    };
    const bool same =
        x.name == y.name && x.account == y.account &&
        std::string(x.fixed_type) == y.fixed_type &&
        x.graph_node == y.graph_node && x.children == y.children &&
        same_stats(x.self, y.self) &&
        std::memcmp(&x.total, &y.total, sizeof(Totals)) == 0 &&
        same_members(x.members, y.members) &&
        same_members(x.leaf_members, y.leaf_members) &&
        (x.tensor == nullptr) == (y.tensor == nullptr) &&
        (x.tensor == nullptr || x.tensor->text == y.tensor->text) &&
        (x.kernel == nullptr) == (y.kernel == nullptr) &&
        (x.kernel == nullptr || (x.kernel->launches == y.kernel->launches &&
                                 x.kernel->total_ns == y.kernel->total_ns &&
                                 x.kernel->streams == y.kernel->streams)) &&
        same_frame(x.frame.get(), y.frame.get()) &&
        same_flops(x.flops.get(), y.flops.get());
    if (!same) {
      INFO("row " << i << ": " << x.name << " against " << y.name);
      CHECK(same);
      return;
    }
  }
}

// Runs each query on one Views, giving every tree back (Recycle) before
// the next, and checks it against a fresh Views' answer.
void CheckRecycledQueries(
    const Model& m, const Checkpoint* ckpt,
    const std::vector<std::pair<ViewKind, std::vector<std::string>>>& qs) {
  Views recycled(&m, ckpt);
  for (const auto& [view, args] : qs) {
    std::string what = ViewName(view);
    for (const std::string& a : args) what += " " + a;
    INFO(what);
    Options o;
    REQUIRE(ParseOptionTokens(args, 0, &o).ok());
    absl::StatusOr<ResultTree> r = recycled.Query(view, o);
    REQUIRE(r.ok());
    Views fresh(&m, ckpt);
    absl::StatusOr<ResultTree> f = fresh.Query(view, o);
    REQUIRE(f.ok());
    CheckSameRows(*r, *f);
    recycled.Recycle(std::move(*r));
  }
}

// A record for a tree's last row, and a way to watch whether it lives.
std::weak_ptr<TensorValue> Mark(ResultTree* tree) {
  auto marker = std::make_shared<TensorValue>();
  tree->nodes.back().tensor = marker;
  return marker;
}

TEST_CASE("Recycle keeps a tree's rows for the next query and drops others") {
  Model m = SmallModel();
  Views views(&m, nullptr);
  auto first = views.Query(ViewKind::kScope, Options());
  REQUIRE(first.ok());
  const std::weak_ptr<TensorValue> kept = Mark(&*first);
  const ResultNode* rows = first->nodes.data();
  views.Recycle(std::move(*first));
  CHECK_FALSE(kept.expired());
  auto second = views.Query(ViewKind::kScope, Options());
  REQUIRE(second.ok());
  CHECK(second->nodes.data() == rows);  // written over
  CHECK(kept.expired());                // and reset first
  CHECK(RenderText(*second) == Run(m, ViewKind::kScope, {}));
  // A tree of another model is dropped at once.
  Model other = SmallModel();
  Views other_views(&other, nullptr);
  auto foreign = other_views.Query(ViewKind::kScope, Options());
  REQUIRE(foreign.ok());
  const std::weak_ptr<TensorValue> dropped = Mark(&*foreign);
  views.Recycle(std::move(*foreign));
  CHECK(dropped.expired());
  // An op query frees the kept rows before it runs.
  const std::weak_ptr<TensorValue> freed = Mark(&*second);
  views.Recycle(std::move(*second));
  CHECK_FALSE(freed.expired());
  REQUIRE(views.Query(ViewKind::kOp, Options()).ok());
  CHECK(freed.expired());
}

TEST_CASE("Recycled rows answer as fresh views do") {
  SECTION("a small model, views and steps alternating") {
    Model m = SmallModel();
    REQUIRE(m.AddRunMeta(1, ScaledStep(3)).ok());
    CheckRecycledQueries(
        m, nullptr,
        {{ViewKind::kScope, {"-select", "micros,occurrence"}},
         {ViewKind::kGraph, {"-step", "1"}},
         {ViewKind::kOp, {}},
         {ViewKind::kScope, {"-max_depth", "1"}},
         {ViewKind::kGraph, {"-select", "micros", "-order_by", "micros"}},
         {ViewKind::kScope, {"-account_displayed_op_only", "true"}}});
  }
  SECTION("a large model: trees written on both cores, then fewer rows") {
    const Model& m = Large().loaded->model;
    std::vector<std::pair<ViewKind, std::vector<std::string>>> qs = {
        {ViewKind::kScope, {"-max_depth", "1000"}},
        {ViewKind::kScope, {"-max_depth", "1000"}},
        {ViewKind::kGraph, {"-max_depth", "1000000"}},
        {ViewKind::kScope, {"-max_depth", "3"}},
        {ViewKind::kScope, {}},
        {ViewKind::kOp, {}},
        {ViewKind::kGraph, {"-min_micros", "1000", "-order_by", "micros"}}};
    REQUIRE(m.has_code_traces());
    qs.push_back({ViewKind::kCode, {}});
    qs.push_back({ViewKind::kGraph, {"-max_depth", "1000000"}});
    CheckRecycledQueries(m, nullptr, qs);
  }
  SECTION("checkpoint tensors, then rows without") {
    auto loaded = LoadProfile(testing::TfTestData());
    REQUIRE(loaded.ok());
    const std::vector<std::string> tensors = {"-select", "tensor_value"};
    CheckRecycledQueries((*loaded)->model, (*loaded)->checkpoint.get(),
                         {{ViewKind::kScope, tensors},
                          {ViewKind::kScope, {}},
                          {ViewKind::kGraph, tensors},
                          {ViewKind::kGraph, {}}});
  }
  SECTION("kernel rows, then rows without") {
    const std::string path =
        testing::CorpusFile(std::string(testing::kAoberai) + "xplane.pb");
    if (!testing::HaveCorpusFile(std::string(testing::kAoberai) +
                                 "xplane.pb")) {
      return;
    }
    const auto loaded = testing::LoadTrace(path);
    const std::vector<std::string> kernels = {"-show_kernels", "true",
                                              "-max_depth", "1000"};
    const std::vector<std::string> flops = {
        "-select", "micros,float_ops,accelerator_flop_rate"};
    CheckRecycledQueries(loaded->model, nullptr,
                         {{ViewKind::kScope, kernels},
                          {ViewKind::kScope, {"-max_depth", "1000"}},
                          {ViewKind::kGraph, kernels},
                          {ViewKind::kOp, {}},
                          {ViewKind::kGraph, {}},
                          // Kernel rows and float-op facts, written over.
                          {ViewKind::kKernel, {}},
                          {ViewKind::kScope, {"-max_depth", "1000"}},
                          {ViewKind::kOp, flops},
                          {ViewKind::kGraph, {"-max_depth", "1000"}}});
  }
}

TEST_CASE("Large trees: rows in preorder, totals their rows' sums") {
  // Rows are written at places computed from subtree sizes, on two cores:
  // each row's first child must follow it, each next child the previous
  // child's subtree (siblings by name, the default order), and each total
  // its own stats plus its children's.
  const Model& m = Large().loaded->model;
  Views views(&m, nullptr);
  for (ViewKind view : {ViewKind::kScope, ViewKind::kGraph}) {
    Options o;
    o.max_depth = 1000000;
    auto r = views.Query(view, o);
    REQUIRE(r.ok());
    const std::vector<ResultNode>& rows = r->nodes;
    REQUIRE(rows.size() >= kParallelMinItems);
    std::vector<size_t> size(rows.size(), 1);
    bool ok = true;
    for (size_t i = rows.size(); i-- > 0;) {
      Totals sum;
      if (rows[i].account) sum.AddSelf(rows[i].self);
      size_t expect = i + 1;
      const ResultNode* prev = nullptr;  // siblings ascend by name
      for (size_t c : rows[i].children) {
        ok = ok && c == expect && c < rows.size() &&
             (prev == nullptr || prev->name < rows[c].name);
        if (!ok) break;
        prev = &rows[c];
        size[i] += size[c];
        expect = c + size[c];
        sum.Add(rows[c].total);
      }
      ok = ok && sum.exec_micros == rows[i].total.exec_micros &&
           sum.run_count == rows[i].total.run_count &&
           sum.definition_count == rows[i].total.definition_count;
      if (!ok) {
        INFO(ViewName(view) << " row " << i << ": " << rows[i].name);
        CHECK(ok);
        break;
      }
    }
    CHECK(size[0] == rows.size());
  }
}

TEST_CASE("A node's own totals are its stats, counted once") {
  NodeStats s;
  s.run_count = 3;
  s.exec_micros = 11;
  s.accelerator_exec_micros = 7;
  s.cpu_exec_micros = 4;
  s.requested_bytes = 100;
  s.peak_bytes = 90;
  s.residual_bytes = 80;
  s.output_bytes = 70;
  s.parameters = 5;
  s.float_ops = 6;
  Totals added;
  added.AddSelf(s);
  const Totals own = view_internal::SelfTotals(s);
  CHECK(own.definition_count == 1);
  CHECK(own.definition_count == added.definition_count);
  CHECK(own.run_count == added.run_count);
  CHECK(own.exec_micros == added.exec_micros);
  CHECK(own.accelerator_exec_micros == added.accelerator_exec_micros);
  CHECK(own.cpu_exec_micros == added.cpu_exec_micros);
  CHECK(own.requested_bytes == added.requested_bytes);
  CHECK(own.peak_bytes == added.peak_bytes);
  CHECK(own.residual_bytes == added.residual_bytes);
  CHECK(own.output_bytes == added.output_bytes);
  CHECK(own.parameters == added.parameters);
  CHECK(own.float_ops == added.float_ops);
  // Every field is one of those (a new field must be added to both).
  static_assert(sizeof(Totals) == 11 * sizeof(int64_t));
}

TEST_CASE("Session::Recycle and Emit: kept rows, answers as a fresh session") {
  InputPaths in;
  in.profile_path = testing::SourceDir() + "/testdata/sample/profile";
  auto session = Session::Load(in);
  REQUIRE(session.ok());
  auto other = Session::Load(in);
  REQUIRE(other.ok());
  // A tree of another session (another model) is dropped, not reused.
  auto foreign = (*other)->Query(ViewKind::kGraph, Options());
  REQUIRE(foreign.ok());
  const std::weak_ptr<TensorValue> dropped = Mark(&*foreign);
  (*session)->Recycle(std::move(*foreign));
  CHECK(dropped.expired());
  // The session's own tree is kept by its idle views and written over.
  auto own = (*session)->Query(ViewKind::kScope, Options());
  REQUIRE(own.ok());
  const std::weak_ptr<TensorValue> kept = Mark(&*own);
  const ResultNode* rows = own->nodes.data();
  (*session)->Recycle(std::move(*own));
  CHECK_FALSE(kept.expired());
  auto again = (*session)->Query(ViewKind::kScope, Options());
  REQUIRE(again.ok());
  CHECK(again->nodes.data() == rows);
  CHECK(kept.expired());
  const std::vector<std::pair<ViewKind, std::vector<std::string>>> qs = {
      {ViewKind::kScope, {"-max_depth", "100", "-select", "micros,bytes"}},
      {ViewKind::kGraph, {"-max_depth", "100"}},
      {ViewKind::kScope, {"-max_depth", "2"}},
      {ViewKind::kOp, {"-select", "micros,occurrence"}},
      {ViewKind::kScope, {"-max_depth", "100", "-output", "json"}}};
  for (const auto& [view, args] : qs) {
    Options o;
    REQUIRE(ParseOptionTokens(args, 0, &o).ok());
    std::ostringstream out, err, fresh_out, fresh_err;
    REQUIRE((*session)->Emit(view, o, EmitTarget{&out, &err, {}}).ok());
    auto fresh = Session::Load(in);
    REQUIRE(fresh.ok());
    REQUIRE((*fresh)
                ->QueryAndEmit(view, o, EmitTarget{&fresh_out, &fresh_err, {}})
                .ok());
    CHECK(out.str() == fresh_out.str());
    CHECK(err.str() == fresh_err.str());
    CHECK(out.str().size() > 100);
  }
}

// A scope or graph query reads each node's own stats in the structure's
// order: through the structure when that order nearly follows the stats'
// (no copy to make), else from a copy laid out in it. Both give the node's
// own record, and zeros for nodes without one.
TEST_CASE("Own stats read in place or from an ordered copy agree") {
  BigVector<NodeStats> stats(60);
  for (size_t i = 0; i < stats.size(); ++i) {
    stats[i].run_count = static_cast<int64_t>(i) + 1;
    stats[i].exec_micros = 1000 + static_cast<int64_t>(i);
    stats[i].float_ops = 7 * static_cast<int64_t>(i);
  }
  // In order, a scope (no record) now and then; then the same reversed.
  view_internal::Structure in_order, reversed;
  for (int64_t i = 0; i < 60; ++i) {
    if (i % 10 == 0) in_order.nodes.emplace_back();
    in_order.nodes.emplace_back().stats_index = i;
  }
  for (auto it = in_order.nodes.rbegin(); it != in_order.nodes.rend(); ++it) {
    reversed.nodes.emplace_back().stats_index = it->stats_index;
  }
  using view_internal::QueryState;
  CHECK(QueryState::StatsNearlyInOrder(in_order.nodes));
  CHECK_FALSE(QueryState::StatsNearlyInOrder(reversed.nodes));
  QueryState q;
  q.stats = &stats;
  uint64_t serial = 0;
  for (const view_internal::Structure* s : {&in_order, &reversed, &in_order}) {
    q.Reset(s->nodes, /*multi=*/false);
    ++serial;
    q.OrderStats(*s, {serial, 1});
    CHECK(q.indirect == (s == &in_order));
    for (size_t n = 0; n < s->nodes.size(); ++n) {
      const int64_t i = s->nodes[n].stats_index;
      const NodeStats& got = q.SelfOf(static_cast<int>(n));
      INFO("node " << n << " record " << i);
      CHECK(got.run_count == (i < 0 ? 0 : i + 1));
      CHECK(got.exec_micros == (i < 0 ? 0 : 1000 + i));
      CHECK(got.float_ops == (i < 0 ? 0 : 7 * i));
    }
  }
}

}  // namespace
}  // namespace tfprof

namespace tfprof {
namespace {

// Messages name a profile's steps: all of a few, the ends of many.
TEST_CASE("StepList names few steps all and many by their ends") {
  for (int64_t steps : {5, 20, 25}) {
    GenOptions g;
    g.nodes = 20;
    g.steps = steps;
    std::string bytes;
    GenerateProfile(g, [&](const std::string& piece) { bytes += piece; });
    InputPaths in;
    in.profile_path = testing::TempDir() + "/steps_profile";
    testing::WriteFile(in.profile_path, bytes);
    auto loaded = LoadProfile(in);
    REQUIRE(loaded.ok());
    const Model& m = (*loaded)->model;
    REQUIRE(m.steps().size() == static_cast<size_t>(steps));
    std::vector<std::string> want;
    for (int64_t s : m.steps()) want.push_back(std::to_string(s));
    if (steps > 20) {
      want.erase(want.begin() + 10, want.end() - 10);
      want.insert(want.begin() + 10, "...");
      want.push_back("(" + std::to_string(steps) + " steps)");
    }
    std::string joined;
    for (const std::string& w : want) joined += (joined.empty() ? "" : " ") + w;
    CHECK(StepList(m) == joined);
    const absl::Status missing = CheckStep(m, 1000);
    CHECK(std::string(missing.message()) ==
          "-step 1000 not found; available steps: " + joined);
  }
}

}  // namespace
}  // namespace tfprof
