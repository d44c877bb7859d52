// Helpers of the tests that check traces' figures against facts no tfprof
// code computes (trace_facts_test, device_kernel_test).
#ifndef TFPROF_TESTS_TRACE_FACTS_UTIL_H_
#define TFPROF_TESTS_TRACE_FACTS_UTIL_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>

#include "catch2/catch.hpp"
#include "profiler/load/loader.h"
#include "profiler/views/views.h"
#include "tests/json_parse.h"

namespace tfprof {
namespace testing {

inline constexpr char kAoberai[] =
    "aoberai-chess-engine/train/plugins/profile/2021_06_16_00_30_02/aoberai.";
inline constexpr char kKineto[] =
    "pytorch-kineto/worker0.1623143089861.pt.trace.json.gz";

// A trace loaded as --trace_path loads it (the test fails if it cannot be).
inline std::unique_ptr<LoadedProfile> LoadTrace(const std::string& path) {
  InputPaths paths;
  paths.trace_path = path;
  auto loaded = LoadProfile(paths);
  REQUIRE(loaded.ok());
  return std::move(*loaded);
}

// Every kernel row of the kernel view: name -> (launches, total ns).
inline std::map<std::string, std::pair<int64_t, int64_t>> KernelRows(
    const Model& model) {
  Views views(&model, nullptr);
  Options o;
  o.max_depth = 1000000;
  absl::StatusOr<ResultTree> r = views.Query(ViewKind::kKernel, o);
  REQUIRE(r.ok());
  std::map<std::string, std::pair<int64_t, int64_t>> rows;
  for (size_t c : r->root().children) {
    const ResultNode& n = r->nodes[c];
    REQUIRE(n.kernel != nullptr);
    rows[n.name] = {n.kernel->launches, n.kernel->total_ns};
  }
  return rows;
}

// A JSON file (gzipped or not) parsed by the tests' own parser.
inline JsonValue ReadJsonGz(const std::string& path) {
  JsonValue v;
  std::string error;
  REQUIRE(testing::ParseJsonFile(path, &v, &error));
  return v;
}

// A JSON number or a number written as a string.
inline int64_t JsonInt(const JsonValue& v) {
  return v.kind == JsonValue::kString ? std::stoll(v.string)
                                      : static_cast<int64_t>(v.number);
}

}  // namespace testing
}  // namespace tfprof

#endif  // TFPROF_TESTS_TRACE_FACTS_UTIL_H_
