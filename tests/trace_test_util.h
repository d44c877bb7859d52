// What the trace importers' tests share: readers of the raw traces that
// are independent of the importers (gzip, simdjson DOM accessors), and the
// model side (a trace's model, its op view per step, per-device sums) to
// compare them with. Test code only.
#ifndef TFPROF_TESTS_TRACE_TEST_UTIL_H_
#define TFPROF_TESTS_TRACE_TEST_UTIL_H_

#include <simdjson.h>
#include <zlib.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cctype>
#include <cmath>
#include <cstring>
#include <map>
#include <set>
#include <string>

#include "profiler/importers/trace_import.h"
#include "profiler/model/model.h"
#include "profiler/views/views.h"
#include "re2/re2.h"
#include "tests/test_util.h"

namespace tfprof {
namespace trace_test {

inline constexpr char kCpu[] = "/job:localhost/replica:0/task:0/device:cpu:0";
inline constexpr char kGpuPrefix[] =
    "/job:localhost/replica:0/task:0/device:gpu:";

inline std::string Corpus(const std::string& rel) {
  return testing::CorpusFile(rel);
}

// A node's name as the TF1 export (ImportTrace) writes it: a RunMetadata
// cuts node names at their first ':', so each ':' is a '.' there (the
// model's node "ProfilerStep/aten::mm" is "ProfilerStep/aten..mm").
inline std::string Tf1(std::string name) {
  std::replace(name.begin(), name.end(), ':', '.');
  return name;
}

// --- Independent readers ------------------------------------------------

inline std::string Inflate(const std::string& gz) {
  z_stream zs;
  std::memset(&zs, 0, sizeof(zs));
  REQUIRE(inflateInit2(&zs, 16 + MAX_WBITS) == Z_OK);
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(gz.data()));
  zs.avail_in = static_cast<uInt>(gz.size());
  std::string out;
  int rc = Z_OK;
  while (rc == Z_OK) {
    char buf[1 << 15];
    zs.next_out = reinterpret_cast<Bytef*>(buf);
    zs.avail_out = sizeof(buf);
    rc = inflate(&zs, Z_NO_FLUSH);
    out.append(buf, sizeof(buf) - zs.avail_out);
  }
  inflateEnd(&zs);
  REQUIRE(rc == Z_STREAM_END);
  return out;
}

inline std::string Gzip(const std::string& data) {
  z_stream zs;
  std::memset(&zs, 0, sizeof(zs));
  REQUIRE(deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS,
                       8, Z_DEFAULT_STRATEGY) == Z_OK);
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = static_cast<uInt>(data.size());
  std::string out(deflateBound(&zs, static_cast<uLong>(data.size())), '\0');
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  REQUIRE(deflate(&zs, Z_FINISH) == Z_STREAM_END);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

inline std::string ReadTrace(const std::string& path) {
  std::string data = testing::ReadFile(path);
  if (data.size() > 2 && static_cast<unsigned char>(data[0]) == 0x1f &&
      static_cast<unsigned char>(data[1]) == 0x8b) {
    return Inflate(data);
  }
  return data;
}

// Rounds like the importer documents: to the nearest microsecond, halves
// away from zero.
inline int64_t RoundUs(double x) {
  return static_cast<int64_t>(std::llround(x));
}

inline std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(c));
  return s;
}

inline bool Canonical(const std::string& device) {
  static const RE2 re(R"(.*/(device:)?(cpu|gpu):\d+)");
  return RE2::FullMatch(Lower(device), re);
}

// Small typed accessors on simdjson DOM values.
using Element = simdjson::dom::element;

inline bool Has(const Element& e, const char* key) {
  return e[key].error() == simdjson::SUCCESS;
}

inline std::string Str(const Element& e, const char* key) {
  std::string_view s;
  if (e[key].get_string().get(s) != simdjson::SUCCESS) return "";
  return std::string(s);
}

inline double Num(const Element& e, const char* key) {
  auto v = e[key];
  double d;
  int64_t i;
  uint64_t u;
  if (v.get_int64().get(i) == simdjson::SUCCESS) return static_cast<double>(i);
  if (v.get_uint64().get(u) == simdjson::SUCCESS) return static_cast<double>(u);
  if (v.get_double().get(d) == simdjson::SUCCESS) return d;
  return NAN;
}

// pid / tid / correlation ids are numbers or strings.
inline std::string IdText(const Element& e, const char* key) {
  auto v = e[key];
  std::string_view s;
  int64_t i;
  uint64_t u;
  if (v.get_string().get(s) == simdjson::SUCCESS) return std::string(s);
  if (v.get_int64().get(i) == simdjson::SUCCESS) return std::to_string(i);
  if (v.get_uint64().get(u) == simdjson::SUCCESS) return std::to_string(u);
  return "";
}

// --- The model side -------------------------------------------------------

struct Sums {
  int64_t cpu = 0;
  int64_t acc = 0;
  int64_t runs = 0;
  int64_t requested = 0;
  bool Empty() const {
    return cpu == 0 && acc == 0 && runs == 0 && requested == 0;
  }
};
using OpTable = std::map<std::string, Sums>;

inline void DropEmpty(OpTable* t) {
  for (auto it = t->begin(); it != t->end();) {
    it = it->second.Empty() ? t->erase(it) : std::next(it);
  }
}

