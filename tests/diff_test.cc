// Comparing two runs: the false-discovery correction on a worked example,
// diffs of a profile with itself, the shiyudian run's profile_0 vs
// profile_100 row by row against the two single-profile views, the
// verdicts' power on generated runs, diff steps, summary and gates. (The
// statistics themselves and the verdicts on real and generated pairs:
// diff_verdict_test.cc.)
#include "profiler/views/diff.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "profiler/advise/gates.h"
#include "profiler/base/json_writer.h"
#include "profiler/base/stats.h"
#include "profiler/base/units.h"
#include "profiler/load/loader.h"
#include "profiler/render/render_diff.h"
#include "profiler/render/summary.h"
#include "profiler/views/steps.h"
#include "profiler/views/views.h"
#include "tests/corpus_util.h"
#include "tests/json_parse.h"
#include "tests/test_util.h"

namespace tfprof {
namespace {

// The attribute a diff's verdicts test (-order_by) is among the figures
// each row shows, first when -select leaves it out, and never twice.
TEST_CASE("diff rows show the tested attribute") {
  Options o;
  o.order_by = Attr::kAcceleratorMicros;
  std::vector<Attr> attrs = DiffAttributes(o);
  REQUIRE(attrs.size() == 2);
  CHECK(attrs[0] == Attr::kAcceleratorMicros);
  CHECK(attrs[1] == Attr::kMicros);
  o.select.insert(Attr::kAcceleratorMicros);
  attrs = DiffAttributes(o);
  CHECK(std::count(attrs.begin(), attrs.end(), Attr::kAcceleratorMicros) == 1);
  o.order_by = Attr::kName;  // not a count: the selection alone
  o.select = {Attr::kBytes};
  CHECK(DiffAttributes(o) == std::vector<Attr>{Attr::kBytes});
}

TEST_CASE("Benjamini-Hochberg q-values on a worked example") {
  const std::vector<double> q =
      BenjaminiHochberg({0.01, 0.04, 0.03, 0.005, -1});
  CHECK(q[0] == Approx(0.02));
  CHECK(q[1] == Approx(0.04));
  CHECK(q[2] == Approx(0.04));
  CHECK(q[3] == Approx(0.02));
  CHECK(q[4] == -1);
}

std::unique_ptr<LoadedProfile> Load(const InputPaths& p) {
  auto loaded = LoadProfile(p);
  REQUIRE(loaded.ok());
  return std::move(*loaded);
}

// Every row's value of every attribute, by the path of names.
void Walk(const DiffTree& t, size_t i, const std::string& path,
          const std::function<void(const DiffNode&, const std::string&)>& fn) {
  fn(t.nodes[i], path);
  for (size_t c : t.nodes[i].children) {
    Walk(t, c, path + "/" + t.nodes[c].name, fn);
  }
}

TEST_CASE("A profile diffed with itself changes nothing") {
  Options o;
  o.max_depth = 1000;
  o.select = {Attr::kMicros, Attr::kBytes, Attr::kParams, Attr::kFloatOps,
              Attr::kOccurrence};
  int64_t rows = 0;
  for (const auto& c : testing::CorpusCases()) {
    INFO(c.name);
    auto a = Load(c.paths), b = Load(c.paths);
    Views va(&a->model, nullptr), vb(&b->model, nullptr);
    for (ViewKind v : {ViewKind::kScope, ViewKind::kGraph, ViewKind::kOp,
                       ViewKind::kCode, ViewKind::kKernel}) {
      if (!va.Query(v, o).ok()) continue;  // no code traces, no kernels
      INFO(ViewName(v));
      absl::StatusOr<DiffTree> d =
          QueryDiff(v, o, DiffOptions(), &va, a->model, &vb, b->model);
      REQUIRE(d.ok());
      Walk(*d, 0, "", [&](const DiffNode& n, const std::string& path) {
        INFO(path);
        CHECK(n.base.present);
        CHECK(n.current.present);
        for (Attr attr : DiffAttributes(o)) {
          int64_t x = 0, y = 0;
          x = Value(n.base.total, attr);
          y = Value(n.current.total, attr);
          CHECK(x == y);
        }
        CHECK(!n.judgement.significant);
        CHECK(n.judgement.verdict != Verdict::kRegressed);
        ++rows;
      });
    }
  }
  CHECK(rows > 1000);
}

// name -> total of `attr` in a single-profile query, for every row.
std::map<std::string, int64_t> Rows(Views* views, ViewKind v, const Options& o,
                                    Attr attr) {
  absl::StatusOr<ResultTree> r = views->Query(v, o);
  REQUIRE(r.ok());
  std::map<std::string, int64_t> out;
  for (const ResultNode& n : r->nodes) {
    // A flat view's rows: their own figures (the totals run down the list).
    Totals own;
    own.AddSelf(n.self);
    const bool flat = IsFlatView(v) && &n != &r->root();
    int64_t x = 0;
    REQUIRE(IsCount(attr));
    x = Value(flat ? own : n.total, attr);
    out[n.name] += x;
  }
  return out;
}

// The change of a row's total micros.
int64_t Delta(const DiffNode& n) {
  return n.current.total.exec_micros - n.base.total.exec_micros;
}

TEST_CASE("profile_0 vs profile_100: each change is the two views' values") {
  InputPaths p0, p100;
  p0.profile_path = testing::CorpusFile("shiyudian-resnet-tf-dist/profile_0");
  p100.profile_path =
      testing::CorpusFile("shiyudian-resnet-tf-dist/profile_100");
  auto base = Load(p0), current = Load(p100);
  Views vb(&base->model, nullptr), vc(&current->model, nullptr);
  Options o;
  o.max_depth = 1000000;
  o.select = {Attr::kMicros, Attr::kBytes, Attr::kOccurrence};
  o.order_by = Attr::kMicros;
  for (ViewKind v : {ViewKind::kScope, ViewKind::kOp}) {
    INFO(ViewName(v));
    absl::StatusOr<DiffTree> d =
        QueryDiff(v, o, DiffOptions(), &vb, base->model, &vc, current->model);
    REQUIRE(d.ok());
    int64_t only_current = 0, changed = 0;
    for (Attr attr : DiffAttributes(o)) {
      const auto want_b = Rows(&vb, v, o, attr);
      const auto want_c = Rows(&vc, v, o, attr);
      Walk(*d, 0, "", [&](const DiffNode& n, const std::string&) {
        INFO(AttrName(attr) << " " << n.name);
        auto b = want_b.find(n.name), c = want_c.find(n.name);
        CHECK(n.base.present == (b != want_b.end()));
        CHECK(n.current.present == (c != want_c.end()));
        int64_t x = 0, y = 0;
        x = Value(n.base.total, attr);
        y = Value(n.current.total, attr);
        CHECK(x == (b == want_b.end() ? 0 : b->second));
        CHECK(y == (c == want_c.end() ? 0 : c->second));
        only_current += !n.base.present;
        changed += x != y;
      });
    }
    CHECK(changed > 10);
    if (v == ViewKind::kScope) {
      // The changes add up as the values do: a row's change minus its
      // children's is the change of its own value (each side's own scope
      // view gives the own values).
      std::map<std::string, int64_t> own_b, own_c;
      for (auto [views, own] :
           {std::make_pair(&vb, &own_b), std::make_pair(&vc, &own_c)}) {
        absl::StatusOr<ResultTree> r = views->Query(v, o);
        REQUIRE(r.ok());
        for (const ResultNode& n : r->nodes) {
          (*own)[n.name] = n.self.exec_micros;
        }
      }
      int64_t rows = 0;
      for (const DiffNode& n : d->nodes) {
        int64_t children = 0;
        for (size_t c : n.children) children += Delta(d->nodes[c]);
        INFO(n.name);
        CHECK(Delta(n) - children == own_c[n.name] - own_b[n.name]);
        ++rows;
      }
      CHECK(rows > 1000);
    }
    // A shallow diff marks rows by the whole profiles, not by what each
    // side's own shallow view would show.
    Options shallow = o;
    shallow.max_depth = 3;
    absl::StatusOr<DiffTree> top = QueryDiff(v, shallow, DiffOptions(), &vb,
                                             base->model, &vc, current->model);
    REQUIRE(top.ok());
    const auto all_b = Rows(&vb, v, o, Attr::kMicros);
    const auto all_c = Rows(&vc, v, o, Attr::kMicros);
    for (const DiffNode& n : top->nodes) {
      INFO(n.name);
      CHECK(n.base.present == (all_b.count(n.name) == 1));
      CHECK(n.current.present == (all_c.count(n.name) == 1));
    }
    if (v == ViewKind::kOp) CHECK(top->root().children.size() == 4);
    // Siblings come largest change in micros first.
    for (const DiffNode& n : d->nodes) {
      int64_t last = INT64_MAX;
      for (size_t c : n.children) {
        int64_t x = 0, y = 0;
        x = Value(d->nodes[c].base.total, Attr::kMicros);
        y = Value(d->nodes[c].current.total, Attr::kMicros);
        CHECK(std::llabs(y - x) <= last);
        last = std::llabs(y - x);
      }
    }
    // The text and JSON outputs carry the same rows.
    testing::JsonValue json;
    std::string error;
    REQUIRE(testing::ParseJson(RenderDiffJson(*d), &json, &error));
    CHECK(json.at("view").string == ViewName(v));
    CHECK(json.at("root").at("name").string == "_TFProfRoot");
  }
}

// A model of `ops` ops ("op0", ...) over `steps` steps on one CPU: op i
// takes micros[step][i].
Model Generated(const std::vector<std::vector<int64_t>>& micros) {
  Model m;
  tfcore::GraphDef g;
  const size_t ops = micros.front().size();
  for (size_t i = 0; i < ops; ++i) {
    auto* n = g.add_node();
    n->set_name(absl::StrCat("op", i));
    n->set_op("MatMul");
  }
  m.AddGraph(g);
  for (size_t s = 0; s < micros.size(); ++s) {
    tfcore::RunMetadata rm;
    auto* dev = rm.mutable_step_stats()->add_dev_stats();
    dev->set_device("/job:localhost/replica:0/task:0/device:cpu:0");
    int64_t t = 1000;
    for (size_t i = 0; i < ops; ++i) {
      auto* ns = dev->add_node_stats();
      ns->set_node_name(absl::StrCat("op", i));
      ns->set_all_start_micros(t);
      ns->set_op_end_rel_micros(micros[s][i]);
      ns->set_all_end_rel_micros(micros[s][i]);
      t += micros[s][i];
    }
    REQUIRE(m.AddRunMeta(static_cast<int64_t>(s), rm).ok());
  }
  return m;
}

// A generated run of 10 ops over `steps` steps, each op ~1000us with 10%
// step-to-step noise (`noise`: normal, mean 1000, sd 100, drawn from `rng`);
// op3 takes `slow` times as long in every step.
Model NoisyRun(std::mt19937& rng, std::normal_distribution<double>& noise,
               int steps, double slow) {
  constexpr int kOps = 10;
  std::vector<std::vector<int64_t>> micros(steps, std::vector<int64_t>(kOps));
  for (auto& step : micros) {
    for (int i = 0; i < kOps; ++i) {
      step[i] = std::llround(noise(rng) * (i == 3 ? slow : 1.0));
    }
  }
  return Generated(micros);
}

struct Rates {
  double power = 0;       // share of seeds in which op3 was flagged
  double false_rate = 0;  // share of (seed, unchanged op) flagged
};

// 10 ops, `steps` steps a side, each op ~1000us with 10% step-to-step noise
// (normal, sd 100us); in the current run op3 takes 20% longer in every
// step. Over `seeds` seeds: how often op3 is flagged and how often one of
// the nine unchanged ops is.
Rates FlagRates(int steps, int seeds) {
  constexpr int kOps = 10;
  int flagged_slow = 0, false_flags = 0;
  for (int seed = 1; seed <= seeds; ++seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<double> noise(1000, 100);
    const Model base = NoisyRun(rng, noise, steps, 1.0);
    const Model current = NoisyRun(rng, noise, steps, 1.2);
    Views vb(&base, nullptr), vc(&current, nullptr);
    Options o;
    o.order_by = Attr::kMicros;
    absl::StatusOr<DiffTree> d =
        QueryDiff(ViewKind::kScope, o, DiffOptions(), &vb, base, &vc, current);
    REQUIRE(d.ok());
    for (const DiffNode& n : d->nodes) {
      if (n.name == "op3") {
        REQUIRE(n.judgement.q_value >= 0);
        flagged_slow += n.judgement.verdict == Verdict::kRegressed;
      } else if (n.name != kRootName) {
        false_flags += n.judgement.significant;
      }
    }
  }
  Rates r;
  r.power = static_cast<double>(flagged_slow) / seeds;
  r.false_rate = static_cast<double>(false_flags) / (seeds * (kOps - 1));
  return r;
}

TEST_CASE("A 20% slower op is flagged, 10% noise is not (generated runs)") {
  // Measured over 200 seeds (alpha = 0.05 false discovery rate, floor 2%):
  // 10 steps a side call op3 regressed in 71% of the seeds, 20 steps in
  // 97.5%; an unchanged op is called changed in 0.39% and 0.22% of them.
  const Rates ten = FlagRates(10, 200);
  INFO("10 steps: power " << ten.power << ", false-positive rate "
                          << ten.false_rate);
  CHECK(ten.power >= 0.65);
  CHECK(ten.false_rate <= 0.01);
  const Rates twenty = FlagRates(20, 200);
  INFO("20 steps: power " << twenty.power << ", false-positive rate "
                          << twenty.false_rate);
  CHECK(twenty.power >= 0.95);
  CHECK(twenty.false_rate <= 0.01);
}

// The p-value of "|change| <= floor" for two positive samples as the
// verdicts define it (pooled t on logarithms), computed here from scratch.
double LogPooledP(const std::vector<int64_t>& b, const std::vector<int64_t>& c,
                  double floor_ratio) {
  auto moments = [](const std::vector<int64_t>& v) {
    double mean = 0, ss = 0;
    for (int64_t x : v) mean += std::log(static_cast<double>(x));
    mean /= static_cast<double>(v.size());
    for (int64_t x : v) {
      ss += std::pow(std::log(static_cast<double>(x)) - mean, 2);
    }
    return std::make_pair(mean, ss);
  };
  const auto [mb, ssb] = moments(b);
  const auto [mc, ssc] = moments(c);
  const double nb = static_cast<double>(b.size());
  const double nc = static_cast<double>(c.size());
  const double pooled = (ssb + ssc) / (nb + nc - 2);
  const double se = std::sqrt(pooled * (1 / nb + 1 / nc));
  const double excess = std::fabs(mc - mb) - std::log1p(floor_ratio);
  return excess <= 0 ? 1.0 : StudentTwoSidedP(excess / se, nb + nc - 2);
}

TEST_CASE("diff steps: medians and verdicts of the steps tables") {
  InputPaths kineto, profile;
  kineto.trace_path = testing::CorpusFile(
      "pytorch-kineto/worker0.1623143089861.pt.trace.json.gz");
  profile.profile_path =
      testing::CorpusFile("shiyudian-resnet-tf-dist/profile_100");
  auto k = Load(kineto), p = Load(profile);
  const StepTable tk = ComputeSteps(k->model), tp = ComputeSteps(p->model);
  REQUIRE(tk.rows.size() == 6);
  REQUIRE(tp.rows.size() == 12);
  // A run against itself: nothing changes.
  for (const StepsDiffRow& r : DiffSteps(tk, tk, DiffOptions()).rows) {
    INFO(r.measure);
    CHECK(r.base_median == r.current_median);
    CHECK(r.judgement.estimate == 0);
    CHECK_FALSE(r.judgement.significant);
    CHECK(r.judgement.verdict != Verdict::kRegressed);
  }
  // The ProfileProto run against the PyTorch trace: the wall medians of the
  // two tables, and the test of their wall times.
  const StepsDiff d = DiffSteps(tp, tk, DiffOptions());
  REQUIRE(d.rows.front().measure == "wall_ns");
  std::vector<int64_t> wb, wc;
  for (const StepRow& r : tp.rows) wb.push_back(r.wall_ns);
  for (const StepRow& r : tk.rows) wc.push_back(r.wall_ns);
  const double want_p = LogPooledP(wb, wc, 0.02);
  std::sort(wb.begin(), wb.end());
  std::sort(wc.begin(), wc.end());
  CHECK(d.rows[0].base_median == (wb[5] + wb[6]) / 2);
  CHECK(d.rows[0].current_median == (wc[2] + wc[3]) / 2);
  CHECK(d.rows[0].judgement.p_value == Approx(want_p).epsilon(1e-9));
  CHECK(d.rows[0].judgement.verdict == Verdict::kRegressed);  // 16 -> 176ms
  CHECK(d.rows[0].judgement.ci_low > 100e6);
  // JSON carries the means in full (not 6 significant digits): the wall
  // times' sums over their counts, to the last bit a double holds.
  testing::JsonValue json;
  std::string error;
  REQUIRE(testing::ParseJson(RenderStepsDiff(d, "json"), &json, &error));
  const testing::JsonValue& wall = json.at("measures").array.at(0);
  REQUIRE(wall.at("measure").string == "wall_ns");
  auto mean = [](const std::vector<int64_t>& v) {
    double sum = 0;
    for (int64_t x : v) sum += static_cast<double>(x);
    return sum / static_cast<double>(v.size());
  };
  CHECK(wall.at("base_mean").number == Approx(mean(wb)).epsilon(1e-12));
  CHECK(wall.at("current_mean").number == Approx(mean(wc)).epsilon(1e-12));
  CHECK(NumberText(40395922.8) == "40395922.8");
  CHECK(NumberText(0.1) == "0.1");
  CHECK(NumberText(std::nan("")) == "null");
  // A ProfileProto records no allocator bytes in use: not tested.
  const StepsDiffRow& peak = d.rows.back();
  CHECK(peak.measure == "peak_bytes");
  CHECK_FALSE(peak.base_recorded);
  CHECK(peak.judgement.q_value == -1);
  CHECK(RenderStepsDiff(d, "text").find("peak_bytes:  not recorded in the "
                                        "base run") != std::string::npos);
}

TEST_CASE("A kernel diff against a run without kernels") {
  InputPaths kineto, cpu;
  kineto.trace_path = testing::CorpusFile(
      "pytorch-kineto/worker0.1623143089861.pt.trace.json.gz");
  cpu.profile_path =
      testing::CorpusFile("shiyudian-resnet-tf-dist/profile_100");
  auto k = Load(kineto), p = Load(cpu);
  Views vk(&k->model, nullptr), vp(&p->model, nullptr);
  Options o;
  o.max_depth = 1000;
  absl::StatusOr<DiffTree> d = QueryDiff(ViewKind::kKernel, o, DiffOptions(),
                                         &vp, p->model, &vk, k->model);
  REQUIRE(d.ok());
  REQUIRE(d->root().children.size() > 50);
  for (size_t c : d->root().children) {
    CHECK_FALSE(d->nodes[c].base.present);
    CHECK(d->nodes[c].current.present);
  }
  // Markdown marks such rows after the name's code span (inside it the
  // marker would show as code).
  const std::string md = RenderDiffMarkdown(*d);
  const std::string first = d->nodes[d->root().children[0]].name;
  CHECK(md.find("`" + first + "` *(only in current)*") != std::string::npos);
  CHECK(md.find("*(only in current)*`") == std::string::npos);
}

TEST_CASE("diff summary: both runs' devices, times and peaks") {
  InputPaths kineto, xspace;
  kineto.trace_path = testing::CorpusFile(
      "pytorch-kineto/worker0.1623143089861.pt.trace.json.gz");
  xspace.trace_path = testing::CorpusFile(
      "aoberai-chess-engine/train/plugins/profile/2021_06_16_00_30_02/"
      "aoberai.xplane.pb");
  auto k = Load(kineto), x = Load(xspace);
  const ProfileSummary b = Summarize(x->model), c = Summarize(k->model);
  const std::string text = RenderSummaryDiff(b, c, false);
  // GPU 0 of both runs on one line, busy and peak (GPU_0_bfc vs GPU_0).
  const std::string gpu = "/job:localhost/replica:0/task:0/device:gpu:0";
  const DeviceSummary* gb = b.FindDevice(gpu);
  const DeviceSummary* gc = c.FindDevice(gpu);
  REQUIRE(gb != nullptr);
  REQUIRE(gc != nullptr);
  CHECK(text.find("busy/step " + gpu + ": " + FormatNanos(gb->busy_ns) +
                  " -> " + FormatNanos(gc->busy_ns)) != std::string::npos);
  CHECK(text.find("peak memory " + gpu + ": 3.45MB -> 2791.64MB") !=
        std::string::npos);
  CHECK(text.find("nodes:                       120 -> 188, +68") !=
        std::string::npos);
  testing::JsonValue json;
  std::string error;
  REQUIRE(testing::ParseJson(RenderSummaryDiff(b, c, true), &json, &error));
  CHECK(json.at("base").at("nodes").number == 120);
  CHECK(json.at("current").at("steps").number == 6);
}

TEST_CASE("Verdict gates count the changed nodes") {
  std::mt19937 rng(1);
  std::normal_distribution<double> noise(1000, 100);
  const Model base = NoisyRun(rng, noise, 20, 1.0);
  const Model current = NoisyRun(rng, noise, 20, 1.2);
  GateBase gb;
  gb.model = &base;
  auto r =
      EvaluateGates(current,
                    {*ParseCondition("significant(micros)[op3]==1"),
                     *ParseCondition("regressed(micros)[op3]==0"),
                     *ParseCondition("improved(micros)==0"),
                     *ParseCondition("significant(micros)[op[0-24-9]]==0")},
                    -1, gb);
  REQUIRE(r.ok());
  // op3 is 20% slower: a clear regression.
  CHECK((*r)[0].passed);
  CHECK_FALSE((*r)[1].passed);
  CHECK_FALSE((*r)[1].inconclusive);
  CHECK((*r)[1].message.rfind("FAIL regressed(micros)[op3] = 1", 0) == 0);
  // The other ops have 10% noise: 20 steps cannot put them within 2%, and
  // none of them is clearly changed: neither passed nor failed.
  CHECK((*r)[2].value == 0);
  CHECK((*r)[2].inconclusive);
  CHECK((*r)[3].value == 0);
  CHECK((*r)[3].open_nodes == 9);
  CHECK((*r)[3].inconclusive);
  CHECK((*r)[3].more_steps_needed > 0);
  CHECK((*r)[3].message.rfind("INCONCLUSIVE", 0) == 0);
  // A 50% floor: the noise is inside it, the other ops unchanged.
  gb.min_change = *ParseMinChange("50%");
  r = EvaluateGates(
      current, {*ParseCondition("significant(micros)[op[0-24-9]]==0")}, -1, gb);
  REQUIRE(r.ok());
  CHECK((*r)[0].passed);
  CHECK((*r)[0].open_nodes == 0);
}

}  // namespace
}  // namespace tfprof
