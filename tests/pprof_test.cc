// pprof output of the code view: structure, stacks and values.
#include "profiler/render/pprof.h"

#include <catch2/catch.hpp>

#include "google/protobuf/text_format.h"
#include "profiler/load/loader.h"
#include "profiler/views/views.h"
#include "tests/test_util.h"

namespace tfprof {
namespace {

namespace pp = ::perftools::profiles;

// Every id and string index a profile uses points at something.
void CheckWellFormed(const pp::Profile& p) {
  REQUIRE(p.string_table_size() > 0);
  CHECK(p.string_table(0).empty());
  const int64_t n = p.string_table_size();
  std::set<uint64_t> locations, functions;
  for (const auto& f : p.function()) {
    functions.insert(f.id());
    CHECK(f.name() < n);
    CHECK(f.filename() < n);
  }
  for (const auto& l : p.location()) {
    locations.insert(l.id());
    for (const auto& line : l.line()) {
      CHECK(functions.count(line.function_id()) == 1);
    }
  }
  for (const auto& s : p.sample()) {
    CHECK(s.value_size() == p.sample_type_size());
    for (uint64_t id : s.location_id()) CHECK(locations.count(id) == 1);
    for (const auto& label : s.label()) {
      CHECK(label.key() < n);
      CHECK(label.str() < n);
    }
  }
}

Model CodeModel() {
  Model m;
  m.AddGraph(testing::ParseTextProto<tfcore::GraphDef>(R"pb(
    node { name: "a/b" op: "MatMul" }
    node { name: "gradients/a/b_grad/MatMul" op: "MatMul" })pb"));
  m.AddOpLog(testing::ParseTextProto<tfpb::OpLogProto>(R"pb(
    id_to_string { key: 1 value: "/src/model.py" }
    id_to_string { key: 2 value: "build_model" }
    id_to_string { key: 3 value: "layer" }
    log_entries {
      name: "a/b"
      code_def {
        traces { file_id: 1 lineno: 10 function_id: 2 func_start_line: 5 }
        traces { file_id: 1 lineno: 20 function_id: 3 func_start_line: 18 }
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
                               node_name: "a/b"
                               all_start_micros: 1
                               op_end_rel_micros: 10
                             }
                             node_stats {
                               node_name: "gradients/a/b_grad/MatMul"
                               all_start_micros: 1
                               op_end_rel_micros: 7
                             }
                           }
                         })pb"))
              .ok());
  return m;
}

TEST_CASE("pprof: one sample per graph node with its call stack") {
  Model m = CodeModel();
  Views views(&m, nullptr);
  Options o;
  o.select = {Attr::kMicros};
  auto r = views.Query(ViewKind::kCode, o);
  REQUIRE(r.ok());
  auto p = BuildPprof(*r);
  REQUIRE(p.ok());
  CheckWellFormed(*p);
  auto str = [&](int64_t i) { return p->string_table(static_cast<int>(i)); };
  REQUIRE(p->sample_type_size() == 2);
  CHECK(str(p->sample_type(0).type()) == "count");
  CHECK(str(p->sample_type(1).type()) == "micros");
  CHECK(str(p->sample_type(1).unit()) == "microseconds");
  REQUIRE(p->comment_size() == 1);
  CHECK(str(p->comment(0)) ==
        "Sum of accelerator execution time and cpu execution time.");
  REQUIRE(p->sample_size() == 2);
  // Samples are keyed by graph node name.
  const pp::Sample& fwd = p->sample(0);
  CHECK(str(fwd.label(0).key()) == "graph node:");
  CHECK(str(fwd.label(0).str()) == "a/b");
  CHECK(fwd.value(0) == 1);
  CHECK(fwd.value(1) == 10);
  // One location: model.py line 10 calls layer().
  REQUIRE(fwd.location_id_size() == 1);
  const pp::Sample& grad = p->sample(1);
  CHECK(str(grad.label(0).str()) == "gradients/a/b_grad/MatMul");
  CHECK(grad.value(1) == 7);
  REQUIRE(p->location_size() == 2);
  REQUIRE(p->function_size() == 2);
  for (const auto& f : p->function()) {
    if (f.id() == p->location(0).line(0).function_id()) {
      CHECK(str(f.filename()) == "/src/model.py");
    }
  }
  bool found = false;
  for (const auto& f : p->function()) {
    if (str(f.name()) == "model:layer") {
      CHECK(f.start_line() == 18);
      found = true;
    }
  }
  CHECK(found);
}

TEST_CASE("pprof: only the code view and exactly one supported select") {
  Model m = CodeModel();
  Views views(&m, nullptr);
  Options o;
  o.select = {Attr::kMicros, Attr::kBytes};
  auto r = views.Query(ViewKind::kCode, o);
  REQUIRE(r.ok());
  CHECK_FALSE(BuildPprof(*r).ok());
  o.select = {Attr::kDevice};
  r = views.Query(ViewKind::kCode, o);
  REQUIRE(r.ok());
  CHECK_FALSE(BuildPprof(*r).ok());
  o.select = {Attr::kMicros};
  r = views.Query(ViewKind::kOp, o);
  REQUIRE(r.ok());
  CHECK_FALSE(BuildPprof(*r).ok());
}

TEST_CASE(
    "pprof of a real profile: well formed, totals add up, gzip round trip") {
  InputPaths in;
  in.profile_path = testing::CorpusFile("shiyudian-resnet-tf-dist/profile_0");
  auto loaded = LoadProfile(in);
  REQUIRE(loaded.ok());
  Views views(&(*loaded)->model, nullptr);
  for (const char* select : {"micros", "params", "bytes", "float_ops"}) {
    INFO(select);
    Options o;
    o.select = {*ParseAttr(select)};
    o.max_depth = 1000;
    auto r = views.Query(ViewKind::kCode, o);
    REQUIRE(r.ok());
    auto p = BuildPprof(*r);
    REQUIRE(p.ok());
    CheckWellFormed(*p);
    int64_t sum = 0;
    for (const auto& s : p->sample()) sum += s.value(1);
    const Totals& t = r->root().total;
    const int64_t total = std::string(select) == "micros"   ? t.exec_micros
                          : std::string(select) == "params" ? t.parameters
                          : std::string(select) == "bytes"  ? t.requested_bytes
                                                            : t.float_ops;
    // Graph nodes on intermediate frames are not sampled (as in tfprof).
    CHECK(sum <= total);
    CHECK(sum > 0);
    auto gz = Gzip(p->SerializeAsString());
    REQUIRE(gz.ok());
    auto back = Gunzip(*gz);
    REQUIRE(back.ok());
    CHECK(*back == p->SerializeAsString());
  }
  CHECK_FALSE(Gunzip("not gzip at all").ok());
}

}  // namespace
}  // namespace tfprof