inline void Compare(const OpTable& want_in, const OpTable& got_in) {
  OpTable want = want_in, got = got_in;
  DropEmpty(&want);
  DropEmpty(&got);
  std::set<std::string> keys;
  for (const auto& [k, v] : want) keys.insert(k);
  for (const auto& [k, v] : got) keys.insert(k);
  for (const std::string& k : keys) {
    INFO("op type " << k);
    const Sums w = want.count(k) ? want.at(k) : Sums();
    const Sums g = got.count(k) ? got.at(k) : Sums();
    CHECK(g.cpu == w.cpu);
    CHECK(g.acc == w.acc);
    CHECK(g.runs == w.runs);
    CHECK(g.requested == w.requested);
  }
}

inline Model ToModel(const ImportedTrace& t) {
  Model m;
  // As the loader does: tfprof's 1us minimum is for TensorFlow inputs.
  m.set_source(t.format == TraceFormat::kKineto   ? ProfileSource::kPyTorch
               : t.format == TraceFormat::kXSpace ? ProfileSource::kXSpace
                                                  : ProfileSource::kTensorFlow);
  m.AddGraph(t.graph);
  for (const auto& [step, rm] : t.steps) REQUIRE(m.AddRunMeta(step, rm).ok());
  m.AddOpLog(t.op_log);
  return m;
}

inline Options AllRows(int64_t step) {
  Options o;
  o.max_depth = 1 << 30;
  o.step = step;
  return o;
}

// The op view of one step: op type -> its row's own numbers.
inline OpTable OpView(const Model& m, int64_t step) {
  Views views(&m, nullptr);
  absl::StatusOr<ResultTree> r = views.Query(ViewKind::kOp, AllRows(step));
  REQUIRE(r.ok());
  OpTable t;
  for (size_t c : r->root().children) {
    const ResultNode& n = r->nodes[c];
    Sums& s = t[n.name];
    s.cpu += n.self.cpu_exec_micros;
    s.acc += n.self.accelerator_exec_micros;
    s.runs += n.self.run_count;
    s.requested += n.self.requested_bytes;
  }
  return t;
}

// The op view summed over every step.
inline OpTable OpViewAllSteps(const Model& m) {
  OpTable total;
  for (int64_t step : m.steps()) {
    for (const auto& [k, s] : OpView(m, step)) {
      Sums& t = total[k];
      t.cpu += s.cpu;
      t.acc += s.acc;
      t.runs += s.runs;
      t.requested += s.requested;
    }
  }
  return total;
}

// Microseconds per device in the imported RunMetadata.
inline std::map<std::string, int64_t> DeviceMicros(const ImportedTrace& t) {
  std::map<std::string, int64_t> out;
  for (const auto& [step, rm] : t.steps) {
    for (const auto& dev : rm.step_stats().dev_stats()) {
      for (const auto& ns : dev.node_stats()) {
        out[dev.device()] += ns.op_end_rel_micros();
      }
    }
  }
  return out;
}

inline void CompareDevices(const std::map<std::string, int64_t>& want,
                           const std::map<std::string, int64_t>& got) {
  std::set<std::string> keys;
  for (const auto& [k, v] : want) keys.insert(k);
  for (const auto& [k, v] : got) keys.insert(k);
  for (const std::string& k : keys) {
    INFO("device " << k);
    CHECK((want.count(k) ? want.at(k) : -1) == (got.count(k) ? got.at(k) : -1));
  }
}

// Every view answers on an imported trace; the code view when it has stacks.
inline void AllViewsWork(const Model& m, const ImportedTrace& t) {
  Views views(&m, nullptr);
  for (ViewKind v : {ViewKind::kScope, ViewKind::kGraph, ViewKind::kOp}) {
    INFO(ViewName(v));
    absl::StatusOr<ResultTree> r = views.Query(v, AllRows(-1));
    REQUIRE(r.ok());
    CHECK(r->nodes.size() > 1);
  }
  bool has_code = false;
  for (const auto& e : t.op_log.log_entries()) has_code |= e.has_code_def();
  CHECK(views.Query(ViewKind::kCode, AllRows(-1)).ok() == has_code);
}

// Raw sums of a trace's events, by step and op type, and per device.
struct Raw {
  std::map<int64_t, OpTable> steps;  // step -> op type -> sums
  std::map<std::string, int64_t> devices;
  OpTable Total() const {
    OpTable t;
    for (const auto& [step, ops] : steps) {
      for (const auto& [k, s] : ops) {
        t[k].cpu += s.cpu;
        t[k].acc += s.acc;
        t[k].runs += s.runs;
        t[k].requested += s.requested;
      }
    }
    return t;
  }
};

// The corpus traces of each format.
inline const char* const kTfTimelines[] = {
    "tf1-timelines/ANNA_timeline_01.json",
    "tf1-timelines/conv_relation_timeline.ctf.json",
    "tf1-timelines/dlprof_mnist_xla_timeline_xla.ctf.json",
    "tf1-timelines/dlprof_timeline.ctf.json",
    "tf1-timelines/mnist-xla_timeline.ctf.json",
    "shiyudian-resnet-tf-dist/timeline-1300001.json",
    "yaroslavvb-stuff/dynamic_stitch_gpu_profile.json",
    "yaroslavvb-stuff/timeline.feed.json",
};
inline const char* const kKinetoTraces[] = {
    "pytorch-kineto/worker0.1623143089861.pt.trace.json.gz",
    "hta/alexnet_benchmark_result_2869224_1695835535_trace.json.gz",
    "hta/cpu_only_rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz",
};
inline const char* const kXSpaces[] = {
    "aoberai-chess-engine/train/plugins/profile/2021_06_16_00_30_02/"
    "aoberai.xplane.pb",
    "tensorflow-profiler-demo/GPU-multi-worker/34.83.195.179_6003.xplane.pb",
};

}  // namespace trace_test
}  // namespace tfprof

#endif  // TFPROF_TESTS_TRACE_TEST_UTIL_H_
