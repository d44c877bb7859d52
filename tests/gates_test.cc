// check: gate conditions, their parsing and evaluation.
#include "profiler/advise/gates.h"

#include <catch2/catch.hpp>

#include "profiler/load/loader.h"
#include "tests/corpus_util.h"

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

}  // namespace
}  // namespace tfprof
