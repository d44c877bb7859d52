// check: gate conditions, their parsing and evaluation.
#include "profiler/advise/gates.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <memory>

#include "profiler/advise/gates_report.h"
#include "profiler/load/loader.h"
#include "profiler/model/model_builder.h"
#include "profiler/views/views.h"
#include "tests/corpus_util.h"
#include "tests/json_parse.h"
#include "tests/test_util.h"

namespace tfprof {
namespace {

TEST_CASE("Conditions parse with units") {
  auto c = ParseCondition("micros[.*Conv2D.*] < 20ms");
  REQUIRE(c.ok());
  CHECK(c->attribute == "micros");
  CHECK(c->regex == ".*Conv2D.*");
  CHECK(c->op == "<");
  CHECK(c->limit == 20000);
  CHECK(ParseCondition("params<=1.5m")->limit == 1500000);
  CHECK(ParseCondition("peak_bytes>=2GB")->limit == 2000000000);
  CHECK(ParseCondition("bytes <= 10kb")->limit == 10000);
  CHECK(ParseCondition("cpu_micros>1s")->limit == 1000000);
  CHECK(ParseCondition("occurrence>=3")->limit == 3);
}

TEST_CASE("Bad conditions are errors that say what is wrong") {
  for (const char* bad :
       {"microz<1", "micros", "micros<=", "micros<=5xs", "params<=5MB",
        "micros[a(b]<1", "micros[abc<1", "params<=99999999999999999999"}) {
    INFO(bad);
    auto c = ParseCondition(bad);
    REQUIRE_FALSE(c.ok());
    CHECK(std::string(c.status().message()).find(bad) != std::string::npos);
  }
}

// Against a limit of zero a share means nothing: the margin alone; and a
// limit from base*X keeps the value's unit.
TEST_CASE("Gate messages: no share of a zero limit and limits in units") {
  auto loaded = LoadProfile(testing::TfTestData());
  REQUIRE(loaded.ok());
  auto r = EvaluateGates((*loaded)->model,
                         {*ParseCondition("micros[Conv2D.*]<=0"),
                          *ParseCondition("micros[Conv2D.*]<=1.5ms"),
                          *ParseCondition("micros[Conv2D.*]<=47.5")},
                         -1);
  REQUIRE(r.ok());
  CHECK((*r)[0].message ==
        "FAIL micros[Conv2D.*] = 4.89ms (limit <= 0us, 2 nodes): over by "
        "4.89ms");
  CHECK((*r)[1].message ==
        "FAIL micros[Conv2D.*] = 4.89ms (limit <= 1.50ms, 2 nodes): over by "
        "3.39ms (225.9%)");
  // A fraction of a microsecond is shown, not rounded away.
  CHECK((*r)[2].message ==
        "FAIL micros[Conv2D.*] = 4.89ms (limit <= 47.5us, 2 nodes): over by "
        "4.84ms (10192.6%)");  // (4889 - 47.5) / 47.5
}

// A base whose nodes the regex does not match (a profile saved from a trace
// by an older build names "aten::mm" as "aten.mm") is said so: its value
// is 0 for want of a match, not a measured 0.
TEST_CASE("Gate messages: a base with no matching node says so") {
  auto one_node = [](const char* name, Model* m) {
    ModelBuilder b(m);
    GraphNode* n = b.Node(name, "aten::mm");
    const int32_t cpu = b.Device("/job:localhost/replica:0/task:0/cpu:0");
    b.BeginStep(1);
    ExecRecord e;
    e.start_micros = 100;
    e.duration_micros = e.all_end_rel_micros = 40;
    b.AddExec(n, cpu, e);
    b.EndStep();
  };
  Model current, old_base, new_base;
  one_node("ProfilerStep/aten::mm", &current);
  one_node("ProfilerStep/aten.mm", &old_base);
  one_node("ProfilerStep/aten::mm", &new_base);
  const Condition c = *ParseCondition("micros[.*aten::mm]<=base*1.1");
  GateBase gb;
  gb.model = &old_base;
  auto r = EvaluateGates(current, {c}, -1, gb);
  REQUIRE(r.ok());
  CHECK((*r)[0].base_matched_nodes == 0);
  CHECK_FALSE((*r)[0].passed);
  CHECK((*r)[0].message.find("(no node of the base matches)") !=
        std::string::npos);
  gb.model = &new_base;
  r = EvaluateGates(current, {c}, -1, gb);
  REQUIRE(r.ok());
  CHECK((*r)[0].base_matched_nodes == 1);
  CHECK((*r)[0].passed);
  CHECK((*r)[0].message.find("no node of the base") == std::string::npos);
}

TEST_CASE("Gates on TensorFlow's test profile") {
  auto loaded = LoadProfile(testing::TfTestData());
  REQUIRE(loaded.ok());
  std::vector<Condition> cs = {*ParseCondition("params<=500"),
                               *ParseCondition("micros[Conv2D.*]<4ms"),
                               *ParseCondition("float_ops>20k")};
  auto r = EvaluateGates((*loaded)->model, cs, -1);
  REQUIRE(r.ok());
  REQUIRE(r->size() == 3);
  CHECK((*r)[0].passed);
  CHECK((*r)[0].value == 451);
  CHECK((*r)[0].message == "PASS params = 451 (limit <= 500, 32 nodes)");
  CHECK_FALSE((*r)[1].passed);
  CHECK((*r)[1].value == 4889);  // Conv2D 4292us + Conv2D_1 597us
  CHECK((*r)[1].matched_nodes == 2);
  CHECK((*r)[1].message ==
        "FAIL micros[Conv2D.*] = 4.89ms (limit < 4.00ms, 2 nodes): over by "
        "889us (22.2%)");
  CHECK_FALSE((*r)[2].passed);
  CHECK((*r)[2].value == 10440);
  CHECK_FALSE(EvaluateGates((*loaded)->model, cs, 9).ok());
}

TEST_CASE("Conditions against a base parse") {
  auto c = ParseCondition("micros[.*Conv.*]? <= base*1.05");
  REQUIRE(c.ok());
  CHECK(c->optional);
  CHECK(c->kind == LimitKind::kBaseTimes);
  CHECK(c->factor == 1.05);
  c = ParseCondition("micros <= base + 2ms");
  REQUIRE(c.ok());
  CHECK(c->kind == LimitKind::kBasePlus);
  CHECK(c->limit == 2000);
  CHECK(ParseCondition("bytes<=base-1KB")->limit == -1000);
  c = ParseCondition("significant(micros)[.*MatMul.*] == 0");
  REQUIRE(c.ok());
  CHECK(c->verdicts == VerdictTerm::kSignificant);
  CHECK(c->regex == ".*MatMul.*");
  CHECK(c->op == "==");
  CHECK(ParseCondition("regressed(micros)==0")->verdicts ==
        VerdictTerm::kRegressed);
  CHECK(ParseCondition("improved(bytes)[a.*] >= 1")->verdicts ==
        VerdictTerm::kImproved);
  CHECK(ParseCondition("params != 3")->op == "!=");
  for (const char* bad : {"micros<=base*x", "micros<=basis", "micros<=base/2",
                          "significant(micros<1", "significant(micros)<=base",
                          "significant(microz)==0", "regressed(micros)<base",
                          "improved(micros==0"}) {
    INFO(bad);
    CHECK_FALSE(ParseCondition(bad).ok());
  }
}

// The root total of the scope view: all nodes' stats, summed by the view.
int64_t ScopeTotal(const Model& m, const std::string& attr) {
  Views views(&m, nullptr);
  Options o;
  absl::StatusOr<ResultTree> r = views.Query(ViewKind::kScope, o);
  REQUIRE(r.ok());
  const Totals& t = r->root().total;
  return attr == "micros" ? t.exec_micros : t.parameters;
}

// peak_memory_bytes is the run's allocator peak, not peak_bytes (each
// node's peak, summed over nodes): on the H200 ResNet-50 pair (corpus) it
// is the most torch.cuda.max_allocated() read in a profiled step, and the
// NHWC->NCHW change leaves it where it was.
TEST_CASE("peak_memory_bytes: the allocator's peak against the framework's") {
  const std::string dir = "gpu-h200-2026/";
  if (testing::TorchMaxAllocated("resnet") < 0) return;
  std::map<std::string, std::unique_ptr<LoadedProfile>> runs;
  for (const char* run : {"resnet", "resnet_nchw"}) {
    InputPaths in;
    in.trace_path = testing::CorpusFile(dir + run + ".pt.trace.json.gz");
    auto loaded = LoadProfile(in);
    REQUIRE(loaded.ok());
    const double most = testing::TorchMaxAllocated(run);
    auto r = EvaluateGates((*loaded)->model,
                           {*ParseCondition("peak_memory_bytes>0")}, -1);
    REQUIRE(r.ok());
    REQUIRE(r->size() == 1);
    INFO(run);
    CHECK(r->front().passed);
    CHECK(r->front().value == most);
    runs[run] = std::move(*loaded);
  }
  GateBase base;
  base.model = &runs["resnet"]->model;
  auto r = EvaluateGates(runs["resnet_nchw"]->model,
                         {*ParseCondition("peak_memory_bytes<=base*1.001"),
                          *ParseCondition("peak_memory_bytes<base*0.999")},
                         -1, base);
  REQUIRE(r.ok());
  CHECK((*r)[0].passed);
  CHECK_FALSE((*r)[1].passed);
}

TEST_CASE("Gates against a base run: profile_100 vs profile_0") {
  InputPaths p0, p100;
  p0.profile_path = testing::CorpusFile("shiyudian-resnet-tf-dist/profile_0");
  p100.profile_path =
      testing::CorpusFile("shiyudian-resnet-tf-dist/profile_100");
  auto base = LoadProfile(p0), current = LoadProfile(p100);
  REQUIRE(base.ok());
  REQUIRE(current.ok());
  const Model& b = (*base)->model;
  const Model& m = (*current)->model;
  std::vector<Condition> cs = {*ParseCondition("micros<=base*1.05"),
                               *ParseCondition("params<=base"),
                               *ParseCondition("micros[no_such_op]<1ms"),
                               *ParseCondition("micros[no_such_op]?<1ms"),
                               *ParseCondition("micros<=base+30ms")};
  CHECK_FALSE(EvaluateGates(m, cs, -1).ok());  // no base given
  GateBase gb;
  gb.model = &b;
  auto r = EvaluateGates(m, cs, -1, gb);
  REQUIRE(r.ok());
  REQUIRE(r->size() == 5);
  // The base and current totals are the scope views' roots.
  CHECK((*r)[0].base_value == ScopeTotal(b, "micros"));
  CHECK((*r)[0].value == ScopeTotal(m, "micros"));
  CHECK((*r)[0].limit == Approx(ScopeTotal(b, "micros") * 1.05));
  CHECK_FALSE((*r)[0].passed);
  CHECK((*r)[1].passed);
  CHECK((*r)[1].base_value == ScopeTotal(b, "params"));
  CHECK_FALSE((*r)[2].passed);
  CHECK((*r)[2].message == "FAIL micros[no_such_op] matched no node");
  CHECK((*r)[3].passed);
  CHECK((*r)[4].limit == ScopeTotal(b, "micros") + 30000);
  CHECK((*r)[4].passed == (ScopeTotal(m, "micros") <= (*r)[4].limit));
  // One step in profile_0: significance cannot be tested; that term is
  // inconclusive, and the others are still judged.
  auto s = EvaluateGates(m,
                         {*ParseCondition("significant(micros)==0"),
                          *ParseCondition("params<=base"),
                          *ParseCondition("regressed(micros)[no_such_op]==0")},
                         -1, gb);
  REQUIRE(s.ok());
  REQUIRE(s->size() == 3);
  // (A typo still fails, however few the steps.)
  CHECK((*s)[2].message ==
        "FAIL regressed(micros)[no_such_op] matched no node");
  CHECK_FALSE((*s)[2].inconclusive);
  CHECK((*s)[0].inconclusive);
  CHECK_FALSE((*s)[0].passed);
  CHECK((*s)[0].message ==
        "INCONCLUSIVE significant(micros) = n/a (verdicts need 3 or more "
        "steps on each side: base 1, current 12) (limit == 0, 2373 nodes)");
  CHECK((*s)[1].passed);
  // -step 11, which the base lacks: nothing to compare with (it read 0), but
  // limits of their own and optional terms that match nothing still judge.
  REQUIRE(m.steps().count(11) == 1);
  REQUIRE(b.steps().count(11) == 0);
  auto at11 = EvaluateGates(m, cs, 11, gb);
  REQUIRE(at11.ok());
  CHECK((*at11)[0].message ==
        "FAIL micros = n/a (base: no step 11) (limit <= base*1.05, 2373 "
        "nodes)");
  CHECK_FALSE((*at11)[0].passed);
  CHECK((*at11)[1].passed);        // params<=base: the same in every step
  CHECK_FALSE((*at11)[2].passed);  // the typo
  CHECK((*at11)[3].passed);        // optional
  CHECK((*at11)[4].message.find("n/a (base: no step 11) (limit <= base+30ms") !=
        std::string::npos);
  // The run's figures too; the limit as written, spaces aside.
  auto run11 = EvaluateGates(m,
                             {*ParseCondition("flops_per_step <= base"),
                              *ParseCondition("step_micros < = base * 2")},
                             11, gb);
  REQUIRE(run11.ok());
  CHECK((*run11)[0].message ==
        "FAIL flops_per_step = n/a (base: no step 11) (limit <= base, step "
        "11)");
  CHECK((*run11)[1].message ==
        "FAIL step_micros = n/a (base: no step 11) (limit <= base*2, step "
        "11)");
  CHECK_FALSE(EvaluateGates(m, cs, -5, gb).ok());  // as Python passes it
  // A run against itself passes every base gate.
  gb.model = &m;
  auto same = EvaluateGates(m, cs, -1, gb);
  REQUIRE(same.ok());
  CHECK((*same)[0].passed);
  CHECK((*same)[1].passed);
}

// A node of the base that the run lacks compares as 0: a base-relative
// limit passes or fails on it (not "matched no node", which is for a regex
// that matches neither run), and verdict terms count it as diff judges it.
TEST_CASE("Gates judge nodes that vanished from the base") {
  // Four steps; "step/gone" (about 1ms a step) only in the base.
  auto run = [](bool with_gone, Model* m) {
    ModelBuilder b(m);
    GraphNode* keep = b.Node("step/keep", "MatMul");
    GraphNode* gone = with_gone ? b.Node("step/gone", "Conv2D") : nullptr;
    const int32_t cpu = b.Device("/job:localhost/replica:0/task:0/cpu:0");
    for (int64_t step = 1; step <= 4; ++step) {
      b.BeginStep(step);
      ExecRecord e;
      e.start_micros = 100 * step;
      e.duration_micros = e.all_end_rel_micros = 40 + step;
      b.AddExec(keep, cpu, e);
      if (gone != nullptr) {
        e.duration_micros = e.all_end_rel_micros = 1000 + 3 * step;
        b.AddExec(gone, cpu, e);
      }
      b.EndStep();
    }
  };
  Model current, base;
  run(false, &current);
  run(true, &base);
  GateBase gb;
  gb.model = &base;
  auto r = EvaluateGates(current,
                         {*ParseCondition("micros[.*gone]<=base"),
                          *ParseCondition("micros[.*gone]>=base"),
                          *ParseCondition("improved(micros)[.*gone]==1"),
                          *ParseCondition("regressed(micros)[.*gone]==0"),
                          *ParseCondition("micros[.*nothing]<=base"),
                          *ParseCondition("micros[.*gone]<5ms")},
                         -1, gb);
  REQUIRE(r.ok());
  // The base's mean over its steps, in whole microseconds.
  CHECK((*r)[0].passed);
  CHECK((*r)[0].value == 0);
  CHECK((*r)[0].base_value == (1003 + 1006 + 1009 + 1012) / 4);
  CHECK((*r)[0].matched_nodes == 0);
  CHECK((*r)[0].base_matched_nodes == 1);
  CHECK((*r)[0].message.rfind("PASS micros[.*gone] = 0us (limit <= ", 0) == 0);
  CHECK_FALSE((*r)[1].passed);
  for (size_t i : {size_t{2}, size_t{3}}) {
    INFO((*r)[i].message);
    CHECK((*r)[i].matched_nodes == 1);
    CHECK((*r)[i].passed);
  }
  CHECK((*r)[2].value == 1);
  CHECK((*r)[4].message == "FAIL micros[.*nothing] matched no node");
  // A term that does not compare with the base still wants a node of the
  // run: the base being loaded changes nothing for it.
  CHECK((*r)[5].message == "FAIL micros[.*gone] matched no node");
}

TEST_CASE("Reports: an inconclusive gate is neither passed nor failed") {
  std::vector<GateResult> results(3);
  results[0].condition = *ParseCondition("params<=1m");
  results[0].passed = true;
  results[0].message = "PASS params = 451";
  results[1].condition = *ParseCondition("regressed(micros)==0");
  results[1].inconclusive = true;
  results[1].matched_nodes = 4;
  results[1].open_nodes = 2;
  results[1].message = "INCONCLUSIVE regressed(micros) = 0";
  results[2].condition = *ParseCondition("micros<1ms");
  results[2].message = "FAIL micros = 3ms";
  const std::string junit = RenderGatesJUnit(results);
  CHECK(junit.find("tests=\"3\" failures=\"1\" errors=\"0\" skipped=\"1\"") !=
        std::string::npos);
  CHECK(
      junit.find("<skipped message=\"INCONCLUSIVE regressed(micros) = 0\"/>") !=
      std::string::npos);
  CHECK(junit.find("<failure message=\"FAIL micros = 3ms\"") !=
        std::string::npos);
  const std::string md = RenderGatesMarkdown(results);
  CHECK(md.find("1 passed, 1 failed, 1 inconclusive") != std::string::npos);
  CHECK(md.find("| ❔ inconclusive | `regressed(micros)==0` | 0 |") !=
        std::string::npos);
}

}  // namespace
}  // namespace tfprof
