// Invariants of every view on every corpus input: totals never below self,
// parents add up their children, the root adds up the top level.
#include <catch2/catch.hpp>

#include "profiler/views/views.h"
#include "tests/corpus_util.h"
#include "tests/test_util.h"

namespace tfprof {
namespace {

void CheckNotBelowSelf(const ResultNode& n) {
  if (!n.account) return;
  CHECK(n.total.exec_micros >= n.self.exec_micros);
  CHECK(n.total.accelerator_exec_micros >= n.self.accelerator_exec_micros);
  CHECK(n.total.cpu_exec_micros >= n.self.cpu_exec_micros);
  CHECK(n.total.requested_bytes >= n.self.requested_bytes);
  CHECK(n.total.peak_bytes >= n.self.peak_bytes);
  CHECK(n.total.parameters >= n.self.parameters);
  CHECK(n.total.float_ops >= n.self.float_ops);
}

// total == self + sum(children totals), field by field.
void CheckSums(const ResultTree& r, size_t id, bool exact) {
  const ResultNode& n = r.nodes[id];
  Totals sum;
  if (id != 0 || exact) {
    // The root has no stats of its own.
    if (id != 0) sum.AddSelf(n.self);
  }
  for (size_t c : n.children) sum.Add(r.nodes[c].total);
  INFO(n.name);
  if (exact) {
    CHECK(n.total.exec_micros == sum.exec_micros);
    CHECK(n.total.cpu_exec_micros == sum.cpu_exec_micros);
    CHECK(n.total.accelerator_exec_micros == sum.accelerator_exec_micros);
    CHECK(n.total.requested_bytes == sum.requested_bytes);
    CHECK(n.total.parameters == sum.parameters);
    CHECK(n.total.float_ops == sum.float_ops);
  } else {
    CHECK(n.total.exec_micros >= sum.exec_micros);
    CHECK(n.total.requested_bytes >= sum.requested_bytes);
    CHECK(n.total.parameters >= sum.parameters);
  }
  CheckNotBelowSelf(n);
  for (size_t c : n.children) CheckSums(r, c, exact);
}

TEST_CASE("Tree views add up on every corpus input") {
  for (const auto& c : testing::CorpusCases()) {
    INFO(c.name);
    auto loaded = LoadProfile(c.paths);
    REQUIRE(loaded.ok());
    const Model& m = (*loaded)->model;
    Views views(&m, nullptr);
    for (ViewKind v : {ViewKind::kScope, ViewKind::kGraph, ViewKind::kCode}) {
      if (v == ViewKind::kCode && !m.has_code_traces()) continue;
      INFO(ViewName(v));
      Options o;
      o.max_depth = 1000000;
      auto r = views.Query(v, o);
      REQUIRE(r.ok());
      // Nothing hidden: every parent is exactly itself plus its children.
      CheckSums(*r, 0, true);

      // With filters, displayed-only accounting keeps the sums exact.
      o.min_micros = 2;
      o.max_depth = 4;
      o.account_displayed_op_only = true;
      r = views.Query(v, o);
      REQUIRE(r.ok());
      CheckSums(*r, 0, v != ViewKind::kCode);  // code ignores the option

      // Without it, filtered children never exceed their parent.
      o.account_displayed_op_only = false;
      r = views.Query(v, o);
      REQUIRE(r.ok());
      CheckSums(*r, 0, false);
    }
  }
}

TEST_CASE("Op view totals are suffix sums of the rows") {
  for (const auto& c : testing::CorpusCases()) {
    INFO(c.name);
    auto loaded = LoadProfile(c.paths);
    REQUIRE(loaded.ok());
    Views views(&(*loaded)->model, nullptr);
    for (const char* order : {"name", "micros", "bytes", "params"}) {
      Options o;
      o.max_depth = 1000000;
      REQUIRE(SetOption("order_by", order, &o).ok());
      auto r = views.Query(ViewKind::kOp, o);
      REQUIRE(r.ok());
      const auto& rows = r->root().children;
      int64_t running = 0;
      for (auto it = rows.rbegin(); it != rows.rend(); ++it) {
        const ResultNode& n = r->nodes[*it];
        running += n.self.exec_micros;
        CHECK(n.total.exec_micros == running);
      }
      CHECK(r->root().total.exec_micros == running);
    }
  }
}

TEST_CASE("Multi-step: the average lies between the steps' extremes") {
  InputPaths p;
  p.profile_path = testing::CorpusFile("shiyudian-resnet-tf-dist/profile_100");
  auto loaded = LoadProfile(p);
  REQUIRE(loaded.ok());
  const Model& m = (*loaded)->model;
  REQUIRE(m.steps().size() == 12);
  for (const auto& node : m.nodes()) {
    if (node->execs.empty()) continue;
    int64_t lo = INT64_MAX, hi = 0;
    for (const StepExec& e : node->execs) {
      lo = std::min(lo, e.exec_micros());
      hi = std::max(hi, e.exec_micros());
    }
    const int64_t avg = node->Stats(-1).exec_micros;
    CHECK(avg >= lo);
    CHECK(avg <= hi);
  }
}

}  // namespace
}  // namespace tfprof
