// The diff's verdicts: Student's t against closed forms and numerical
// integration, the change test and the occurrence jitter against
// computations from scratch, generated pairs of 3 and 4 steps (a 3x slower
// op, a 1% change, 200 pairs from one distribution, counted), the JSON
// contract, and the real ResNet pairs of the corpus (identical runs; NCHW
// against channels_last) checked against the raw traces.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <deque>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "profiler/base/file.h"
#include "profiler/base/gzip.h"
#include "profiler/base/stats.h"
#include "profiler/load/loader.h"
#include "profiler/render/render_diff.h"
#include "profiler/views/diff.h"
#include "profiler/views/diff_samples.h"
#include "profiler/views/steps.h"
#include "profiler/views/views.h"
#include "tests/json_parse.h"
#include "tests/test_util.h"

namespace tfprof {
namespace {

// P(|T| >= t) by Simpson's rule over the density from 0 to t.
double TailByIntegration(double t, double df) {
  const double c = std::exp(std::lgamma((df + 1) / 2) - std::lgamma(df / 2)) /
                   std::sqrt(df * M_PI);
  auto f = [&](double x) {
    return c * std::pow(1 + x * x / df, -(df + 1) / 2);
  };
  const int n = 20000;
  const double h = t / n;
  double sum = f(0) + f(t);
  for (int i = 1; i < n; ++i) sum += (i % 2 == 1 ? 4 : 2) * f(i * h);
  return 1 - 2 * sum * h / 3;
}

TEST_CASE("Student's t: closed forms, integration and critical values") {
  for (double t : {0.1, 0.5, 1.0, 2.5, 7.0, 40.0}) {
    INFO("t " << t);
    // df 1 is Cauchy's, df 2 has a closed form too.
    CHECK(StudentTwoSidedP(t, 1) ==
          Approx(1 - 2 / M_PI * std::atan(t)).margin(1e-12));
    CHECK(StudentTwoSidedP(t, 2) ==
          Approx(1 - t / std::sqrt(2 + t * t)).margin(1e-12));
    for (double df : {3.0, 4.5, 8.0, 30.0}) {
      INFO("df " << df);
      CHECK(StudentTwoSidedP(t, df) ==
            Approx(TailByIntegration(t, df)).margin(1e-8));
    }
  }
  for (double p : {0.2, 0.05, 0.01, 1e-4}) {
    for (double df : {1.0, 2.0, 4.0, 8.0, 17.0}) {
      INFO("p " << p << " df " << df);
      const double t = StudentCritical(p, df);
      CHECK(StudentTwoSidedP(t, df) == Approx(p).epsilon(1e-8));
    }
  }
  // Printed tables: t(0.975, 4) and t(0.975, 8).
  CHECK(StudentCritical(0.05, 4) == Approx(2.776445).epsilon(1e-6));
  CHECK(StudentCritical(0.05, 8) == Approx(2.306004).epsilon(1e-6));
}

// Welch's test on plain values, from scratch.
TEST_CASE("TestChange: Welch on values with zeros, pooled t on logarithms") {
  const std::vector<double> zeros = {0, 10, 20}, later = {30, 45, 50};
  ChangeInput in;
  in.base = zeros;
  in.current = later;
  in.floor = 2;
  const ChangeTest t = TestChange(in, 0.05);
  REQUIRE(t.tested);
  CHECK_FALSE(t.log_scale);
  auto variance = [](const std::vector<double>& v) {
    double mean = 0, ss = 0;
    for (double x : v) mean += x / static_cast<double>(v.size());
    for (double x : v) ss += (x - mean) * (x - mean);
    return ss / static_cast<double>(v.size() - 1);
  };
  const double vb = variance(zeros), vc = variance(later);
  const double se = std::sqrt(vb / 3 + vc / 3);
  const double df =
      std::floor(std::pow(vb / 3 + vc / 3, 2) /
                 (std::pow(vb / 3, 2) / 2 + std::pow(vc / 3, 2) / 2));
  const double d = 125.0 / 3 - 10;
  CHECK(t.estimate == Approx(d));
  CHECK(t.df == df);
  CHECK(t.p_value == Approx(StudentTwoSidedP((d - 2) / se, df)));
  CHECK(t.ci_low == Approx(d - StudentCritical(0.05, df) * se));
  CHECK(t.ci_high == Approx(d + StudentCritical(0.05, df) * se));
  // All positive: logarithms; the interval in the values' unit is the base
  // mean times (ratio - 1).
  const std::vector<double> before = {100, 110, 90, 105};
  const std::vector<double> after = {300, 330, 280, 310};
  in.base = before;
  in.current = after;
  const ChangeTest l = TestChange(in, 0.05);
  REQUIRE(l.log_scale);
  double mb = 0, mc = 0;
  for (double x : in.base) mb += std::log(x) / 4;
  for (double x : in.current) mc += std::log(x) / 4;
  CHECK(l.d == Approx(mc - mb));
  CHECK(l.estimate == Approx(101.25 * (std::exp(mc - mb) - 1)));
  CHECK(l.ci_low == Approx(101.25 * std::expm1(l.low)));
  CHECK(l.ci_low < l.estimate);
  CHECK(l.ci_high > l.estimate);
  // A jitter larger than the steps' spread widens the interval.
  in.base_jitter = in.current_jitter = 400 * 100;
  const ChangeTest wide = TestChange(in, 0.05);
  CHECK(wide.high - wide.low > l.high - l.low);
}

TEST_CASE(
    "TestChange: p below alpha exactly when the interval clears the floor") {
  std::mt19937 rng(3);
  std::lognormal_distribution<double> noise(0, 0.05);
  int decided = 0;
  for (int round = 0; round < 500; ++round) {
    std::vector<double> base, current;
    const double shift = 1 + (round % 7) * 0.01;
    for (int i = 0; i < 3 + round % 3; ++i) {
      base.push_back(1000 * noise(rng));
      current.push_back(1000 * shift * noise(rng));
    }
    ChangeInput in;
    in.base = base;
    in.current = current;
    in.floor = 20;
    const ChangeTest t = TestChange(in, 0.05);
    INFO("round " << round);
    const bool beyond = t.low > t.phi || t.high < -t.phi;
    CHECK((t.p_value < 0.05) == beyond);
    decided += beyond;
  }
  CHECK(decided > 20);
}

TEST_CASE("Occurrence jitter: the two-way residual variance") {
  std::mt19937 rng(5);
  std::normal_distribution<double> noise(0, 3);
  // 4 steps x 6 positions with a step level and a position level.
  std::vector<std::vector<double>> steps(4);
  for (size_t s = 0; s < steps.size(); ++s) {
    for (int k = 0; k < 6; ++k) {
      steps[s].push_back(100.0 * (k + 1) + 10.0 * s + noise(rng));
    }
  }
  // The residual sum of squares from the decomposition of the total one.
  double grand = 0;
  for (const auto& s : steps) {
    for (double x : s) grand += x / 24;
  }
  double total = 0, between_steps = 0, between_positions = 0;
  for (const auto& s : steps) {
    double m = 0;
    for (double x : s) {
      total += (x - grand) * (x - grand);
      m += x / 6;
    }
    between_steps += 6 * (m - grand) * (m - grand);
  }
  for (int k = 0; k < 6; ++k) {
    double m = 0;
    for (const auto& s : steps) m += s[k] / 4;
    between_positions += 4 * (m - grand) * (m - grand);
  }
  const double residual = (total - between_steps - between_positions) / 15;
  CHECK(OccurrenceJitter(steps) == Approx(6 * residual).epsilon(1e-9));
  // With noise of sd 3 per occurrence: about 6 * 9 per step.
  CHECK(OccurrenceJitter(steps) > 6 * 9 * 0.3);
  CHECK(OccurrenceJitter(steps) < 6 * 9 * 3);
  // Positions that do not line up, a single step: nothing to say.
  steps[1].pop_back();
  CHECK(OccurrenceJitter(steps) == 0);
  CHECK(OccurrenceJitter({{1, 2, 3}}) == 0);
}

// ---------------------------------------------------------------------------
// Generated runs: 6 op types, 2 nodes each, each node running 2 to 5 times
// a step with durations that differ by position (layers of different
// sizes). Every step has its own speed (a clock: 4% sd, shared by all ops),
// every occurrence its own jitter (5% sd).

struct Generated {
  Model model;
  // op type -> step -> occurrence durations (microseconds), as generated.
  std::map<std::string, std::vector<std::vector<double>>> occurrences;
};

constexpr int kTypes = 6;

// The node's name, and its op type; with `moved`, block0/op1 is called
// block0/moved and has type Moved (the same work under another name).
std::pair<std::string, std::string> NodeOf(int block, int type, bool moved) {
  if (moved && block == 0 && type == 1) return {"block0/moved", "Moved"};
  return {absl::StrCat("block", block, "/op", type),
          absl::StrCat("Type", type)};
}

Generated GeneratedRun(std::mt19937& rng, int steps, const std::string& slow,
                       double factor, bool moved = false) {
  Generated g;
  tfcore::GraphDef graph;
  for (int t = 0; t < kTypes; ++t) {
    for (int i = 0; i < 2; ++i) {
      auto* n = graph.add_node();
      n->set_name(NodeOf(i, t, moved).first);
      n->set_op(NodeOf(i, t, moved).second);
    }
  }
  g.model.AddGraph(graph);
  std::normal_distribution<double> clock(1, 0.04), jitter(1, 0.05);
  for (int s = 0; s < steps; ++s) {
    tfcore::RunMetadata rm;
    auto* dev = rm.mutable_step_stats()->add_dev_stats();
    dev->set_device("/job:localhost/replica:0/task:0/device:cpu:0");
    const double speed = clock(rng);
    int64_t at = 1000;
    for (int t = 0; t < kTypes; ++t) {
      const std::string type = absl::StrCat("Type", t);
      auto& mine = g.occurrences[type];
      mine.resize(steps);
      for (int i = 0; i < 2; ++i) {
        for (int k = 0; k < 2 + (t + i) % 4; ++k) {
          double us = 40.0 * (k + 1) * (t + 1) * speed * jitter(rng);
          if (type == slow) us *= factor;
          const int64_t d = std::max<int64_t>(1, std::llround(us));
          auto* ns = dev->add_node_stats();
          ns->set_node_name(NodeOf(i, t, moved).first);
          ns->set_all_start_micros(at);
          ns->set_op_end_rel_micros(d);
          ns->set_all_end_rel_micros(d);
          at += d + 1;
          mine[s].push_back(static_cast<double>(d));
        }
      }
    }
    REQUIRE(g.model.AddRunMeta(s, rm).ok());
  }
  return g;
}

DiffTree DiffOf(ViewKind view, const Model& base, const Model& current,
                const DiffOptions& options = DiffOptions()) {
  Views vb(&base, nullptr), vc(&current, nullptr);
  Options o;
  o.max_depth = 100;
  absl::StatusOr<DiffTree> d =
      QueryDiff(view, o, options, &vb, base, &vc, current);
  REQUIRE(d.ok());
  return std::move(*d);
}

const DiffNode* Row(const DiffTree& d, const std::string& name) {
  for (const DiffNode& n : d.nodes) {
    if (n.name == name) return &n;
  }
  return nullptr;
}

int Changed(const DiffTree& d) {
  int changed = 0;
  for (const DiffNode& n : d.nodes) changed += n.judgement.significant;
  return changed;
}

TEST_CASE("Generated pairs of 3 and 4 steps: 3x slower regressed, 1% not") {
  for (int steps : {3, 4}) {
    for (int seed = 1; seed <= 20; ++seed) {
      INFO(steps << " steps, seed " << seed);
      std::mt19937 rng(seed);
      const Generated base = GeneratedRun(rng, steps, "", 1);
      const Generated slow = GeneratedRun(rng, steps, "Type2", 3);
      const Generated close = GeneratedRun(rng, steps, "Type2", 1.01);
      const DiffTree d = DiffOf(ViewKind::kOp, base.model, slow.model);
      const DiffNode* type2 = Row(d, "Type2");
      REQUIRE(type2 != nullptr);
      CHECK(type2->judgement.verdict == Verdict::kRegressed);
      CHECK(type2->judgement.significant);
      // The interval holds the generated change: twice the base's time.
      double per_step = 0;
      for (const auto& s : base.occurrences.at("Type2")) {
        for (double x : s) per_step += x / steps;
      }
      CHECK(type2->judgement.ci_low < 2 * per_step * 1.2);
      CHECK(type2->judgement.ci_high > 2 * per_step * 0.8);
      const DiffTree c = DiffOf(ViewKind::kOp, base.model, close.model);
      const Verdict v = Row(c, "Type2")->judgement.verdict;
      CHECK((v == Verdict::kUnchanged || v == Verdict::kInconclusive));
      CHECK(Changed(c) == 0);
    }
  }
}

TEST_CASE("200 generated pairs from one distribution: at most 5% changed") {
  int pairs_changed = 0, naive_changed = 0;
  for (int seed = 1; seed <= 200; ++seed) {
    std::mt19937 rng(1000 + seed);
    const int steps = 3 + seed % 3;  // 3, 4 or 5 a side
    const Generated a = GeneratedRun(rng, steps, "", 1);
    const Generated b = GeneratedRun(rng, steps, "", 1);
    const int changed = Changed(DiffOf(ViewKind::kOp, a.model, b.model)) +
                        Changed(DiffOf(ViewKind::kScope, a.model, b.model));
    pairs_changed += changed > 0;
    // The naive way: every occurrence an independent sample, compared with
    // the occurrences at its position (a stratified comparison that knows
    // no step level): the same test and correction over the op types.
    std::vector<ChangeInput> naive;
    std::deque<std::vector<double>> samples;  // what the inputs point at
    for (const auto& [type, by_step] : a.occurrences) {
      const auto& other = b.occurrences.at(type);
      std::vector<double> position_mean(by_step[0].size(), 0);
      for (const auto* side : {&by_step, &other}) {
        for (const auto& s : *side) {
          for (size_t k = 0; k < s.size(); ++k) {
            position_mean[k] += s[k] / static_cast<double>(2 * steps);
          }
        }
      }
      std::vector<double>& base = samples.emplace_back();
      std::vector<double>& current = samples.emplace_back();
      for (const auto& s : by_step) {
        for (size_t k = 0; k < s.size(); ++k) {
          base.push_back(s[k] / position_mean[k]);
        }
      }
      for (const auto& s : other) {
        for (size_t k = 0; k < s.size(); ++k) {
          current.push_back(s[k] / position_mean[k]);
        }
      }
      ChangeInput in;
      in.base = base;
      in.current = current;
      SetFloor(MinChange(), StatUnit::kCount, &in);  // 2% of ~1
      naive.push_back(std::move(in));
    }
    int naive_rows = 0;
    for (const Judgement& j : JudgeChanges(naive, 0.05)) {
      naive_rows += j.significant;
    }
    naive_changed += naive_rows > 0;
  }
  INFO("pairs with a changed row: " << pairs_changed << " of 200; naive "
                                    << naive_changed);
  CHECK(pairs_changed <= 10);
  // Occurrences are not independent samples: a step's clock moves them all,
  // and the naive comparison calls the clock a change.
  CHECK(naive_changed > 15);
}

TEST_CASE("diff JSON: every row carries its verdict and interval") {
  std::mt19937 rng(9);
  const Generated base = GeneratedRun(rng, 4, "", 1);
  const Generated slow = GeneratedRun(rng, 4, "Type4", 1.5);
  for (ViewKind view : {ViewKind::kScope, ViewKind::kOp}) {
    const DiffTree d = DiffOf(view, base.model, slow.model);
    testing::JsonValue json;
    std::string error;
    REQUIRE(testing::ParseJson(RenderDiffJson(d), &json, &error));
    CHECK(json.at("min_change").string == "2%,2us");
    CHECK(json.at("shifts").kind == testing::JsonValue::kArray);
    int rows = 0, regressed = 0;
    std::function<void(const testing::JsonValue&)> walk =
        [&](const testing::JsonValue& n) {
          INFO(n.at("name").string);
          const std::string v = n.at("verdict").string;
          CHECK((v == "regressed" || v == "improved" || v == "unchanged" ||
                 v == "inconclusive"));
          CHECK(n.at("significant").boolean ==
                (v == "regressed" || v == "improved"));
          CHECK(n.Has("more_steps_needed") == (v == "inconclusive"));
          CHECK(n.at("ci_low").kind == testing::JsonValue::kNumber);
          CHECK(n.at("ci_low").number <= n.at("ci_high").number);
          CHECK(n.at("p_value").kind == testing::JsonValue::kNumber);
          regressed += v == "regressed";
          ++rows;
          for (const auto& c : n.at("children").array) walk(c);
        };
    walk(json.at("root"));
    CHECK(rows >= kTypes + 1);
    CHECK(regressed >= 1);
  }
}

TEST_CASE("Cost shifts: work that moved to a new name under one parent") {
  std::mt19937 rng(4);
  const Generated base = GeneratedRun(rng, 4, "", 1);
  const Generated moved = GeneratedRun(rng, 4, "", 1, /*moved=*/true);
  CHECK(DiffOf(ViewKind::kScope, base.model, GeneratedRun(rng, 4, "", 1).model)
            .shifts.empty());
  // Scope view: block0/op1 vanished, block0/moved appeared, under block0.
  const DiffTree scope = DiffOf(ViewKind::kScope, base.model, moved.model);
  REQUIRE(scope.shifts.size() == 1);
  const DiffShift& s = scope.shifts[0];
  CHECK(s.parent == "block0");
  REQUIRE(s.removed.size() == 1);
  REQUIRE(s.added.size() == 1);
  CHECK(s.removed[0].name == "block0/op1");
  CHECK(s.added[0].name == "block0/moved");
  CHECK_FALSE(s.removed[0].current_present);
  CHECK_FALSE(s.added[0].base_present);
  // Each row alone changed a lot; together the same work moved.
  REQUIRE(Row(scope, "block0/op1") != nullptr);
  REQUIRE(Row(scope, "block0/moved") != nullptr);
  CHECK(Row(scope, "block0/op1")->judgement.verdict == Verdict::kImproved);
  CHECK(Row(scope, "block0/moved")->judgement.verdict == Verdict::kRegressed);
  CHECK(s.base == s.removed[0].base);
  CHECK(s.current == s.added[0].current);
  CHECK_FALSE(s.combined.significant);
  CHECK(std::fabs(s.combined.estimate) < 0.1 * s.combined.base_mean);
  // Op view: Type1 runs half as often, Moved appears; neither has a
  // calling op.
  const DiffTree ops = DiffOf(ViewKind::kOp, base.model, moved.model);
  REQUIRE(ops.shifts.size() == 1);
  CHECK(ops.shifts[0].parent == "(no calling op)");
  CHECK(ops.shifts[0].removed[0].name == "Type1");
  CHECK(ops.shifts[0].added[0].name == "Moved");
  CHECK(RenderDiffText(ops).find("Cost shifts") != std::string::npos);
}

// Each row's value in one step, by the path of names, from a query of that
// step (a flat view's rows: their own figures).
std::map<std::string, std::pair<int64_t, int64_t>> StepRows(
    Views* views, ViewKind view, Options o, int64_t step, Attr attr) {
  o.step = step;
  absl::StatusOr<ResultTree> r = views->Query(view, o);
  REQUIRE(r.ok());
  std::map<std::string, std::pair<int64_t, int64_t>> out;
  std::function<void(size_t, const std::string&)> walk =
      [&](size_t i, const std::string& path) {
        const ResultNode& n = r->nodes[i];
        Totals t = n.total;
        if (IsFlatView(view) && i > 0) {
          t = Totals();
          t.AddSelf(n.self);
        }
        int64_t v = 0;
        REQUIRE(IsCount(attr));
        v = Value(t, attr);
        out[path].first += v;
        out[path].second += t.run_count;
        for (size_t c : n.children) walk(c, path + "/" + r->nodes[c].name);
      };
  walk(0, "");
  return out;
}

TEST_CASE(
    "One pass gives each row's per-step figures as per-step queries "
    "do") {
  InputPaths kineto;
  kineto.trace_path = testing::CorpusFile(
      "pytorch-kineto/worker0.1623143089861.pt.trace.json.gz");
  auto loaded = LoadProfile(kineto);
  REQUIRE(loaded.ok());
  std::mt19937 rng(11);
  const Generated generated = GeneratedRun(rng, 4, "", 1);
  int rows = 0;
  const std::vector<const Model*> models = {&(*loaded)->model,
                                            &generated.model};
  for (const Model* m : models) {
    Views a(m, nullptr), b(m, nullptr);
    for (ViewKind view : {ViewKind::kScope, ViewKind::kOp, ViewKind::kGraph,
                          ViewKind::kCode, ViewKind::kKernel}) {
      if (view == ViewKind::kKernel && m == &generated.model) continue;
      if (view == ViewKind::kCode && !m->has_code_traces()) continue;
      for (Attr attr : {Attr::kMicros, Attr::kOccurrence}) {
        INFO(ViewName(view) << " " << AttrName(attr));
        Options o;
        o.max_depth = 1000;
        o.order_by = attr;
        absl::StatusOr<DiffTree> d =
            QueryDiff(view, o, DiffOptions(), &a, *m, &b, *m);
        REQUIRE(d.ok());
        CHECK(d->notes.empty());  // no query per step
        size_t k = 0;
        for (int64_t step : m->steps()) {
          const auto want = StepRows(&a, view, o, step, attr);
          std::function<void(size_t, const std::string&)> walk =
              [&](size_t i, const std::string& path) {
                const DiffNode& n = d->nodes[i];
                INFO(path << " step " << step);
                auto it = want.find(path);
                const double v = it == want.end() ? 0 : it->second.first;
                const double runs = it == want.end() ? 0 : it->second.second;
                CHECK(n.base.per_step[k] == Approx(v).margin(0.5));
                CHECK(n.current.runs[k] == runs);
                ++rows;
                for (size_t c : n.children) {
                  walk(c, path + "/" + d->nodes[c].name);
                }
              };
          walk(0, "");
          ++k;
        }
      }
    }
  }
  CHECK(rows > 5000);
}

// ---------------------------------------------------------------------------
// The corpus's real pairs, against the raw traces.

// Kernel name -> launching op type -> launches, from a raw Kineto trace: a
// kernel's runtime call (by correlation) and the innermost CPU op that
// encloses it on its thread.
std::map<std::string, std::map<std::string, int>> RawKernels(
    const std::string& path) {
  absl::StatusOr<std::string> bytes = ReadFileToString(path);
  REQUIRE(bytes.ok());
  absl::StatusOr<std::string> text = Gunzip(*bytes);
  REQUIRE(text.ok());
  testing::JsonValue json;
  std::string error;
  REQUIRE(testing::ParseJson(*text, &json, &error));
  struct Span {
    double ts, end;
    std::string name;
  };
  std::map<double, Span> runtime;           // correlation -> call
  std::map<double, double> runtime_thread;  // correlation -> tid
  std::map<double, std::vector<Span>> ops;  // tid -> cpu ops
  std::vector<const testing::JsonValue*> kernels;
  for (const testing::JsonValue& e : json.at("traceEvents").array) {
    if (!e.Has("ph") || e.at("ph").string != "X" || !e.Has("cat")) continue;
    const std::string& cat = e.at("cat").string;
    const Span s{e.at("ts").number, e.at("ts").number + e.at("dur").number,
                 e.at("name").string};
    if (cat == "cuda_runtime" || cat == "cuda_driver") {
      const double c = e.at("args").at("correlation").number;
      runtime[c] = s;
      runtime_thread[c] = e.at("tid").number;
    } else if (cat == "cpu_op") {
      ops[e.at("tid").number].push_back(s);
    } else if (cat == "kernel") {
      kernels.push_back(&e);
    }
  }
  std::map<std::string, std::map<std::string, int>> out;
  for (const testing::JsonValue* k : kernels) {
    const double c = k->at("args").at("correlation").number;
    std::string op = "?";
    auto r = runtime.find(c);
    if (r != runtime.end()) {
      const Span* best = nullptr;
      for (const Span& o : ops[runtime_thread[c]]) {
        if (o.ts <= r->second.ts && o.end >= r->second.end &&
            (best == nullptr || o.ts >= best->ts)) {
          best = &o;
        }
      }
      if (best != nullptr) op = best->name;
    }
    ++out[k->at("name").string][op];
  }
  return out;
}

std::string Heaviest(const std::map<std::string, int>& by_op) {
  std::string best;
  int most = -1;
  for (const auto& [op, n] : by_op) {
    if (n > most) {
      best = op;
      most = n;
    }
  }
  return best;
}

struct Pair {
  std::unique_ptr<LoadedProfile> base, current;
};

bool LoadPair(const std::string& base, const std::string& current, Pair* p) {
  const std::string dir = "gpu-h200-2026/";
  if (!testing::HaveCorpusFile(dir + base) ||
      !testing::HaveCorpusFile(dir + current)) {
    return false;
  }
  InputPaths b, c;
  b.trace_path = testing::CorpusFile(dir + base);
  c.trace_path = testing::CorpusFile(dir + current);
  auto lb = LoadProfile(b), lc = LoadProfile(c);
  REQUIRE(lb.ok());
  REQUIRE(lc.ok());
  p->base = std::move(*lb);
  p->current = std::move(*lc);
  return true;
}

DiffTree PairDiff(const Pair& p, ViewKind view) {
  return DiffOf(view, p.base->model, p.current->model);
}

TEST_CASE(
    "resnet vs resnet_b (identical runs): no op changed, kernel swaps "
    "are shifts") {
  Pair p;
  if (!LoadPair("resnet.pt.trace.json.gz", "resnet_b.pt.trace.json.gz", &p)) {
    return;
  }
  const DiffTree ops = PairDiff(p, ViewKind::kOp);
  REQUIRE(ops.nodes.size() > 50);
  for (const DiffNode& n : ops.nodes) {
    INFO(n.name);
    CHECK_FALSE(n.judgement.significant);
    CHECK(n.judgement.tested);
  }
  // Nor did the steps: the wall, judged on its own, neither.
  for (const StepsDiffRow& r :
       DiffSteps(ComputeSteps(p.base->model), ComputeSteps(p.current->model),
                 DiffOptions())
           .rows) {
    INFO(r.measure);
    CHECK_FALSE(r.judgement.significant);
  }
  const DiffTree kernels = PairDiff(p, ViewKind::kKernel);
  // Every clear change of a kernel row belongs to a cost shift.
  for (const DiffNode& n : kernels.nodes) {
    if (&n == &kernels.root()) continue;
    INFO(n.name);
    if (n.judgement.significant) CHECK(n.shift >= 0);
  }
  // The kernels the two processes' autotuners launched a different number
  // of times (from the raw traces) are in a shift under their launching op.
  const auto raw_b =
      RawKernels(testing::CorpusFile("gpu-h200-2026/resnet.pt.trace.json.gz"));
  const auto raw_c = RawKernels(
      testing::CorpusFile("gpu-h200-2026/resnet_b.pt.trace.json.gz"));
  std::set<std::string> names;
  for (const auto& [k, unused] : raw_b) names.insert(k);
  for (const auto& [k, unused] : raw_c) names.insert(k);
  int swapped = 0;
  std::set<std::string> parents;
  for (const std::string& k : names) {
    auto count = [&](const auto& raw) {
      int n = 0;
      auto it = raw.find(k);
      if (it != raw.end()) {
        for (const auto& [op, c] : it->second) n += c;
      }
      return n;
    };
    if (count(raw_b) == count(raw_c)) continue;
    INFO(k);
    const DiffNode* row = Row(kernels, k);
    REQUIRE(row != nullptr);
    REQUIRE(row->shift >= 0);
    const auto& by_op = raw_b.count(k) ? raw_b.at(k) : raw_c.at(k);
    CHECK(kernels.shifts[row->shift].parent == Heaviest(by_op));
    parents.insert(kernels.shifts[row->shift].parent);
    ++swapped;
  }
  CHECK(swapped >= 10);
  CHECK(parents == std::set<std::string>{"aten::convolution_backward",
                                         "aten::cudnn_convolution"});
  // -map renames the shifts' parents as it renames the rows.
  DiffOptions renamed;
  renamed.rules.push_back(*ParseDiffRule("aten::(.*)=>\\1"));
  std::set<std::string> mapped;
  for (const DiffShift& s :
       DiffOf(ViewKind::kKernel, p.base->model, p.current->model, renamed)
           .shifts) {
    mapped.insert(s.parent);
  }
  CHECK(mapped ==
        std::set<std::string>{"convolution_backward", "cudnn_convolution"});
}

TEST_CASE(
    "resnet_nchw vs resnet: the step, convolutions and batch norm "
    "regressed; layout conversions replace channels_last kernels") {
  Pair p;
  if (!LoadPair("resnet.pt.trace.json.gz", "resnet_nchw.pt.trace.json.gz",
                &p)) {
    return;
  }
  const DiffTree scope = PairDiff(p, ViewKind::kScope);
  const DiffNode* step = Row(scope, "ProfilerStep");
  REQUIRE(step != nullptr);
  CHECK(step->judgement.verdict == Verdict::kRegressed);
  const DiffTree ops = PairDiff(p, ViewKind::kOp);
  for (const char* op :
       {"aten::cudnn_convolution", "aten::convolution_backward",
        "aten::native_batch_norm", "aten::native_batch_norm_backward"}) {
    INFO(op);
    const DiffNode* row = Row(ops, op);
    REQUIRE(row != nullptr);
    CHECK(row->judgement.verdict == Verdict::kRegressed);
  }
  const StepsDiff steps =
      DiffSteps(ComputeSteps(p.base->model), ComputeSteps(p.current->model),
                DiffOptions());
  // The wall is judged on its own (p = 0.030): among the seven measures it
  // would be q = 0.053, inconclusive.
  CHECK(steps.rows[0].measure == "wall_ns");
  CHECK(steps.rows[0].judgement.verdict == Verdict::kRegressed);
  CHECK(steps.rows[1].measure == "accelerator_ns");
  CHECK(steps.rows[1].judgement.verdict == Verdict::kRegressed);
  // Kernels: the raw traces say which appeared and which vanished.
  const auto raw_b =
      RawKernels(testing::CorpusFile("gpu-h200-2026/resnet.pt.trace.json.gz"));
  const auto raw_c = RawKernels(
      testing::CorpusFile("gpu-h200-2026/resnet_nchw.pt.trace.json.gz"));
  const DiffTree kernels = PairDiff(p, ViewKind::kKernel);
  int conversions = 0, channels_last = 0;
  for (const DiffShift& s : kernels.shifts) {
    bool converts = false;
    for (const auto& m : s.added) {
      const bool conversion = absl::StrContains(m.name, "nchwToNhwc") ||
                              absl::StrContains(m.name, "nhwcToNchw");
      if (conversion) {
        INFO(m.name);
        CHECK(raw_b.count(m.name) == 0);  // new in the NCHW run
        CHECK(raw_c.count(m.name) == 1);
        converts = true;
        ++conversions;
      }
    }
    if (!converts) continue;
    // They replace kernels that the channels_last run launched and the
    // NCHW run does not.
    int vanished = 0;
    for (const auto& m : s.removed) {
      if (raw_c.count(m.name) == 0) {
        CHECK(raw_b.count(m.name) == 1);
        ++vanished;
      }
    }
    CHECK(vanished > 0);
  }
  CHECK(conversions == 2);
  for (const DiffShift& s : kernels.shifts) {
    for (const auto& m : s.removed) {
      channels_last += absl::StrContains(m.name, "channels_last") &&
                       raw_c.count(m.name) == 0;
    }
  }
  CHECK(channels_last >= 4);  // batch norm's channels_last kernels
}

}  // namespace
}  // namespace tfprof
