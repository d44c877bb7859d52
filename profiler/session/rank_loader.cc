#include "profiler/session/rank_loader.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "profiler/base/large_stack.h"
#include "profiler/load/loader.h"

namespace tfprof {

absl::StatusOr<std::vector<RankProfile>> ProfileRankFiles(
    const std::vector<RankFiles>& ranks, int threads,
    const std::function<void(const std::string&)>& progress) {
  std::vector<std::optional<RankProfile>> out(ranks.size());
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  std::mutex mu;  // guards `error` and calls to `progress`
  absl::Status error = absl::OkStatus();
  auto work = [&] {
    for (size_t i = next++; i < ranks.size() && !failed; i = next++) {
      if (progress) {
        std::lock_guard<std::mutex> lock(mu);
        progress(ranks[i].files.front());
      }
      InputPaths in;
      in.trace_path = absl::StrJoin(ranks[i].files, ",");
      absl::StatusOr<std::unique_ptr<LoadedProfile>> loaded = LoadProfile(in);
      if (!loaded.ok()) {
        std::lock_guard<std::mutex> lock(mu);
        if (error.ok()) error = loaded.status();
        failed = true;
        return;
      }
      RankProfile p;
      // Deep trees recurse in the views.
      RunWithLargeStack(
          [&] { p = ProfileRank((*loaded)->model, ranks[i].files); });
      if (p.rank < 0) p.rank = ranks[i].rank;
      if (p.host.empty()) p.host = ranks[i].host;
      out[i] = std::move(p);
    }
  };
  const int n = std::max(1, std::min<int>(threads, ranks.size()));
  std::vector<std::thread> pool;
  for (int t = 1; t < n; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  if (!error.ok()) return error;
  std::vector<RankProfile> profiles;
  for (std::optional<RankProfile>& p : out) profiles.push_back(std::move(*p));
  return profiles;
}

StepTable CombineRankSteps(const std::vector<RankProfile>& ranks) {
  struct Sum {
    StepRow row;
    int64_t n = 0;
  };
  std::map<int64_t, Sum> steps;
  StepTable out;
  for (const RankProfile& p : ranks) {
    out.kernel_records = out.kernel_records && p.steps.kernel_records;
    out.copy_records = out.copy_records && p.steps.copy_records;
    out.accelerator_work = out.accelerator_work && p.steps.accelerator_work;
    for (const StepRow& r : p.steps.rows) {
      Sum& s = steps[r.step];
      StepRow& c = s.row;
      if (s.n == 0) {
        c.step = r.step;
        c.start_ns = r.start_ns;
        c.from_markers = r.from_markers;
      }
      c.wall_ns = std::max(c.wall_ns, r.wall_ns);
      for (auto [sum, v] :
           {std::pair{&c.accelerator_ns, r.accelerator_ns},
            {&c.compute_ns, r.compute_ns},
            {&c.memcpy_ns, r.memcpy_ns},
            {&c.communication_ns, r.communication_ns},
            {&c.exposed_communication_ns, r.exposed_communication_ns},
            {&c.idle_ns, r.idle_ns},
            {&c.kernels, r.kernels},
            {&c.device_span_ns, r.device_span_ns}}) {
        *sum += v;
      }
      if (r.peak_bytes > c.peak_bytes) {
        c.peak_bytes = r.peak_bytes;
        c.peak_allocator = r.peak_allocator;
      }
      ++s.n;
    }
  }
  for (auto& [step, s] : steps) {
    StepRow r = s.row;
    for (int64_t* v : {&r.accelerator_ns, &r.compute_ns, &r.memcpy_ns,
                       &r.communication_ns, &r.exposed_communication_ns,
                       &r.idle_ns, &r.kernels, &r.device_span_ns}) {
      *v /= s.n;
    }
    out.rows.push_back(std::move(r));
  }
  const std::string each =
      ranks.empty() ? std::string("no ranks") : ranks.front().steps.wall_source;
  out.wall_source = absl::StrFormat(
      "%d ranks: wall of the slowest rank, other columns the mean per rank, "
      "peak memory the largest; each rank's %s",
      ranks.size(), each);
  return out;
}

}  // namespace tfprof
