// Many ranks as one job: generated rank sets with known clock offsets and an
// injected straggler (gloo host ranges matched by order, NCCL kernels by
// sequence number), the ranks report's contract, and the real captures:
// ddp-gloo-2026 (recomputed from the raw events and ddp2_ref.json), HTA's
// NCCL ranks and the 8-GPU XSpace.
#include <sys/stat.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "profiler/advise/gates.h"
#include "profiler/advise/gates_report.h"
#include "profiler/base/gzip.h"
#include "profiler/base/units.h"
#include "profiler/load/loader.h"
#include "profiler/load/trace_files.h"
#include "profiler/render/render_ranks.h"
#include "profiler/render/summary.h"
#include "profiler/session/rank_loader.h"
#include "profiler/session/session.h"
#include "profiler/views/communication.h"
#include "profiler/views/rank_codec.h"
#include "tests/corpus_util.h"
#include "tests/json_parse.h"
#include "tests/test_util.h"

namespace tfprof {
namespace {

using testing::JsonValue;

// A generated job: every rank computes (aten::mm) and meets the others at
// one collective per step, which ends for all ranks together (true time);
// each rank's clock is off by its offset.
struct JobSpec {
  int ranks = 3;
  int steps = 5;
  std::vector<int64_t> offset_us = {0, 2500, -1700};
  int straggler = 2, straggler_step = 3;
  int64_t delay_us = 8000;
  bool nccl = false;  // NCCL kernels with Seq tags, else gloo host ranges
  // NCCL: the Seq and group on the record_param_comms range that launches
  // the kernel (as PyTorch writes them), not on the kernel.
  bool seq_on_enqueue = false;
  // A rank whose trace lost one collective (a full trace buffer).
  int lossy_rank = -1;
};

std::string Ev(const std::string& cat, const std::string& name, int tid,
               int64_t ts, int64_t dur, const std::string& args = "",
               int pid = 1) {
  return absl::StrFormat(
      R"({"ph": "X", "cat": "%s", "name": "%s", "pid": %d, "tid": %d, )"
      R"("ts": %d, "dur": %d%s})",
      cat, name, pid, tid, ts, dur,
      args.empty() ? "" : absl::StrCat(", \"args\": {", args, "}"));
}

// True times (us) of rank r's arrival at step s's collective.
int64_t Compute(int r, int s) { return 5000 + (r * 37 + s * 11) % 90; }

std::string RankTrace(const JobSpec& j, int r) {
  std::vector<std::string> ev;
  const int64_t off = j.offset_us[r];
  int64_t corr = 100;
  for (int s = 0; s < j.steps; ++s) {
    const int64_t t0 = 1000 + s * 40000;
    int64_t end = 0;  // true end of the collective: the last arrival + 2ms
    for (int q = 0; q < j.ranks; ++q) {
      const int64_t d =
          q == j.straggler && s == j.straggler_step ? j.delay_us : 0;
      end = std::max(end, t0 + 100 + d + Compute(q, s) + 2000);
    }
    const int64_t delay =
        r == j.straggler && s == j.straggler_step ? j.delay_us : 0;
    const int64_t arrive = t0 + 100 + delay + Compute(r, s);
    ev.push_back(Ev("user_annotation", absl::StrCat("ProfilerStep#", s), 1,
                    t0 + off, end + 500 - t0));
    if (delay > 0) {
      ev.push_back(
          Ev("user_annotation", "injected_delay", 1, t0 + 100 + off, delay));
    }
    ev.push_back(
        Ev("cpu_op", "aten::mm", 1, t0 + 100 + delay + off, Compute(r, s)));
    if (r == j.lossy_rank && s == 1) continue;
    const int64_t jitter = (r * 3 + s) % 4;  // ends agree within 3us
    if (!j.nccl) {
      ev.push_back(Ev("cpu_op", "gloo:all_reduce", 1, arrive + off,
                      end + jitter - arrive));
      continue;
    }
    ++corr;
    const std::string tag =
        absl::StrCat(", \"Seq\": ", s, ", \"Process Group Name\": \"0\"");
    if (j.seq_on_enqueue) {
      ev.push_back(Ev("cpu_op", "record_param_comms", 1, arrive + off - 2, 9,
                      absl::StrCat("\"External id\": ", corr, tag)));
    }
    ev.push_back(Ev("cuda_runtime", "cudaLaunchKernel", 1, arrive + off, 5,
                    absl::StrCat("\"correlation\": ", corr)));
    ev.push_back(Ev("kernel", "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 7,
                    arrive + 10 + off, end + jitter - arrive - 10,
                    absl::StrCat("\"device\": 0, \"stream\": 7, "
                                 "\"correlation\": ",
                                 corr, j.seq_on_enqueue ? "" : tag),
                    0));
  }
  return absl::StrCat(
      "{\"schemaVersion\": 1, \"distributedInfo\": {\"backend\": \"",
      j.nccl ? "nccl" : "gloo", "\", \"rank\": ", r,
      ", \"world_size\": ", j.ranks,
      "}, \"baseTimeNanoseconds\": 1700000000000000000, \"traceEvents\": [",
      absl::StrJoin(ev, ",\n"), "]}");
}

// The job's traces in a fresh directory (and a file that is not a trace).
std::string WriteJob(const JobSpec& j) {
  const std::string dir = testing::TempDir();
  for (int r = 0; r < j.ranks; ++r) {
    testing::WriteFile(absl::StrCat(dir, "/rank", r, ".pt.trace.json"),
                       RankTrace(j, r));
  }
  testing::WriteFile(dir + "/notes.json", "{\"not\": \"a trace\"}");
  return dir;
}

RanksReport Analyze(const std::string& trace_path) {
  InputPaths in;
  in.trace_path = trace_path;
  auto session = Session::Load(in);
  REQUIRE(session.ok());
  auto report = (*session)->Ranks();
  REQUIRE(report.ok());
  return *report;
}

void CheckRecovered(const JobSpec& j, const RanksReport& rep) {
  REQUIRE(rep.ranks.size() == static_cast<size_t>(j.ranks));
  for (int r = 0; r < j.ranks; ++r) {
    const RankReport& rr = rep.ranks[r];
    CHECK(rr.rank == r);
    const int64_t truth_ns = (j.offset_us[r] - j.offset_us[0]) * 1000;
    INFO("rank " << r << " offset " << rr.offset_ns << " +- "
                 << rr.offset_uncertainty_ns << ", truth " << truth_ns);
    CHECK(std::llabs(rr.offset_ns - truth_ns) <=
          std::max<int64_t>(rr.offset_uncertainty_ns, 3000));
    CHECK(rr.offset_uncertainty_ns <= 5000);
  }
  REQUIRE(rep.stragglers.size() == 1);
  const Straggler& st = rep.stragglers[0];
  CHECK(st.rank == j.straggler);
  CHECK(st.step == j.straggler_step);
  CHECK(std::llabs(st.delay_ns - j.delay_us * 1000) < 200000);
  CHECK(st.cause == "injected_delay");
  CHECK(std::llabs(st.cause_ns - j.delay_us * 1000) < 1000);
  // Everyone else waited for it in that step: about the delay.
  for (const RankReport& rr : rep.ranks) {
    if (rr.rank == j.straggler) continue;
    for (const RankStepReport& s : rr.steps) {
      if (s.step != j.straggler_step) continue;
      CHECK(s.wait_ns > (j.delay_us - 300) * 1000);
    }
  }
}

TEST_CASE("generated gloo ranks: offsets by order, straggler and cause",
          "[ranks]") {
  JobSpec j;
  const std::string dir = WriteJob(j);
  const RanksReport rep = Analyze(dir);
  CHECK(rep.backend == "gloo");
  CHECK(rep.collectives_matched == j.steps);
  CheckRecovered(j, rep);
  // A glob and a comma list name the same ranks.
  CHECK(Analyze(dir + "/rank*.pt.trace.json").ranks.size() == 3);
  CHECK(Analyze(absl::StrCat(dir, "/rank1.pt.trace.json,", dir,
                             "/rank0.pt.trace.json"))
            .ranks.size() == 2);
}

TEST_CASE("generated NCCL ranks: sequence numbers survive a lost event",
          "[ranks]") {
  JobSpec j;
  j.nccl = true;
  j.lossy_rank = 1;  // rank 1 lost step 1's collective
  const RanksReport rep = Analyze(WriteJob(j));
  CHECK(rep.backend == "nccl");
  CheckRecovered(j, rep);
  // Matched by (group, seq): rank 1's later collectives still pair up.
  CHECK(rep.ranks[1].matched == j.steps - 1);
}

TEST_CASE("generated NCCL ranks: the enqueue range's Seq tags its kernel",
          "[ranks]") {
  JobSpec j;
  j.nccl = true;
  j.seq_on_enqueue = true;
  j.lossy_rank = 1;
  const std::string dir = WriteJob(j);
  const RanksReport rep = Analyze(dir);
  CheckRecovered(j, rep);
  CHECK(rep.ranks[1].matched == j.steps - 1);
  // Each kernel carries its enqueue's Seq (the step number here) and group.
  InputPaths in;
  in.trace_path = dir + "/rank0.pt.trace.json";
  auto session = Session::Load(in);
  REQUIRE(session.ok());
  const Activity& a = (*session)->model().activity();
  int64_t kernels = 0;
  for (const CollectiveEvent& e : FindCollectives(a)) {
    if (e.kind != CollectiveKind::kDeviceKernel) continue;
    ++kernels;
    CHECK(e.seq == e.step);
    CHECK(a.String(e.group) == "0");
  }
  CHECK(kernels == j.steps);
}

TEST_CASE("ranks report contract: json and csv", "[ranks]") {
  JobSpec j;
  const RanksReport rep = Analyze(WriteJob(j));
  JsonValue v;
  std::string err;
  REQUIRE(testing::ParseJson(RenderRanksJson(rep), &v, &err));
  REQUIRE(v.at("ranks").array.size() == 3);
  for (const char* k : {"stragglers", "collectives_matched", "notes"}) {
    CHECK(v.Has(k));
  }
  const JsonValue& r1 = v.at("ranks").array[1];
  for (const char* k : {"rank", "file", "offset_micros",
                        "offset_uncertainty_micros", "steps"}) {
    CHECK(r1.Has(k));
  }
  const JsonValue& s0 = r1.at("steps").array.at(0);
  for (const char* k :
       {"step", "wall_micros", "compute_micros", "communication_micros",
        "exposed_communication_micros", "wait_micros", "idle_micros"}) {
    CHECK(s0.Has(k));
  }
  const JsonValue& st = v.at("stragglers").array.at(0);
  CHECK(st.at("rank").number == j.straggler);
  CHECK(st.at("cause").string == "injected_delay");
  const std::string csv = RenderRanksCsv(rep);
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 1 + 3 * j.steps);
  CHECK(csv.rfind("rank,file,offset_micros,offset_uncertainty_micros,step,"
                  "wall_micros",
                  0) == 0);
}

TEST_CASE("trace files: directories, globs, rank peeking", "[ranks]") {
  JobSpec j;
  const std::string dir = WriteJob(j);
  auto files = ExpandTracePath(dir);
  REQUIRE(files.ok());
  CHECK(files->size() == 3);  // notes.json is no trace
  const std::vector<RankFiles> groups = GroupByRank(*files);
  REQUIRE(groups.size() == 3);
  CHECK(groups[2].rank == 2);
  CHECK(PeekTraceRank(groups[1].files[0]).world_size == 3);
  {  // A UTF-8 byte order mark before the JSON hides nothing.
    const std::string bom = testing::TempDir() + "/bom_rank.json";
    testing::WriteFile(bom,
                       "\xEF\xBB\xBF" + testing::ReadFile(groups[1].files[0]));
    CHECK(PeekTraceRank(bom).rank == PeekTraceRank(groups[1].files[0]).rank);
    CHECK(PeekTraceRank(bom).world_size == 3);
  }
  // One rank's two files stay one run.
  CHECK(GroupByRank({groups[0].files[0], groups[0].files[0]}).size() == 1);
  CHECK(!ExpandTracePath(dir + "/nothing*.json").ok());
  CHECK(!ExpandTracePath(testing::TempDir()).ok());  // an empty directory
  // A pprof profile (gzipped, as pprof writes it) is no trace either: its
  // first message is sample types of two varints, not an XPlane.
  std::string pprof;
  pprof += '\x0a';  // Profile.sample_type
  pprof += '\x04';
  pprof += std::string("\x08\x01\x10\x02", 4);
  pprof += std::string("\x32\x02", 2) + "ab";  // string_table
  absl::StatusOr<std::string> gz = Gzip(pprof);
  REQUIRE(gz.ok());
  testing::WriteFile(dir + "/prof.pb.gz", *gz);
  files = ExpandTracePath(dir);
  REQUIRE(files.ok());
  CHECK(files->size() == 3);
}

// A TensorBoard profile directory: its XSpace is the capture; the files
// xprof derived from it (a Chrome trace, protos of its analyses) are left
// out.
TEST_CASE("trace files: a TensorBoard profile directory reads its XSpace",
          "[ranks]") {
  const std::string rel =
      "aoberai-chess-engine/train/plugins/profile/2021_06_16_00_30_02";
  if (!testing::HaveCorpusFile(rel + "/aoberai.xplane.pb")) return;
  auto files = ExpandTracePath(testing::CorpusFile(rel));
  REQUIRE(files.ok());
  REQUIRE(files->size() == 1);
  CHECK(absl::EndsWith(files->front(), "/aoberai.xplane.pb"));
  // Only the host's own derived files: another trace beside them stays.
  const std::string dir = testing::TempDir() + "/tensorboard";
  ::mkdir(dir.c_str(), 0755);
  for (const char* f : {"aoberai.xplane.pb", "aoberai.trace.json.gz"}) {
    testing::WriteFile(dir + "/" + f,
                       testing::ReadFile(testing::CorpusFile(rel + "/" + f)));
  }
  testing::WriteFile(
      dir + "/other.pt.trace.json.gz",
      testing::ReadFile(
          testing::SourceDir() +
          "/testdata/ranks/ddp-gloo/ddp2_rank0.pt.trace.json.gz"));
  files = ExpandTracePath(dir);
  REQUIRE(files.ok());
  CHECK(*files == std::vector<std::string>{dir + "/aoberai.xplane.pb",
                                           dir + "/other.pt.trace.json.gz"});
}

TEST_CASE("a multi-rank session: -rank and combined steps", "[ranks]") {
  JobSpec j;
  InputPaths in;
  in.trace_path = WriteJob(j);
  auto session = Session::Load(in);
  REQUIRE(session.ok());
  Session& s = **session;
  CHECK(s.multi_rank());
  // The session takes the loader's groups (the files are peeked once).
  const std::vector<RankFiles>& loaded = s.profile().rank_groups;
  REQUIRE(loaded.size() == static_cast<size_t>(j.ranks));
  REQUIRE(s.RankGroups().size() == loaded.size());
  for (size_t i = 0; i < loaded.size(); ++i) {
    CHECK(s.RankGroups()[i].rank == static_cast<int64_t>(i));
    CHECK(s.RankGroups()[i].files == loaded[i].files);
  }
  auto r2 = s.ForRank(2);
  REQUIRE(r2.ok());
  CHECK((*r2)->model().steps().size() == static_cast<size_t>(j.steps));
  CHECK(!s.ForRank(7).ok());
  // The job's step is as long as its slowest rank's.
  const StepTable job = s.Steps();
  const StepTable one = (*r2)->Steps();
  REQUIRE(job.rows.size() == one.rows.size());
  for (size_t i = 0; i < job.rows.size(); ++i) {
    CHECK(job.rows[i].wall_ns >= one.rows[i].wall_ns);
  }
}

TEST_CASE("a multi-rank session's groups come from its load", "[ranks]") {
  JobSpec j;
  InputPaths in;
  in.trace_path = WriteJob(j);
  auto session = Session::Load(in);
  REQUIRE(session.ok());
  // With the files gone, only the load's own grouping can answer.
  for (const RankFiles& g : (*session)->profile().rank_groups) {
    for (const std::string& f : g.files) REQUIRE(std::remove(f.c_str()) == 0);
  }
  CHECK((*session)->RankGroups().size() == static_cast<size_t>(j.ranks));
  CHECK((*session)->multi_rank());
}

TEST_CASE("aligned timeline: a process per rank, collectives end together",
          "[ranks]") {
  JobSpec j;
  InputPaths in;
  in.trace_path = WriteJob(j);
  auto session = Session::Load(in);
  REQUIRE(session.ok());
  auto json = (*session)->RanksTimeline(3);
  REQUIRE(json.ok());
  JsonValue v;
  std::string err;
  REQUIRE(testing::ParseJson(*json, &v, &err));
  std::map<int, std::string> process;
  std::map<int, double> end_us;  // pid -> the all_reduce's end
  for (const JsonValue& e : v.at("traceEvents").array) {
    const int pid = static_cast<int>(e.at("pid").number);
    if (e.at("name").string == "process_name") {
      process[pid] = e.at("args").at("name").string;
    } else if (e.at("name").string == "gloo:all_reduce") {
      end_us[pid] = e.at("ts").number + e.at("dur").number;
    }
  }
  std::set<std::string> names;
  for (const auto& [pid, name] : process) names.insert(name);
  CHECK(names ==
        std::set<std::string>{"rank 0: Host", "rank 1: Host", "rank 2: Host"});
  REQUIRE(end_us.size() == 3);
  // The clocks were off by milliseconds; aligned, the ends agree (the
  // generator's jitter is under 4us).
  for (const auto& [pid, end] : end_us) {
    CHECK(std::fabs(end - end_us.begin()->second) < 5);
  }
  CHECK(!(*session)->RanksTimeline(99).ok());
}

TEST_CASE("rank summaries as bytes: the analysis is the same", "[ranks]") {
  JobSpec j;
  auto files = ExpandTracePath(WriteJob(j));
  REQUIRE(files.ok());
  auto profiles = ProfileRankFiles(GroupByRank(*files), 2);
  REQUIRE(profiles.ok());
  std::vector<RankProfile> decoded;
  for (const RankProfile& p : *profiles) {
    const std::string bytes = EncodeRankProfile(p);
    auto back = DecodeRankProfile(bytes, "rank summary");
    REQUIRE(back.ok());
    CHECK(EncodeRankProfile(*back) == bytes);
    CHECK(!back->devices.empty());
    decoded.push_back(std::move(*back));
    // Damaged bytes are an error naming what they were.
    auto cut = DecodeRankProfile(bytes.substr(0, bytes.size() / 2), "r7");
    REQUIRE(!cut.ok());
    CHECK(cut.status().message().rfind("r7: not a tfprof rank summary", 0) ==
          0);
  }
  CHECK(RenderRanksJson(AnalyzeRanks(decoded)) ==
        RenderRanksJson(AnalyzeRanks(*profiles)));
  CHECK(!DecodeRankProfile("{\"format\": \"x\"}", "f").ok());
  // Missing or mistyped fields are errors, not crashes.
  CHECK(!DecodeRankProfile("{}", "f").ok());
  CHECK(!DecodeRankProfile(
             "{\"format\": \"tfprof.rank_profile\", \"version\": 2}", "f")
             .ok());
  CHECK(!DecodeRankProfile("{\"format\": \"tfprof.rank_profile\", "
                           "\"version\": 2, \"rank\": 0, \"files\": 3, "
                           "\"steps\": [[1, \"x\"]], \"windows\": [[1]]}",
                           "f")
             .ok());
}

TEST_CASE("check on several ranks: step_micros is the slowest rank's",
          "[ranks]") {
  InputPaths in;
  in.trace_path = testing::SourceDir() + "/testdata/ranks/ddp-gloo";
  auto session = Session::Load(in);
  REQUIRE(session.ok());
  auto report = (*session)->Ranks();
  REQUIRE(report.ok());
  for (int64_t step : {2, 3}) {
    int64_t slowest = 0;
    for (const RankReport& r : report->ranks) {
      for (const RankStepReport& s : r.steps) {
        if (s.step == step) slowest = std::max(slowest, s.wall_ns);
      }
    }
    auto c = ParseCondition("step_micros<=45ms");
    REQUIRE(c.ok());
    auto results = (*session)->Check({*c}, step, GateBase());
    REQUIRE(results.ok());
    REQUIRE(results->size() == 1);
    CHECK(std::fabs((*results)[0].value - slowest / 1e3) < 1e-6);
    CHECK((*results)[0].passed == (step == 2));  // step 3 waited 30ms
    // The line and the Markdown table name the step the figure is of.
    const std::string& line = (*results)[0].message;
    CHECK(line.find(absl::StrCat("(limit <= 45.00ms, step ", step, ")")) !=
          std::string::npos);
    CHECK(RenderGatesMarkdown(*results).find(
              absl::StrCat("| step ", step, " |")) != std::string::npos);
  }
  // Without -step the figure is the run's (the mean over the steps).
  auto c = ParseCondition("step_micros<=45ms");
  auto results = (*session)->Check({*c}, -1, GateBase());
  REQUIRE(results.ok());
  const std::string& line = (*results)[0].message;
  CHECK(line.find("(limit <= 45.00ms, run)") != std::string::npos);
}

// --- Real captures.

struct RawRank {
  int64_t base_ns = 0;
  std::map<int64_t, std::pair<double, double>> steps;  // step -> ts, dur
  std::vector<std::pair<double, double>> gloo;         // ts, dur (us)
  std::vector<std::pair<double, double>> delays;
};

RawRank ReadRaw(const std::string& path) {
  JsonValue v;
  std::string err;
  REQUIRE(testing::ParseJsonFile(path, &v, &err));
  RawRank raw;
  raw.base_ns = static_cast<int64_t>(v.at("baseTimeNanoseconds").number);
  for (const JsonValue& e : v.at("traceEvents").array) {
    if (!e.Has("name") || !e.Has("dur")) continue;
    const std::string& n = e.at("name").string;
    const std::pair<double, double> span{e.at("ts").number, e.at("dur").number};
    const bool host =
        e.Has("cat") && e.at("cat").string != "gpu_user_annotation";
    if (n.rfind("ProfilerStep#", 0) == 0 && host) {
      raw.steps[std::stoll(n.substr(13))] = span;
    } else if (n == "gloo:all_reduce") {
      raw.gloo.push_back(span);
    } else if (n == "injected_delay") {
      raw.delays.push_back(span);
    }
  }
  return raw;
}

// ddp-gloo-2026's two ranks in `dir`: checked against the raw events and
// the run's own ddp2_ref.json.
void CheckDdpGloo(const std::string& dir) {
  const RanksReport rep = Analyze(dir);
  REQUIRE(rep.ranks.size() == 2);
  // One machine's clock: the offset is 0 within its uncertainty.
  CHECK(std::llabs(rep.ranks[1].offset_ns) <=
        rep.ranks[1].offset_uncertainty_ns);
  std::set<int64_t> straggled;
  const RawRank raw1 = ReadRaw(dir + "/ddp2_rank1.pt.trace.json.gz");
  for (const Straggler& s : rep.stragglers) {
    CHECK(s.rank == 1);
    CHECK(s.cause == "injected_delay");
    straggled.insert(s.step);
    // The cause's time is the raw range's.
    const auto& [ts, dur] = raw1.steps.at(s.step);
    double delay_us = 0;
    for (const auto& [dts, ddur] : raw1.delays) {
      if (dts >= ts && dts < ts + dur) delay_us += ddur;
    }
    CHECK(std::fabs(s.cause_ns / 1e3 - delay_us) < 1);
    CHECK(s.delay_ns > 25e6);
    CHECK(s.delay_ns < 35e6);
  }
  CHECK(straggled == std::set<int64_t>{3, 5});
  // Rank 0's extra time in those steps is waiting in gloo:all_reduce: the
  // wait is most of the gap between its first all_reduce's start on each
  // rank (raw, on the shared wall clock).
  const RawRank raw0 = ReadRaw(dir + "/ddp2_rank0.pt.trace.json.gz");
  for (int64_t step : {3, 5}) {
    auto first_in = [step](const RawRank& r) {
      const auto& [ts, dur] = r.steps.at(step);
      for (const auto& [g, gd] : r.gloo) {
        if (g >= ts && g < ts + dur) return r.base_ns / 1e3 + g;
      }
      return 0.0;
    };
    const double gap_us = first_in(raw1) - first_in(raw0);
    for (const RankStepReport& s : rep.ranks[0].steps) {
      if (s.step != step) continue;
      CHECK(s.wait_ns / 1e3 > 0.9 * gap_us);
      CHECK(s.wait_ns / 1e3 < gap_us + 2000);
    }
  }
  // Step walls as the run measured them (ddp2_ref.json), within 0.1 ms.
  JsonValue ref;
  std::string err;
  REQUIRE(testing::ParseJsonFile(dir + "/ddp2_ref.json", &ref, &err));
  for (const JsonValue& rk : ref.at("ranks").array) {
    const RankReport& rr =
        rep.ranks.at(static_cast<size_t>(rk.at("rank").number));
    int64_t compared = 0;
    for (const JsonValue& w : rk.at("walls").array) {
      for (const RankStepReport& s : rr.steps) {
        if (s.step != static_cast<int64_t>(w.at("step").number)) continue;
        CHECK(std::fabs(s.wall_ns / 1e9 - w.at("wall_s").number) < 1e-4);
        ++compared;
      }
    }
    CHECK(compared == 5);
  }
}

// The views over two ranks show the mean per rank: checked against the raw
// events of both rank files (injected_delay is a leaf range on rank 1 only;
// ProfilerStep's total is its span, see torch_structure_test), and the
// check's node terms read the same figure.
TEST_CASE("views on several ranks: the mean per rank", "[ranks]") {
  const std::string dir = testing::SourceDir() + "/testdata/ranks/ddp-gloo";
  InputPaths in;
  in.trace_path = dir;
  auto session = Session::Load(in);
  REQUIRE(session.ok());
  Session& s = **session;
  CHECK(s.model().ranks() == 2);
  const RawRank raw[] = {ReadRaw(dir + "/ddp2_rank0.pt.trace.json.gz"),
                         ReadRaw(dir + "/ddp2_rank1.pt.trace.json.gz")};
  for (int64_t step : {3, 4, 5}) {
    INFO("step " << step);
    double delay_us = 0, span_us = 0;
    for (const RawRank& r : raw) {
      const auto& [ts, dur] = r.steps.at(step);
      span_us += dur;
      for (const auto& [dts, ddur] : r.delays) {
        if (dts >= ts && dts < ts + dur) delay_us += ddur;
      }
    }
    Options o;
    o.max_depth = 1000;
    o.step = step;
    auto op = s.Query(ViewKind::kOp, o);
    REQUIRE(op.ok());
    double delay = 0;
    for (const ResultNode& n : op->nodes) {
      if (n.name != "injected_delay") continue;
      delay = n.self.cpu_exec_micros;
      // One run on rank 1, none on rank 0: 0.5 a rank, to the nearest.
      CHECK(n.self.run_count == (step == 4 ? 0 : 1));
    }
    CHECK(std::fabs(delay - delay_us / 2) <= 1);
    auto scope = s.Query(ViewKind::kScope, o);
    REQUIRE(scope.ok());
    for (const ResultNode& n : scope->nodes) {
      if (n.name != "ProfilerStep") continue;
      CHECK(static_cast<double>(n.total.cpu_exec_micros) ==
            Approx(span_us / 2).epsilon(0.005));
    }
    auto c = ParseCondition("cpu_micros[.*injected_delay]<1s");
    REQUIRE(c.ok());
    auto results = s.Check({*c}, step, GateBase());
    REQUIRE(results.ok());
    CHECK(std::fabs((*results)[0].value - delay_us / 2) <= 1);
  }
  // Rank 1 alone: its own figure, undivided.
  auto one = s.ForRank(1);
  REQUIRE(one.ok());
  CHECK((*one)->model().ranks() == 1);
}

// The summary of several ranks lists each rank's devices (the merged model
// would make each rank's gpu:0 one device): every GPU's busy time per step
// is the union of that rank's own raw GPU events over its steps.
TEST_CASE("summary on several ranks: each rank's devices", "[ranks]") {
  const std::string dir = testing::SourceDir() + "/testdata/ranks/ddp-gloo";
  InputPaths in;
  in.trace_path = dir;
  auto session = Session::Load(in);
  REQUIRE(session.ok());
  const ProfileSummary summary = (**session).Summary();
  const std::string gpu = "/job:localhost/replica:0/task:0/device:gpu:0";
  for (int rank : {0, 1}) {
    INFO("rank " << rank);
    JsonValue v;
    std::string err;
    REQUIRE(testing::ParseJsonFile(
        absl::StrCat(dir, "/ddp2_rank", rank, ".pt.trace.json.gz"), &v, &err));
    std::vector<std::pair<double, double>> spans;  // us
    int64_t steps = 0;
    for (const JsonValue& e : v.at("traceEvents").array) {
      if (!e.Has("cat") || !e.Has("dur")) continue;
      const std::string& cat = e.at("cat").string;
      if (cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset") {
        spans.emplace_back(e.at("ts").number,
                           e.at("ts").number + e.at("dur").number);
      }
      if (cat != "gpu_user_annotation" &&
          e.at("name").string.rfind("ProfilerStep#", 0) == 0) {
        ++steps;
      }
    }
    std::sort(spans.begin(), spans.end());
    double busy_us = 0, end = -1e300;
    for (const auto& [b, e] : spans) {
      if (e > std::max(b, end)) busy_us += e - std::max(b, end);
      end = std::max(end, e);
    }
    REQUIRE(steps == 5);
    const DeviceSummary* d =
        summary.FindDevice(absl::StrCat("rank ", rank, ": ", gpu));
    REQUIRE(d != nullptr);
    CHECK(std::fabs(static_cast<double>(d->busy_ns) - busy_us * 1000 / steps) <=
          1000);
  }
  // Node figures are the mean per rank, as the views show them: the scope
  // view's root (whose nodes each divide by the rank count, so up to one
  // microsecond per node apart).
  Options o;
  auto scope = (**session).Query(ViewKind::kScope, o);
  REQUIRE(scope.ok());
  CHECK(summary.ranks == 2);
  CHECK(RenderSummaryJson(summary).find("\"ranks\": 2,") != std::string::npos);
  CHECK(std::llabs(summary.cpu_micros - scope->root().total.cpu_exec_micros) <=
        summary.nodes);
  // No device of the merged model is left, and the wall time is the job's.
  CHECK(summary.FindDevice(gpu) == nullptr);
  CHECK(summary.devices.size() == 4);
  const WallStats job = StepWallStats((**session).Steps());
  CHECK(summary.wall.mean_ns == job.mean_ns);
  CHECK(summary.wall.max_ns == job.max_ns);
}

// The summary's float ops and FLOP/s on several ranks are the mean per rank
// and its MFU is the job's: all ranks' float ops against the devices they
// ran on. Two NCCL ranks made of one real trace (a V100 run, each copy
// tagged with its rank) both name gpu:0: NCCL puts no two ranks on one GPU,
// so each has its own (other nodes): the same float ops per rank, and the
// single run's MFU against two devices' peak. (Gloo ranks naming one GPU
// share it: mfu_test's DDP ranks.) Where
// the ranks ran on different GPUs (HTA's two ranks, corpus), the job's MFU
// is both ranks' float ops against both devices' peak.
// Traces that state different world sizes are not one job's ranks: the
// report warns; the same size gives no such warning.
TEST_CASE("ranks of different world sizes are warned about", "[ranks]") {
  const std::string one =
      testing::BundledCorpusDir() +
      "/pytorch-kineto/worker0.1623143089861.pt.trace.json.gz";
  absl::StatusOr<std::string> text = Gunzip(testing::ReadFile(one));
  REQUIRE(text.ok());
  const std::string schema = "\"schemaVersion\": 1,";
  const size_t at = text->find(schema);
  REQUIRE(at != std::string::npos);
  for (int world : {2, 4}) {
    const std::string dir = testing::TempDir();
    for (int rank : {0, 1}) {
      std::string copy = *text;
      copy.insert(at + schema.size(),
                  absl::StrCat(
                      " \"distributedInfo\": {\"backend\": "
                      "\"nccl\", \"rank\": ",
                      rank, ", \"world_size\": ", rank == 0 ? 2 : world, "},"));
      testing::WriteFile(absl::StrCat(dir, "/w_rank", rank, ".pt.trace.json"),
                         copy);
    }
    const RanksReport rep = Analyze(dir);
    bool warned = false;
    for (const std::string& n : rep.notes) {
      warned |= n.find(
                    "WARNING: the traces state different world sizes "
                    "(2, 4)") == 0;
    }
    CHECK(warned == (world == 4));
  }
}

// Rank r's generated trace with its ProfilerStep numbers moved by `by`.
std::string ShiftedSteps(const JobSpec& j, int r, int by) {
  std::string t = RankTrace(j, r);
  for (int s = j.steps - 1; s >= 0; --s) {
    t = absl::StrReplaceAll(t, {{absl::StrCat("ProfilerStep#", s, "\""),
                                 absl::StrCat("ProfilerStep#", s + by, "\"")}});
  }
  return t;
}

TEST_CASE("two captures of one rank with the same steps are refused",
          "[ranks]") {
  JobSpec j;
  const std::string dir = testing::TempDir();
  const std::string a = dir + "/a.pt.trace.json", b = dir + "/b.pt.trace.json";
  testing::WriteFile(a, RankTrace(j, 0));
  InputPaths in;
  in.trace_path = a + "," + b;
  // The same rank captured twice: the steps of one run cannot hold both.
  testing::WriteFile(b, RankTrace(j, 0));
  absl::StatusOr<std::unique_ptr<LoadedProfile>> twice = LoadProfile(in);
  REQUIRE(!twice.ok());
  const std::string msg(twice.status().message());
  CHECK(absl::StartsWith(msg, b + ": its step 0 is also a step of " + a));
  CHECK(msg.find('\n') == std::string::npos);
  // A file without markers is the step of its place in the list (1 here).
  testing::WriteFile(
      b, absl::StrReplaceAll(RankTrace(j, 0), {{"ProfilerStep#", "Window#"}}));
  absl::StatusOr<std::unique_ptr<LoadedProfile>> unmarked = LoadProfile(in);
  REQUIRE(!unmarked.ok());
  CHECK(absl::StartsWith(unmarked.status().message(),
                         b + ": its step 1 is also a step of " + a +
                             " (a file's steps are its own markers', else "
                             "its place in the list)"));
  // Later steps of the same rank (a second capture window) add to it.
  testing::WriteFile(b, ShiftedSteps(j, 0, 10));
  absl::StatusOr<std::unique_ptr<LoadedProfile>> later = LoadProfile(in);
  REQUIRE(later.ok());
  CHECK((*later)->model.steps().size() == 2 * static_cast<size_t>(j.steps));
  // Different ranks with the same steps are ranks, not one run.
  testing::WriteFile(b, RankTrace(j, 1));
  absl::StatusOr<std::unique_ptr<LoadedProfile>> ranks = LoadProfile(in);
  REQUIRE(ranks.ok());
  CHECK((*ranks)->rank_groups.size() == 2);
  CHECK((*ranks)->model.steps().size() == static_cast<size_t>(j.steps));
}

TEST_CASE("summary on several ranks: float ops per rank and the job's MFU",
          "[ranks]") {
  const std::string one =
      testing::BundledCorpusDir() +
      "/pytorch-kineto/worker0.1623143089861.pt.trace.json.gz";
  absl::StatusOr<std::string> text = Gunzip(testing::ReadFile(one));
  REQUIRE(text.ok());
  const std::string dir = testing::TempDir();
  const std::string schema = "\"schemaVersion\": 1,";
  const size_t at = text->find(schema);
  REQUIRE(at != std::string::npos);
  for (int rank : {0, 1}) {
    std::string copy = *text;
    copy.insert(at + schema.size(),
                absl::StrCat(" \"distributedInfo\": {\"backend\": \"nccl\", "
                             "\"rank\": ",
                             rank, ", \"world_size\": 2},"));
    testing::WriteFile(absl::StrCat(dir, "/w_rank", rank, ".pt.trace.json"),
                       copy);
  }
  PeakOverride peaks;
  peaks.flops = 1e14;
  auto summary_of = [&](const std::string& paths) {
    InputPaths in;
    in.trace_path = paths;
    auto session = Session::Load(in);
    REQUIRE(session.ok());
    return (**session).Summary(peaks);
  };
  const ProfileSummary single = summary_of(one);
  const ProfileSummary job = summary_of(dir);
  REQUIRE(job.ranks == 2);
  REQUIRE(single.flops.flops_per_step > 0);
  CHECK(job.flops.flops_per_step == single.flops.flops_per_step);
  CHECK(job.flops.peak.flops == 2e14);
  CHECK(job.flops.peak.devices == 2);
  REQUIRE(job.flops.mfu.has_value());
  REQUIRE(single.flops.mfu.has_value());
  CHECK(std::fabs(*job.flops.mfu - *single.flops.mfu) <=
        1e-6 * *single.flops.mfu);
  CHECK(RenderSummary(job, nullptr).find(", all 2 ranks' float ops\n") !=
        std::string::npos);
  CHECK(RenderSummary(job, nullptr).find("mean per rank\n") !=
        std::string::npos);
  CHECK(job.notes.empty());
  // `steps` of the job has the same float ops and MFU, with the peak given
  // (each rank's own table knows no peak for this trace's GPU).
  {
    InputPaths in;
    in.trace_path = dir;
    auto session = Session::Load(in);
    REQUIRE(session.ok());
    const StepTable t = (**session).Steps(peaks);
    REQUIRE(!t.rows.empty());
    CHECK(t.mfu_text.find("--peak_flops") != std::string::npos);
    double flops = 0, mfu = 0;
    for (const StepRow& r : t.rows) {
      flops += static_cast<double>(r.flops);
      mfu += r.mfu;
      CHECK(r.mfu > 0);
    }
    const double n = static_cast<double>(t.rows.size());
    CHECK(
        std::fabs(flops / n - static_cast<double>(job.flops.flops_per_step)) <=
        1e-6 * flops / n);
    CHECK(mfu / n == Approx(*job.flops.mfu).epsilon(0.05));
  }
  // A rank's file gone since the load: the merged model's devices, said so.
  {
    InputPaths in;
    in.trace_path = dir;
    auto session = Session::Load(in);
    REQUIRE(session.ok());
    REQUIRE(std::remove((dir + "/w_rank1.pt.trace.json").c_str()) == 0);
    const ProfileSummary merged = (**session).Summary(peaks);
    REQUIRE(merged.notes.size() == 1);
    CHECK(merged.notes[0].find("could not be profiled") != std::string::npos);
    CHECK(RenderSummary(merged, nullptr).find("\nnote: the devices") !=
          std::string::npos);
  }

  const std::string rel = "hta/sampled_rank-0.json.gz";
  if (!testing::HaveCorpusFile(rel)) return;
  const std::string hta = testing::CorpusDir() + "/hta/sampled_rank-";
  const ProfileSummary r0 = summary_of(hta + "0.json.gz");
  const ProfileSummary r1 = summary_of(hta + "1.json.gz");
  const ProfileSummary both =
      summary_of(hta + "0.json.gz," + hta + "1.json.gz");
  // Nodes whose float ops differ between runs carry their per-run average
  // in the merged model: a few FLOP apart in 843 GFLOP.
  const double mean =
      static_cast<double>(r0.flops.flops_per_step + r1.flops.flops_per_step) /
      2;
  CHECK(std::fabs(static_cast<double>(both.flops.flops_per_step) - mean) <=
        1e-6 * mean);
  CHECK(both.flops.peak.flops == 2e14);
  REQUIRE(both.flops.mfu.has_value());
  const double wall_s = static_cast<double>(both.wall.mean_ns) * 1e-9;
  const double expect =
      static_cast<double>(r0.flops.flops_per_step + r1.flops.flops_per_step) /
      (wall_s * 2e14);
  CHECK(std::fabs(*both.flops.mfu - expect) <= 1e-6 * expect);
}

// advise on several ranks reads the job's steps as `steps` has them (each
// the slowest rank's), not the merged model's spans across both ranks.
TEST_CASE("advise on several ranks: step times are the job's", "[ranks]") {
  InputPaths in;
  in.trace_path = testing::SourceDir() + "/testdata/ranks/ddp-gloo";
  auto session = Session::Load(in);
  REQUIRE(session.ok());
  const StepTable job = (**session).Steps();
  REQUIRE(job.rows.size() == 5);
  auto [fast, slow] = std::minmax_element(
      job.rows.begin(), job.rows.end(),
      [](const StepRow& a, const StepRow& b) { return a.wall_ns < b.wall_ns; });
  tfpb::AdvisorOptionsProto options;
  (*options.mutable_checkers())["StepTimeChecker"];
  auto advice = (**session).Advise(options, nullptr);
  REQUIRE(advice.ok());
  const auto& r = advice->checkers().at("StepTimeChecker");
  REQUIRE(r.reports_size() >= 1);
  CHECK_THAT(r.reports(0), Catch::Contains(absl::StrFormat(
                               "fastest %s (step %d), slowest %s (step %d)",
                               FormatTime(fast->wall_ns / 1000), fast->step,
                               FormatTime(slow->wall_ns / 1000), slow->step)));
}

// A diff's per-step figures, like its totals, are the mean per rank: the
// two-rank job against rank 0 alone, checked against both files' raw
// injected_delay ranges (rank 1 only) step by step.
TEST_CASE("diff on several ranks: per-step figures are the mean per rank",
          "[ranks]") {
  const std::string dir = testing::SourceDir() + "/testdata/ranks/ddp-gloo";
  InputPaths in, base_in;
  in.trace_path = dir;
  base_in.trace_path = dir + "/ddp2_rank0.pt.trace.json.gz";
  auto session = Session::Load(in);
  auto base = Session::Load(base_in);
  REQUIRE(session.ok());
  REQUIRE(base.ok());
  Session& s = **session;
  s.SetBase(std::move(*base));
  const RawRank raw[] = {ReadRaw(dir + "/ddp2_rank0.pt.trace.json.gz"),
                         ReadRaw(dir + "/ddp2_rank1.pt.trace.json.gz")};
  Options o;
  o.max_depth = 1000;
  o.select = {Attr::kCpuMicros};
  o.order_by = Attr::kCpuMicros;
  auto d = s.Diff(ViewKind::kOp, o, DiffOptions());
  REQUIRE(d.ok());
  const DiffNode* delay = nullptr;
  for (const DiffNode& n : d->nodes) {
    if (n.name == "injected_delay") delay = &n;
  }
  REQUIRE(delay != nullptr);
  CHECK_FALSE(delay->base.present);
  const std::vector<int64_t> steps(s.model().steps().begin(),
                                   s.model().steps().end());
  REQUIRE(delay->current.per_step.size() == steps.size());
  double sum = 0;
  int ran = 0;
  for (size_t k = 0; k < steps.size(); ++k) {
    INFO("step " << steps[k]);
    double delay_us = 0;
    for (const RawRank& r : raw) {
      const auto& [ts, dur] = r.steps.at(steps[k]);
      for (const auto& [dts, ddur] : r.delays) {
        if (dts >= ts && dts < ts + dur) delay_us += ddur;
      }
    }
    CHECK(std::fabs(delay->current.per_step[k] - delay_us / 2) <= 1);
    if (delay->current.per_step[k] > 0) {
      sum += delay->current.per_step[k];
      ++ran;
    }
  }
  // The row's total (-step -1: for a trace, the mean over all of its
  // steps, a step it did not run in counting zero) is theirs.
  REQUIRE(ran == 2);
  CHECK(std::fabs(sum / static_cast<double>(steps.size()) -
                  static_cast<double>(delay->current.total.cpu_exec_micros)) <=
        1);
  // The root's interval holds its change in the mean per rank (totals are
  // per step).
  const DiffNode& root = d->root();
  const double change =
      static_cast<double>(root.current.total.cpu_exec_micros) -
      static_cast<double>(root.base.total.cpu_exec_micros);
  CHECK(root.judgement.ci_low <= change);
  CHECK(change <= root.judgement.ci_high);
}

TEST_CASE("ddp-gloo (bundled): rank 1 straggles in steps 3 and 5", "[ranks]") {
  CheckDdpGloo(testing::SourceDir() + "/testdata/ranks/ddp-gloo");
}

TEST_CASE("ddp-gloo-2026 (corpus): rank 1 straggles in steps 3 and 5",
          "[ranks]") {
  if (!testing::HaveCorpusFile("ddp-gloo-2026/ddp2_rank0.pt.trace.json.gz")) {
    return;
  }
  CheckDdpGloo(testing::CorpusDir() + "/ddp-gloo-2026");
}

TEST_CASE("HTA NCCL ranks: kernels are communication, offsets stated",
          "[ranks]") {
  const std::string rel = "hta/sampled_rank-0.json.gz";
  if (!testing::HaveCorpusFile(rel)) return;
  const std::string dir = testing::CorpusDir() + "/hta";
  const RanksReport rep = Analyze(dir + "/sampled_rank-0.json.gz," + dir +
                                  "/sampled_rank-1.json.gz");
  REQUIRE(rep.ranks.size() == 2);
  CHECK(rep.backend == "nccl");
  CHECK(rep.world_size == 128);
  CHECK(rep.collectives_matched > 0);
  CHECK(rep.ranks[1].alignment == "collectives");
  CHECK(rep.ranks[1].offset_uncertainty_ns > 0);
  // The two ranks' SendRecv kernels are matched by the collective their
  // launching op names (all_to_all, all_gather and all_reduce all run that
  // kernel); their ends still disagree by far more than a tenth of a step,
  // which the report says.
  {
    InputPaths one;
    one.trace_path = dir + "/sampled_rank-0.json.gz";
    auto loaded = LoadProfile(one);
    REQUIRE(loaded.ok());
    std::set<std::string> ops;
    for (const CollectiveEvent& e :
         FindCollectives((*loaded)->model.activity())) {
      if (e.kind == CollectiveKind::kDeviceKernel) ops.insert(e.op);
    }
    CHECK(ops.count("all_to_all") == 1);
    CHECK(ops.count("all_reduce") == 1);
    CHECK(ops.count("send_recv") == 0);
  }
  bool warned = false;
  for (const std::string& n : rep.notes) {
    warned |= n.find("WARNING: rank 1's matched collectives end") == 0;
  }
  CHECK(warned);
  for (const RankReport& rr : rep.ranks) {
    for (const RankStepReport& s : rr.steps) {
      CHECK(s.communication_ns > 0);
      CHECK(s.exposed_communication_ns <= s.communication_ns);
    }
  }
  // One rank of a two-rank job: its NCCL kernels are communication, not
  // compute, in its steps table too.
  InputPaths in;
  in.trace_path = dir + "/nccl_data.json.gz";
  auto session = Session::Load(in);
  REQUIRE(session.ok());
  CHECK(!(*session)->multi_rank());
  const StepTable t = (*session)->Steps();
  REQUIRE(!t.rows.empty());
  for (const StepRow& r : t.rows) {
    CHECK(r.communication_ns > 0);
    CHECK(r.compute_ns + r.memcpy_ns <= r.accelerator_ns);
  }
}

TEST_CASE("the 8-GPU XSpace is one host, not eight ranks", "[ranks]") {
  const std::string rel =
      "tensorflow-profiler-demo/GPU-multi-worker/34.83.195.179_6003.xplane.pb";
  if (!testing::HaveCorpusFile(rel)) return;
  const std::string path = testing::CorpusFile(rel);
  CHECK(PeekTraceRank(path).host == "34.83.195.179:6003");
  CHECK(GroupByRank({path}).size() == 1);
  const RanksReport rep = Analyze(path);
  CHECK(rep.ranks.size() == 1);
}

}  // namespace
}  // namespace tfprof
