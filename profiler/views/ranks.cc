#include "profiler/views/ranks.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <map>
#include <set>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "profiler/base/saturate.h"
#include "profiler/base/units.h"
#include "profiler/views/communication.h"
#include "profiler/views/flops.h"

namespace tfprof {
namespace {

using Interval = std::pair<int64_t, int64_t>;

// Ops kept per window (the rest are small next to them).
constexpr size_t kWindowOps = 8;

// The step whose span holds time t (activity clock), or -1.
class StepFinder {
 public:
  explicit StepFinder(const StepTable& table) {
    for (const StepRow& r : table.rows) {
      spans_.push_back({r.start_ns, SatAdd(r.start_ns, r.wall_ns), r.step});
    }
    std::sort(spans_.begin(), spans_.end());
  }
  int64_t Find(int64_t t) const {
    auto it =
        std::upper_bound(spans_.begin(), spans_.end(), t,
                         [](int64_t x, const Span& s) { return x < s.start; });
    if (it == spans_.begin()) return -1;
    --it;
    return t < it->end ? it->step : -1;
  }

 private:
  struct Span {
    int64_t start, end, step;
    bool operator<(const Span& o) const { return start < o.start; }
  };
  std::vector<Span> spans_;
};

// A stretch of one thread's time in which `name` was the innermost open
// host op.
struct Segment {
  int64_t start, end;
  uint32_t name;
};

// Each host thread's exclusive time as segments (sorted, disjoint), the
// time of collectives left out (it is waiting or moving data).
std::vector<std::vector<Segment>> ExclusiveSegments(const Activity& a) {
  CollectiveNames names(a);
  absl::flat_hash_map<uint32_t, std::vector<const HostSpan*>> by_thread;
  for (const HostSpan& h : a.host()) by_thread[h.thread].push_back(&h);
  std::vector<std::vector<Segment>> out;
  for (auto& [thread, spans] : by_thread) {
    std::vector<Segment>& segs = out.emplace_back();
    struct Open {
      int64_t end;
      uint32_t name;
    };
    std::vector<Open> stack;
    int64_t t = INT64_MIN;
    auto emit = [&](int64_t until) {
      if (stack.empty() || until <= t) return;
      const uint32_t name = stack.back().name;
      if (names.KindOf(name) == CollectiveKind::kNone) {
        segs.push_back({t, until, name});
      }
      t = until;
    };
    // Spans are by start (Activity::Finish); enclosing ones first on ties.
    std::stable_sort(spans.begin(), spans.end(),
                     [](const HostSpan* x, const HostSpan* y) {
                       if (x->start_ns != y->start_ns) {
                         return x->start_ns < y->start_ns;
                       }
                       return x->duration_ns > y->duration_ns;
                     });
    for (const HostSpan* h : spans) {
      while (!stack.empty() && stack.back().end <= h->start_ns) {
        emit(stack.back().end);
        stack.pop_back();
      }
      emit(h->start_ns);
      t = std::max(t, h->start_ns);
      int64_t end = SatAdd(h->start_ns, h->duration_ns);
      if (!stack.empty()) end = std::min(end, stack.back().end);
      stack.push_back({end, h->name});
    }
    while (!stack.empty()) {
      emit(stack.back().end);
      stack.pop_back();
    }
  }
  return out;
}

// The top ops by exclusive host time in [lo, hi).
std::vector<OpTime> WindowOps(const Activity& a,
                              const std::vector<std::vector<Segment>>& threads,
                              int64_t lo, int64_t hi) {
  absl::flat_hash_map<uint32_t, int64_t> time;
  for (const std::vector<Segment>& segs : threads) {
    auto it =
        std::partition_point(segs.begin(), segs.end(),
                             [&](const Segment& s) { return s.end <= lo; });
    for (; it != segs.end() && it->start < hi; ++it) {
      const int64_t d = std::min(it->end, hi) - std::max(it->start, lo);
      if (d > 0) time[it->name] += d;
    }
  }
  std::vector<OpTime> ops;
  for (const auto& [name, ns] : time) ops.push_back({a.String(name), ns});
  std::sort(ops.begin(), ops.end(), [](const OpTime& x, const OpTime& y) {
    return x.ns != y.ns ? x.ns > y.ns : x.name < y.name;
  });
  if (ops.size() > kWindowOps) ops.resize(kWindowOps);
  return ops;
}

// Each collective's window: from the latest end of a collective that ended
// before it started (else the first host event) to its start.
void FillWindows(const Activity& a, RankProfile* p) {
  if (p->collectives.empty()) return;
  const std::vector<std::vector<Segment>> threads = ExclusiveSegments(a);
  std::vector<int64_t> ends;
  for (const RankCollective& c : p->collectives) ends.push_back(c.end_ns);
  std::sort(ends.begin(), ends.end());
  const int64_t first = a.host().empty()
                            ? p->collectives.front().start_ns - p->base_ns
                            : a.host().front().start_ns;
  std::map<Interval, int32_t> seen;  // windows shared by overlapping ones
  for (RankCollective& c : p->collectives) {
    auto it = std::upper_bound(ends.begin(), ends.end(), c.start_ns);
    const int64_t lo = it == ends.begin() ? first : *std::prev(it) - p->base_ns;
    const int64_t hi = c.start_ns - p->base_ns;
    auto [w, added] =
        seen.emplace(Interval{lo, hi}, static_cast<int32_t>(p->windows.size()));
    if (added) p->windows.push_back(WindowOps(a, threads, lo, hi));
    c.window = w->second;
  }
}

}  // namespace

RankProfile ProfileRank(const Model& model, std::vector<std::string> files) {
  const Activity& a = model.activity();
  RankProfile p;
  p.rank = a.rank().rank;
  p.world_size = a.rank().world_size;
  p.backend = a.rank().backend;
  p.host = a.rank().host;
  p.base_ns = a.rank().base_ns;
  p.files = std::move(files);
  p.steps = ComputeSteps(model);
  AddStepFlops(ComputeRunFlops(model, p.steps, PeakOverride()), &p.steps);
  p.devices = DeviceSummaries(model);
  for (const DeviceWork& w : a.work()) {
    if (w.kind == WorkKind::kKernel) ++p.kernels;
  }
  const StepFinder steps(p.steps);
  for (CollectiveEvent& e : FindCollectives(a)) {
    if (!EndsWhenRanksMeet(e.kind)) {
      ++p.enqueue_only;
      continue;
    }
    RankCollective c;
    c.start_ns = SatAdd(e.start_ns, p.base_ns);
    c.end_ns = SatAdd(e.end_ns, p.base_ns);
    c.step = steps.Find(e.start_ns);
    c.name = a.String(e.name);
    c.op = std::move(e.op);
    c.group = a.String(e.group);
    c.seq = e.seq;
    p.collectives.push_back(std::move(c));
  }
  if (!p.collectives.empty()) p.enqueue_only = 0;
  FillWindows(a, &p);
  return p;
}

namespace {

// A collective's key, the same on every rank that ran it: its group and
// sequence number, else its group, op, step and order among those.
std::vector<std::string> CollectiveKeys(const RankProfile& p) {
  std::map<std::tuple<std::string, std::string, int64_t>, int64_t> order;
  std::vector<std::string> keys;
  keys.reserve(p.collectives.size());
  for (const RankCollective& c : p.collectives) {
    if (c.seq >= 0) {
      keys.push_back(absl::StrCat("s|", c.group, "|", c.seq));
      continue;
    }
    const int64_t k = order[{c.group, c.op, c.step}]++;
    keys.push_back(absl::StrCat("o|", c.group, "|", c.op, "|", c.step, "|", k));
  }
  return keys;
}

// 1.4826 x the median absolute deviation from `mid`.
int64_t Spread(const std::vector<int64_t>& v, int64_t mid) {
  std::vector<int64_t> dev;
  dev.reserve(v.size());
  for (int64_t x : v) dev.push_back(std::abs(x - mid));
  return static_cast<int64_t>(std::llround(1.4826 * Median(std::move(dev))));
}

struct Matched {
  // key -> (rank index, collective index) of each rank that ran it.
  std::map<std::string, std::vector<std::pair<size_t, size_t>>> by_key;
};

Matched MatchCollectives(const std::vector<RankProfile>& ranks) {
  Matched m;
  for (size_t r = 0; r < ranks.size(); ++r) {
    const std::vector<std::string> keys = CollectiveKeys(ranks[r]);
    for (size_t i = 0; i < keys.size(); ++i) {
      m.by_key[keys[i]].push_back({r, i});
    }
  }
  return m;
}

// Offsets from the reference (index 0), then from any rank already
// aligned for ranks that share nothing with it.
void AlignClocks(const std::vector<RankProfile>& ranks, const Matched& m,
                 RanksReport* report) {
  const size_t n = ranks.size();
  std::vector<bool> aligned(n, false);
  aligned[0] = true;
  report->ranks[0].alignment = "reference";
  for (bool progress = true; progress;) {
    progress = false;
    for (size_t r = 1; r < n; ++r) {
      if (aligned[r]) continue;
      // Differences of end times against each aligned rank.
      std::map<size_t, std::vector<int64_t>> diffs;
      for (const auto& [key, members] : m.by_key) {
        const std::pair<size_t, size_t>* mine = nullptr;
        for (const auto& x : members) {
          if (x.first == r) mine = &x;
        }
        if (mine == nullptr) continue;
        for (const auto& [q, i] : members) {
          if (q == r || !aligned[q]) continue;
          diffs[q].push_back(ranks[r].collectives[mine->second].end_ns -
                             ranks[q].collectives[i].end_ns);
        }
      }
      if (diffs.empty()) continue;
      size_t best = diffs.begin()->first;
      for (const auto& [q, d] : diffs) {
        if (d.size() > diffs[best].size()) best = q;
      }
      const std::vector<int64_t>& d = diffs[best];
      const int64_t mid = Median(d);
      RankReport& rr = report->ranks[r];
      rr.offset_ns = SatAdd(report->ranks[best].offset_ns, mid);
      rr.offset_uncertainty_ns =
          std::max(report->ranks[best].offset_uncertainty_ns, Spread(d, mid));
      rr.matched = static_cast<int64_t>(d.size());
      rr.alignment = "collectives";
      aligned[r] = progress = true;
    }
  }
  for (size_t r = 1; r < n; ++r) {
    if (aligned[r]) continue;
    report->ranks[r].alignment = "wall clock";
    report->notes.push_back(absl::StrCat(
        "rank ", report->ranks[r].rank,
        ": no collective matched another rank's; its clock is taken as its "
        "trace's wall clock, not aligned"));
  }
}

// Per (rank index, step): the intervals a rank waited in collectives.
using WaitMap = std::map<std::pair<size_t, int64_t>, std::vector<Interval>>;

struct StepCandidate {
  int64_t delay = -1;
  size_t rank = 0, coll = 0;
  std::vector<std::pair<size_t, size_t>> members;
};

// Arrivals at each collective seen on two ranks or more: the waiting of
// the early ones, and each step's longest delay.
void Arrivals(const std::vector<RankProfile>& ranks, const Matched& m,
              RanksReport* report, WaitMap* waits,
              std::map<int64_t, StepCandidate>* steps) {
  for (const auto& [key, members] : m.by_key) {
    if (members.size() < 2) continue;
    ++report->collectives_matched;
    size_t last = 0;
    std::vector<int64_t> start(members.size()), end(members.size());
    for (size_t k = 0; k < members.size(); ++k) {
      const auto [r, i] = members[k];
      const int64_t off = report->ranks[r].offset_ns;
      start[k] = ranks[r].collectives[i].start_ns - off;
      end[k] = ranks[r].collectives[i].end_ns - off;
      if (start[k] > start[last]) last = k;
    }
    std::vector<int64_t> others;
    for (size_t k = 0; k < members.size(); ++k) {
      if (k == last) continue;
      others.push_back(start[k]);
      const auto [r, i] = members[k];
      const int64_t until = std::min(start[last], end[k]);
      if (until > start[k]) {
        (*waits)[{r, ranks[r].collectives[i].step}].push_back(
            {start[k], until});
      }
    }
    const int64_t delay = start[last] - Median(others);
    const auto [lr, li] = members[last];
    StepCandidate& c = (*steps)[ranks[lr].collectives[li].step];
    if (delay > c.delay) c = StepCandidate{delay, lr, li, members};
  }
}

// What the straggler did longer than the others (median) before the
// collective it was late for.
void FindCause(const std::vector<RankProfile>& ranks, const StepCandidate& c,
               Straggler* s) {
  const RankProfile& late = ranks[c.rank];
  const int32_t w = late.collectives[c.coll].window;
  if (w < 0) return;
  for (const OpTime& op : late.windows[static_cast<size_t>(w)]) {
    std::vector<int64_t> other;
    for (const auto& [r, i] : c.members) {
      if (r == c.rank) continue;
      int64_t t = 0;
      const int32_t ow = ranks[r].collectives[i].window;
      if (ow >= 0) {
        for (const OpTime& o : ranks[r].windows[static_cast<size_t>(ow)]) {
          if (o.name == op.name) t = o.ns;
        }
      }
      other.push_back(t);
    }
    const int64_t excess = op.ns - Median(other);
    if (excess > s->cause_excess_ns) {
      s->cause = op.name;
      s->cause_ns = op.ns;
      s->cause_excess_ns = excess;
    }
  }
}

void RankSteps(const std::vector<RankProfile>& ranks, const WaitMap& waits,
               RanksReport* report) {
  for (size_t r = 0; r < ranks.size(); ++r) {
    RankReport& rr = report->ranks[r];
    for (const StepRow& row : ranks[r].steps.rows) {
      RankStepReport s;
      s.step = row.step;
      s.start_ns = SatAdd(row.start_ns, ranks[r].base_ns) - rr.offset_ns;
      s.wall_ns = row.wall_ns;
      s.compute_ns = row.compute_ns;
      s.communication_ns = row.communication_ns;
      s.exposed_communication_ns = row.exposed_communication_ns;
      s.idle_ns = row.idle_ns;
      auto w = waits.find({r, row.step});
      if (w != waits.end()) {
        std::vector<Interval> v = w->second;
        s.wait_ns = UnionLength(&v);
      }
      rr.steps.push_back(s);
    }
  }
}

void JobSteps(const std::vector<RankProfile>& ranks,
              const std::map<int64_t, StepCandidate>& candidates,
              RanksReport* report) {
  std::map<int64_t, JobStep> steps;
  for (const RankReport& rr : report->ranks) {
    for (const RankStepReport& s : rr.steps) {
      JobStep& j = steps[s.step];
      j.step = s.step;
      if (j.ranks == 0 || s.wall_ns < j.min_wall_ns) j.min_wall_ns = s.wall_ns;
      if (j.ranks == 0 || s.wall_ns > j.max_wall_ns) {
        j.max_wall_ns = s.wall_ns;
        j.slowest_rank = rr.rank;
      }
      ++j.ranks;
    }
  }
  for (auto& [step, j] : steps) {
    auto c = candidates.find(step);
    if (c != candidates.end() && c->second.delay > 0) {
      j.max_delay_ns = c->second.delay;
      j.delayed_by = report->ranks[c->second.rank].rank;
      j.collective = ranks[c->second.rank].collectives[c->second.coll].name;
    }
    report->steps.push_back(j);
  }
}

// Ranks numbered and ordered; a profile without a rank takes the next free
// number.
void NumberRanks(std::vector<RankProfile>* ranks) {
  std::set<int64_t> used;
  for (const RankProfile& p : *ranks) {
    if (p.rank >= 0) used.insert(p.rank);
  }
  int64_t next = 0;
  for (RankProfile& p : *ranks) {
    if (p.rank >= 0) continue;
    while (used.count(next) != 0) ++next;
    p.rank = next;
    used.insert(next);
  }
  std::stable_sort(ranks->begin(), ranks->end(),
                   [](const RankProfile& a, const RankProfile& b) {
                     return a.rank < b.rank;
                   });
}

void NoteCollectives(const std::vector<RankProfile>& ranks,
                     RanksReport* report) {
  if (ranks.size() < 2) {
    report->notes.push_back(
        "one rank: there is nothing to align and no one to wait for (give "
        "--trace_path the traces of every rank: a directory, a glob or a "
        "comma list)");
  }
  // Traces that state different job sizes are not one job's.
  std::set<int64_t> sizes;
  for (const RankProfile& p : ranks) {
    if (p.world_size > 0) sizes.insert(p.world_size);
  }
  if (sizes.size() > 1) {
    report->notes.push_back(absl::StrCat(
        "WARNING: the traces state different world sizes (",
        absl::StrJoin(sizes, ", "),
        "): they are likely not one job's ranks, and what is matched across "
        "them is doubtful"));
  }
  int64_t without = 0, enqueue_only = 0;
  for (const RankProfile& p : ranks) {
    if (p.collectives.empty()) ++without;
    if (p.collectives.empty() && p.enqueue_only > 0) ++enqueue_only;
  }
  if (ranks.size() >= 2 && without == static_cast<int64_t>(ranks.size())) {
    report->notes.push_back(absl::StrCat(
        "WARNING: no collective found in any rank's trace (NCCL/RCCL "
        "kernels, gloo host ranges, XLA collectives): communication, waiting "
        "and stragglers are not measured, and clocks are the traces' own",
        enqueue_only > 0 ? "; some ranks have c10d/nccl enqueue ranges only, "
                           "which end before the ranks meet"
                         : ""));
  } else if (without > 0) {
    report->notes.push_back(absl::StrCat(
        without, " of ", ranks.size(),
        " ranks have no collective that ends when the ranks meet"));
  }
}

}  // namespace

RanksReport AnalyzeRanks(std::vector<RankProfile> ranks) {
  RanksReport report;
  NumberRanks(&ranks);
  for (const RankProfile& p : ranks) {
    RankReport rr;
    rr.rank = p.rank;
    rr.host = p.host;
    rr.files = p.files;
    report.ranks.push_back(std::move(rr));
    if (report.backend.empty()) report.backend = p.backend;
    report.world_size = std::max(report.world_size, p.world_size);
  }
  if (ranks.empty()) return report;
  NoteCollectives(ranks, &report);
  const Matched matched = MatchCollectives(ranks);
  AlignClocks(ranks, matched, &report);
  WaitMap waits;
  std::map<int64_t, StepCandidate> candidates;
  Arrivals(ranks, matched, &report, &waits, &candidates);
  RankSteps(ranks, waits, &report);
  JobSteps(ranks, candidates, &report);
  // The floor: clock uncertainty, and a share of a typical step.
  int64_t uncertainty = 0;
  for (const RankReport& rr : report.ranks) {
    uncertainty = std::max(uncertainty, rr.offset_uncertainty_ns);
  }
  std::vector<int64_t> walls;
  for (const JobStep& j : report.steps) walls.push_back(j.max_wall_ns);
  const int64_t typical_wall = Median(std::move(walls));
  report.straggler_floor_ns =
      std::max(SatMul(uncertainty, 3), typical_wall / 5);
  // Matched collectives that end far apart are likely not the same ones
  // (other ranks' collectives in between, lost events): then the waits
  // read from them are doubtful too.
  for (const RankReport& rr : report.ranks) {
    if (rr.alignment != "collectives" ||
        rr.offset_uncertainty_ns * 10 <= typical_wall) {
      continue;
    }
    report.notes.push_back(absl::StrCat(
        "WARNING: rank ", rr.rank, "'s matched collectives end ",
        FormatNanos(rr.offset_uncertainty_ns),
        " apart (spread) after alignment, more than a tenth of a step: they "
        "may not be the same collectives, and its waits are doubtful"));
  }
  for (const JobStep& j : report.steps) {
    if (j.delayed_by < 0 || j.max_delay_ns < report.straggler_floor_ns ||
        j.max_delay_ns <= 0) {
      continue;
    }
    const StepCandidate& c = candidates.at(j.step);
    Straggler st;
    st.step = j.step;
    st.rank = j.delayed_by;
    st.delay_ns = j.max_delay_ns;
    st.collective = j.collective;
    FindCause(ranks, c, &st);
    report.stragglers.push_back(std::move(st));
  }
  return report;
}

absl::StatusOr<RanksReport> RanksReportOfStep(const RanksReport& report,
                                              int64_t step) {
  RanksReport one = report;
  one.steps.clear();
  one.stragglers.clear();
  for (const JobStep& s : report.steps) {
    if (s.step == step) one.steps.push_back(s);
  }
  if (one.steps.empty()) {
    return absl::NotFoundError(
        absl::StrCat("ranks: -step ", step, " is not a step of any rank"));
  }
  for (const Straggler& s : report.stragglers) {
    if (s.step == step) one.stragglers.push_back(s);
  }
  for (RankReport& r : one.ranks) {
    std::vector<RankStepReport> kept;
    for (RankStepReport& rs : r.steps) {
      if (rs.step == step) kept.push_back(std::move(rs));
    }
    r.steps = std::move(kept);
  }
  return one;
}

}  // namespace tfprof
