// Measures, in one run, our load of a ProfileProto against a bare protobuf
// parse of the same bytes and against reading them into fresh memory, peak
// memory, and the time of each view's default
// and a filtered query, cold and repeated. Prints one table row.
//
// Every measurement runs in its own child process, so that each one's peak
// RSS is its own and each cold query is the first after its load.
//
// Usage: bench PROFILE             (the row of bench/run.sh; each figure from
//                                    its own fresh process; with
//                                    $TFPROF_BENCH_TARGETS, also the figures
//                                    against their targets, for
//                                    bench/targets.py)
//        bench --trace TRACE        (our trace import against a bare parse
//                                    of the same file: simdjson's on-demand
//                                    walk, or protobuf's XSpace parse)
//        bench --web PROFILE        (the web UI's latencies)
//        bench --query VIEW|steps|none PROFILE [filtered]
//                                   (one load and one cold query, to profile)
//        bench --diff PROFILE       (one load and the cold diff of its scope
//                                    view against the same file)
//        bench --cores PROFILE      (loads on one core and on all, taking
//                                    turns three times)
//        bench --json_kernel        (the simdjson kernel chosen at run time)
#include <sched.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "cli/hugepages.h"
#include "profiler/importers/trace_import.h"
#include "profiler/load/loader.h"
#include "profiler/views/diff.h"
#include "profiler/views/steps.h"
#include "profiler/views/views.h"
#include "profiler/web/api.h"
#include "proto/xplane.pb.h"
#include "simdjson.h"

namespace {

double Seconds(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
      .count();
}

// User plus system CPU time of this process so far, in seconds.
double CpuSeconds() {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
         (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

// Minor page faults of this process so far (first touches of memory).
long MinorFaults() {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_minflt;
}

double PeakRssMb() {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss / 1024.0;
}

// Runs `f` in a child process; returns the doubles it reported (up to n).
template <typename F>
bool InChild(F f, double* out, int n) {
  int fds[2];
  if (pipe(fds) != 0) return false;
  const pid_t pid = fork();
  if (pid < 0) return false;
  if (pid == 0) {
    close(fds[0]);
    double values[32] = {0};
    const bool ok = f(values);
    if (ok) {
      ssize_t w = write(fds[1], values, sizeof(double) * n);
      (void)w;
    }
    _exit(ok ? 0 : 1);
  }
  close(fds[1]);
  size_t got = 0;
  char* p = reinterpret_cast<char*>(out);
  while (got < sizeof(double) * n) {
    const ssize_t r = read(fds[0], p + got, sizeof(double) * n - got);
    if (r <= 0) break;
    got += static_cast<size_t>(r);
  }
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return got == sizeof(double) * n && WIFEXITED(status) &&
         WEXITSTATUS(status) == 0;
}

// Loads the input: v[0] = seconds, v[1] = peak RSS in MB, v[2] = nodes.
// Null (with a message) if the load fails.
std::unique_ptr<tfprof::LoadedProfile> TimedLoad(const tfprof::InputPaths& in,
                                                 double* v) {
  const auto t0 = std::chrono::steady_clock::now();
  absl::StatusOr<std::unique_ptr<tfprof::LoadedProfile>> loaded =
      tfprof::LoadProfile(in);
  v[0] = Seconds(t0);
  if (!loaded.ok()) {
    std::fprintf(stderr, "bench: %s\n",
                 std::string(loaded.status().message()).c_str());
    return nullptr;
  }
  v[1] = PeakRssMb();
  v[2] = static_cast<double>((*loaded)->model.size());
  return std::move(*loaded);
}

}  // namespace

void Target(const std::string& label, const std::string& figure,
            const std::string& measured, const std::string& target,
            const std::string& verdict);
void RatioTarget(const std::string& label, const std::string& figure,
                 double ratio, double bound);

// Reads every value of an on-demand JSON document once (strings unescaped,
// numbers parsed): the least any importer of the file does. False on error.
bool WalkJson(simdjson::ondemand::value v, int64_t* values) {
  ++*values;
  simdjson::ondemand::json_type type;
  if (v.type().get(type)) return false;
  switch (type) {
    case simdjson::ondemand::json_type::object: {
      simdjson::ondemand::object o;
      if (v.get_object().get(o)) return false;
      for (auto field : o) {
        std::string_view key;
        simdjson::ondemand::value fv;
        if (field.unescaped_key().get(key) || field.value().get(fv) ||
            !WalkJson(fv, values)) {
          return false;
        }
      }
      return true;
    }
    case simdjson::ondemand::json_type::array: {
      simdjson::ondemand::array a;
      if (v.get_array().get(a)) return false;
      for (auto e : a) {
        simdjson::ondemand::value ev;
        if (e.get(ev) || !WalkJson(ev, values)) return false;
      }
      return true;
    }
    case simdjson::ondemand::json_type::string: {
      std::string_view s;
      return !v.get_string().get(s);
    }
    case simdjson::ondemand::json_type::number: {
      double d;
      return !v.get_double().get(d);
    }
    case simdjson::ondemand::json_type::boolean: {
      bool b;
      return !v.get_bool().get(b);
    }
    default:
      return !v.is_null().error();
  }
}

// The bare parse a trace import is measured against, in this process:
// JSON: reading the file and walking it once with simdjson's on-demand
// parser; XSpace: protobuf's ParseFromString of the file's bytes (n/a past
// its 2 GiB limit). v[0] = seconds, v[1] = peak RSS (MB).
bool BareTraceParse(const std::string& path, double* v) {
  const auto t0 = std::chrono::steady_clock::now();
  if (absl::EndsWith(path, ".xplane.pb")) {
    auto contents = tfprof::ReadFileToString(path);
    tensorflow::profiler::XSpace space;
    if (!contents.ok() || !space.ParseFromString(*contents)) return false;
  } else {
    simdjson::padded_string json;
    if (simdjson::padded_string::load(path).get(json)) return false;
    simdjson::ondemand::parser parser;
    simdjson::ondemand::document doc;
    simdjson::ondemand::value root;
    int64_t values = 0;
    if (parser.iterate(json).get(doc) || doc.get_value().get(root) ||
        !WalkJson(root, &values)) {
      return false;
    }
  }
  v[0] = Seconds(t0);
  v[1] = PeakRssMb();
  return true;
}

int TraceMain(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return 1;
  const double mb = st.st_size / 1e6;
  const bool xspace = absl::EndsWith(path, ".xplane.pb");
  double parse[2] = {0, 0};
  const bool parsed =
      InChild([&](double* v) { return BareTraceParse(path, v); }, parse, 2);
  double r[4] = {0};
  const bool loaded = InChild(
      [&](double* v) {
        tfprof::InputPaths in;
        in.trace_path = path;
        std::unique_ptr<tfprof::LoadedProfile> loaded = TimedLoad(in, v);
        if (loaded == nullptr) return false;
        tfprof::Views views(&loaded->model, nullptr);
        auto t0 = std::chrono::steady_clock::now();
        (void)views.Query(tfprof::ViewKind::kOp, tfprof::Options());
        v[3] = Seconds(t0);
        return true;
      },
      r, 4);
  if (!loaded) return 1;
  const std::string label =
      absl::StrFormat("%.1f MB %s", mb, xspace ? "XSpace" : "JSON trace");
  std::printf("| %.1f MB | %.0f | %.3f s | %s | %s | %.2f | %.3f s |\n", mb,
              r[2], r[0],
              parsed ? absl::StrFormat("%.3f s", parse[0]).c_str() : "n/a",
              parsed ? absl::StrFormat("%.2f", r[0] / parse[0]).c_str() : "n/a",
              r[1] / mb, r[3]);
  if (parsed && xspace) {  // (no target for XSpaces: for comparison)
    Target(label, "import / bare XSpace ParseFromString",
           absl::StrFormat("%.3fx", r[0] / parse[0]), "none", "-");
  } else if (parsed) {
    RatioTarget(label, "import / bare simdjson on-demand walk", r[0] / parse[0],
                1.5);
  } else if (xspace) {
    Target(label, "loads (past protobuf's 2 GiB limit)",
           absl::StrFormat("yes, in %.1f s", r[0]), "loads", "met");
  }
  RatioTarget(label, "peak RSS / file", r[1] / mb, 2.0);
  return 0;
}

// The web UI's latencies next to the command line's, per view (scope, op,
// code), in one process after one load: the view's default query on fresh
// views (what the command line runs), the page's first request on a fresh
// server (the same query and the root's first 200 children as JSON), and
// opening the first-level node with the most children (from the server's
// cache).
int WebMain(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return 1;
  const double mb = st.st_size / 1e6;
  double r[12] = {0};
  const bool ok = InChild(
      [&](double* v) {
        tfprof::InputPaths in;
        in.profile_path = path;
        std::unique_ptr<tfprof::LoadedProfile> loaded = TimedLoad(in, v);
        if (loaded == nullptr) return false;
        tfprof::Session session(std::move(loaded), in);
        int i = 3;
        for (const char* view : {"scope", "op", "code"}) {
          tfprof::Views cli_views(&session.model(), nullptr);
          auto t0 = std::chrono::steady_clock::now();
          absl::StatusOr<tfprof::ResultTree> tree =
              cli_views.Query(*tfprof::ViewNamed(view), tfprof::Options());
          v[i++] = Seconds(t0);
          if (!tree.ok()) return false;
          // The node to open: the root's child with the most children (the
          // API's node ids are the result's indices).
          size_t widest = 0;
          for (size_t c : tree->root().children) {
            if (tree->nodes[c].children.size() >
                tree->nodes[widest].children.size()) {
              widest = c;
            }
          }
          // Cold for the web's query too.
          session.ResetViews();
          tfprof::WebApi api(&session, tfprof::WebInputFlags(),
                             tfprof::Options());
          const tfprof::WebParams first = {
              {"view", view}, {"levels", "1"}, {"limit", "200"}};
          t0 = std::chrono::steady_clock::now();
          (void)api.Get("/api/view", first);
          v[i++] = Seconds(t0);
          t0 = std::chrono::steady_clock::now();
          (void)api.Get("/api/view", {{"view", view},
                                      {"node", std::to_string(widest)},
                                      {"levels", "1"},
                                      {"limit", "200"}});
          v[i++] = Seconds(t0);
        }
        return true;
      },
      r, 12);
  if (!ok) return 1;
  std::printf(
      "| %.1f MB | %.0f | %.3f s | %.3f/%.3f/%.3f s | %.3f/%.3f/%.3f s | "
      "%.4f/%.4f/%.4f s |\n",
      mb, r[2], r[0], r[3], r[6], r[9], r[4], r[7], r[10], r[5], r[8], r[11]);
  return 0;
}

// Appends one line per figure to the file named by $TFPROF_BENCH_TARGETS
// (if set): "label<TAB>figure<TAB>measured<TAB>target<TAB>verdict", which
// bench/targets.py turns into the table against the targets.
void Target(const std::string& label, const std::string& figure,
            const std::string& measured, const std::string& target,
            const std::string& verdict) {
  const char* file = std::getenv("TFPROF_BENCH_TARGETS");
  if (file == nullptr || *file == '\0') return;
  FILE* f = std::fopen(file, "a");
  if (f == nullptr) return;
  std::fprintf(f, "%s\t%s\t%s\t%s\t%s\n", label.c_str(), figure.c_str(),
               measured.c_str(), target.c_str(), verdict.c_str());
  std::fclose(f);
}

// A ratio against an upper bound: "0.23x", "<= 0.3x", "met"/"missed".
void RatioTarget(const std::string& label, const std::string& figure,
                 double ratio, double bound) {
  Target(label, figure, absl::StrFormat("%.3fx", ratio),
         absl::StrFormat("<= %gx", bound), ratio <= bound ? "met" : "missed");
}

// The fastest of three loads in fresh processes bound to one core, and of
// three free to use every core, taking turns: {one core, all cores}.
bool LoadsByCores(const std::string& path, double* one, double* all) {
  *one = *all = 1e30;
  for (int turn = 0; turn < 6; ++turn) {
    const bool pinned = turn % 2 == 0;
    double v[3] = {0};
    const bool ok = InChild(
        [&](double* out) {
          if (pinned) {
            cpu_set_t set;
            if (sched_getaffinity(0, sizeof(set), &set) != 0) return false;
            int first = 0;
            while (first < CPU_SETSIZE && !CPU_ISSET(first, &set)) ++first;
            CPU_ZERO(&set);
            CPU_SET(first, &set);
            if (sched_setaffinity(0, sizeof(set), &set) != 0) return false;
          }
          tfprof::InputPaths in;
          in.profile_path = path;
          return TimedLoad(in, out) != nullptr;
        },
        v, 3);
    if (!ok) return false;
    double* best = pinned ? one : all;
    *best = std::min(*best, v[0]);
  }
  return true;
}

// In a fresh process: loads `path`, then runs `after(loaded, v + 3)`.
// v[0] = load seconds, v[1] = peak RSS (MB) after the load, v[2] = nodes.
template <typename F>
bool LoadThen(const std::string& path, F after, double* out, int n) {
  return InChild(
      [&](double* v) {
        tfprof::InputPaths in;
        in.profile_path = path;
        std::unique_ptr<tfprof::LoadedProfile> loaded = TimedLoad(in, v);
        if (loaded == nullptr) return false;
        // `after` takes the profile (to own it) or looks at it.
        if constexpr (std::is_invocable_v<
                          F, std::unique_ptr<tfprof::LoadedProfile>&,
                          double*>) {
          return after(loaded, v + 3);
        } else {
          return after(loaded.get(), v + 3);
        }
      },
      out, n);
}

// Runs `f` and returns its seconds.
template <typename F>
double Timed(F f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return Seconds(t0);
}

tfprof::Options FilteredOptions() {
  tfprof::Options o;
  o.max_depth = 4;
  o.min_micros = 1000;
  o.order_by = tfprof::Attr::kMicros;
  return o;
}

// `diff scope` of a profile against itself, cold, over its load.
constexpr double kDiffTarget = 0.5;

constexpr tfprof::ViewKind kViews[4] = {
    tfprof::ViewKind::kScope, tfprof::ViewKind::kGraph, tfprof::ViewKind::kOp,
    tfprof::ViewKind::kCode};

// One query as the session runs it: the tree handed back to the views
// when its caller is done with it (Views::Recycle), for the next query.
bool QueryAndRecycle(tfprof::Views* views, tfprof::ViewKind view,
                     const tfprof::Options& o) {
  absl::StatusOr<tfprof::ResultTree> tree = views->Query(view, o);
  if (!tree.ok()) return false;
  views->Recycle(std::move(*tree));
  return true;
}

// Every view's default query and the filtered one, one after the other
// after one load: v[0..3] cold, v[4..7] repeated, v[8..11] filtered (warm),
// v[12] peak RSS (MB) after every query and the steps table.
bool AllQueries(tfprof::LoadedProfile* loaded, double* v) {
  tfprof::Views views(&loaded->model, nullptr);
  for (int k = 0; k < 4; ++k) {
    v[k] = Timed(
        [&] { (void)QueryAndRecycle(&views, kViews[k], tfprof::Options()); });
    v[4 + k] = Timed(
        [&] { (void)QueryAndRecycle(&views, kViews[k], tfprof::Options()); });
    v[8 + k] = Timed(
        [&] { (void)QueryAndRecycle(&views, kViews[k], FilteredOptions()); });
  }
  (void)tfprof::ComputeSteps(loaded->model);
  v[12] = PeakRssMb();
  return true;
}

// The query's first run after a load (cold) and its second.
bool ColdQuery(tfprof::ViewKind view, const tfprof::Options& o,
               tfprof::LoadedProfile* loaded, double* v) {
  tfprof::Views views(&loaded->model, nullptr);
  bool ok = true;
  v[0] = Timed([&] { ok = QueryAndRecycle(&views, view, o); });
  v[1] = Timed([&] { ok = ok && QueryAndRecycle(&views, view, o); });
  return ok;
}

// The web page's first request for the scope view after a load (the
// default query, answered a level at a time), and opening the root's first
// child.
bool ColdWebPage(std::unique_ptr<tfprof::LoadedProfile>& loaded, double* v) {
  tfprof::Session session(std::move(loaded), tfprof::InputPaths());
  tfprof::WebApi api(&session, tfprof::WebInputFlags(), tfprof::Options());
  tfprof::WebReply r;
  v[0] = Timed([&] {
    r = api.Get("/api/view",
                {{"view", "scope"}, {"levels", "1"}, {"limit", "200"}});
  });
  v[1] = Timed([&] {
    (void)api.Get(
        "/api/view",
        {{"view", "scope"}, {"node", "1"}, {"levels", "1"}, {"limit", "200"}});
  });
  return r.status == 200;
}

// The diff of the scope view of the profile against itself loaded again as
// the base (the command line's `diff`, default options), cold.
bool ColdDiff(const std::string& path, tfprof::LoadedProfile* loaded,
              double* v) {
  tfprof::InputPaths in;
  in.profile_path = path;
  absl::StatusOr<std::unique_ptr<tfprof::LoadedProfile>> base =
      tfprof::LoadProfile(in);
  if (!base.ok()) return false;
  tfprof::Views base_views(&(*base)->model, nullptr);
  tfprof::Views views(&loaded->model, nullptr);
  bool ok = false;
  const double cpu0 = CpuSeconds();
  v[0] = Timed([&] {
    ok = tfprof::QueryDiff(tfprof::ViewKind::kScope, tfprof::Options(),
                           tfprof::DiffOptions(), &base_views, (*base)->model,
                           &views, loaded->model)
             .ok();
  });
  v[1] = CpuSeconds() - cpu0;  // on both cores
  // Repeated: the fastest of $TFPROF_BENCH_REPEAT more runs (1), whose
  // memory the first one's freed pages mostly serve (the work without the
  // first touch of fresh memory).
  const char* repeat_env = std::getenv("TFPROF_BENCH_REPEAT");
  const int repeat =
      repeat_env != nullptr ? std::max(1, std::atoi(repeat_env)) : 1;
  v[2] = 1e9;
  for (int i = 0; i < repeat && ok; ++i) {
    v[2] = std::min(v[2], Timed([&] {
                      ok = tfprof::QueryDiff(
                               tfprof::ViewKind::kScope, tfprof::Options(),
                               tfprof::DiffOptions(), &base_views,
                               (*base)->model, &views, loaded->model)
                               .ok();
                    }));
  }
  return ok;
}

// The table row: load and memory from the process that ran every query;
// cold and filtered queries each from their own process, over that
// process's load.
void PrintProfileRow(double mb, double parse_s, const double* all,
                     const double (*cold)[5], const double* filtered) {
  const double load = all[0];
  std::string parse = "n/a", ratio = "n/a";
  if (parse_s > 0) {
    parse = absl::StrFormat("%.3f s", parse_s);
    ratio = absl::StrFormat("%.2f", load / parse_s);
  }
  std::printf(
      "| %.1f MB | %.0f | %.3f s | %s | %s | %.2f | %.2f | "
      "%.3f/%.3f/%.3f/%.3f s | %.2f/%.2f/%.2f/%.2f | %.3f/%.3f/%.3f/%.3f s | "
      "%.3f s | %.2f |\n",
      mb, all[2], load, parse.c_str(), ratio.c_str(), all[1] / mb,
      all[3 + 12] / mb, cold[0][3], cold[1][3], cold[2][3], cold[3][3],
      cold[0][3] / cold[0][0], cold[1][3] / cold[1][0], cold[2][3] / cold[2][0],
      cold[3][3] / cold[3][0], cold[0][4], cold[1][4], cold[2][4], cold[3][4],
      filtered[3], filtered[3] / filtered[0]);
}

void ProfileTargets(const std::string& label, double parse_s, double read_s,
                    const double* all, const double (*cold)[5],
                    const double* filtered, const double* steps,
                    const double* web, const double* diff, double mb) {
  const double load = all[0];
  if (parse_s > 0) {
    RatioTarget(label, "load / bare ParseFromString", load / parse_s, 1.0);
  }
  if (read_s > 0) {
    RatioTarget(label, "load / reading the file into fresh memory",
                load / read_s, 2.5);
  }
  RatioTarget(label, "peak RSS / file, after the load and every query",
              all[3 + 12] / mb, 1.5);
  for (int k = 0; k < 4; ++k) {
    const std::string view = tfprof::ViewName(kViews[k]);
    RatioTarget(label, view + " default query, cold / load",
                cold[k][3] / cold[k][0], 0.3);
    RatioTarget(label, view + " default query, repeated / load",
                cold[k][4] / cold[k][0], 0.05);
  }
  RatioTarget(label, "filtered scope query, cold / load",
              filtered[3] / filtered[0], 0.1);
  RatioTarget(label, "steps table, cold / load", steps[3] / steps[0], 0.3);
  RatioTarget(label, "web first page (scope), cold / load", web[3] / web[0],
              0.3);
  RatioTarget(label, "web opening a node / load", web[4] / web[0], 0.05);
  RatioTarget(label, "diff (scope, base = the same file), cold / load",
              diff[3] / diff[0], kDiffTarget);
  // For the linearity check over sizes (bench/targets.py).
  Target(label, "load per node",
         absl::StrFormat("%.3f us", load / all[2] * 1e6), "linear", "");
  Target(label, "scope query cold per node",
         absl::StrFormat("%.3f us", cold[0][3] / cold[0][2] * 1e6), "linear",
         "");
}

// The two-core load's gain over the same load on one core.
void CoresTarget(const std::string& label, double one_core, double all_cores) {
  const double gain = one_core / all_cores;
  Target(label, "load on 2 cores, faster than on one (fastest of 3 each)",
         absl::StrFormat("%.2fx (%.3f s against %.3f s)", gain, all_cores,
                         one_core),
         ">= 1.5x faster", gain >= 1.5 ? "met" : "missed");
}

int CoresMain(const std::string& path) {
  double one = 0, all = 0;
  if (!LoadsByCores(path, &one, &all)) return 1;
  std::printf("load on one core %.3f s, on all cores %.3f s: %.2fx faster\n",
              one, all, one / all);
  return 0;
}

// The row of one generated profile, and its figures against the targets.
int ProfileMain(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    std::fprintf(stderr, "bench: %s: %s\n", path.c_str(), std::strerror(errno));
    return 1;
  }
  const double mb = st.st_size / 1e6;
  const std::string label = absl::StrFormat("%.1f MB", mb);
  // 1. A bare single-threaded parse of the same bytes: the figure to beat.
  //    (Impossible past protobuf's 2 GiB message limit.)
  double parse[2] = {0, 0};
  const bool parsed = InChild(
      [&](double* v) {
        auto contents = tfprof::ReadFileToString(path);
        if (!contents.ok()) return false;
        auto t0 = std::chrono::steady_clock::now();
        tensorflow::tfprof::ProfileProto p;
        if (!p.ParseFromString(*contents)) return false;
        v[0] = Seconds(t0);
        v[1] = PeakRssMb();
        return true;
      },
      parse, 2);
  // 1b. Reading the file into fresh memory: on these machines the bound a
  //     load cannot beat (first touches of the pages, not the parse).
  double read[2] = {0, 0};
  const bool was_read = InChild(
      [&](double* v) {
        auto t0 = std::chrono::steady_clock::now();
        auto contents = tfprof::ReadFileToString(path);
        if (!contents.ok()) return false;
        v[0] = Seconds(t0);
        v[1] = static_cast<double>(contents->size());
        return true;
      },
      read, 2);
  // 1c. The load on one core and on both.
  double one_core = 0, all_cores = 0;
  if (!LoadsByCores(path, &one_core, &all_cores)) return 1;
  // 2. Each view's default query, the first after a fresh load (and its
  //    repetition); the filtered scope query, likewise.
  double cold[4][5] = {{0}};
  for (int k = 0; k < 4; ++k) {
    if (!LoadThen(
            path,
            [&](tfprof::LoadedProfile* l, double* v) {
              return ColdQuery(kViews[k], tfprof::Options(), l, v);
            },
            cold[k], 5)) {
      return 1;
    }
  }
  double filtered[5] = {0};
  if (!LoadThen(
          path,
          [&](tfprof::LoadedProfile* l, double* v) {
            return ColdQuery(tfprof::ViewKind::kScope, FilteredOptions(), l, v);
          },
          filtered, 5)) {
    return 1;
  }
  // 3. Every query after one load, for peak memory.
  double all[16] = {0};
  if (!LoadThen(path, AllQueries, all, 16)) return 1;
  // 4. The newer views: steps, the web page's first request, diff.
  double steps[4] = {0}, web[5] = {0}, diff[6] = {0};
  const bool more =
      LoadThen(
          path,
          [](tfprof::LoadedProfile* l, double* v) {
            v[0] = Timed([&] { (void)tfprof::ComputeSteps(l->model); });
            return true;
          },
          steps, 4) &&
      LoadThen(path, ColdWebPage, web, 5) &&
      LoadThen(
          path,
          [&](tfprof::LoadedProfile* l, double* v) {
            return ColdDiff(path, l, v);
          },
          diff, 6);
  if (!more) return 1;
  PrintProfileRow(mb, parsed ? parse[0] : -1, all, cold, filtered);
  ProfileTargets(label, parsed ? parse[0] : -1, was_read ? read[0] : -1, all,
                 cold, filtered, steps, web, diff, mb);
  CoresTarget(label, one_core, all_cores);
  return 0;
}

// Loads PROFILE and runs one query of VIEW cold (the first after the load),
// then again; prints the load and both query times. With `filtered`, the
// query is -max_depth 4 -min_micros 1000 -order_by micros. For profiling
// one query (e.g. under perf).
int QueryMain(const std::string& view_name, const std::string& path,
              bool filtered) {
  std::optional<tfprof::ViewKind> view = tfprof::ViewNamed(view_name);
  if (!view && view_name != "none" && view_name != "steps") return 2;
  tfprof::InputPaths in;
  in.profile_path = path;
  double v[3];
  std::unique_ptr<tfprof::LoadedProfile> loaded = TimedLoad(in, v);
  if (loaded == nullptr) return 1;
  if (view_name == "steps") {  // the steps table, cold then repeated
    const double cold =
        Timed([&] { (void)tfprof::ComputeSteps(loaded->model); });
    const double warm =
        Timed([&] { (void)tfprof::ComputeSteps(loaded->model); });
    std::printf(
        "load %.3f s, steps table cold %.3f s (%.2fx), repeated %.3f s\n", v[0],
        cold, cold / v[0], warm);
    return 0;
  }
  if (!view) {  // "none": the load alone (a baseline for counters)
    std::printf("load %.3f s\n", v[0]);
    return 0;
  }
  tfprof::Views views(&loaded->model, nullptr);
  const tfprof::Options o = filtered ? FilteredOptions() : tfprof::Options();
  const double cpu0 = CpuSeconds();
  const long faults0 = MinorFaults();
  auto t0 = std::chrono::steady_clock::now();
  absl::StatusOr<tfprof::ResultTree> tree = views.Query(*view, o);
  const double cold = Seconds(t0);
  const double cold_cpu = CpuSeconds() - cpu0;
  const long cold_faults = MinorFaults() - faults0;
  if (!tree.ok()) return 1;
  const size_t shown = tree->nodes.size();
  views.Recycle(std::move(*tree));
  // The repeated query: the fastest of $TFPROF_BENCH_REPEAT runs (1).
  const char* repeat_env = std::getenv("TFPROF_BENCH_REPEAT");
  const int repeat =
      repeat_env != nullptr ? std::max(1, std::atoi(repeat_env)) : 1;
  double warm = 1e9;
  for (int i = 0; i < repeat; ++i) {
    t0 = std::chrono::steady_clock::now();
    (void)QueryAndRecycle(&views, *view, o);
    warm = std::min(warm, Seconds(t0));
  }
  std::printf(
      "load %.3f s, %s query cold %.3f s (%.2fx), repeated %.3f s "
      "(%.3fx), %zu nodes shown, peak RSS %.0f MB; CPU: load %.3f s, "
      "cold query %.3f s; minor faults: load %ld, cold query %ld\n",
      v[0], view_name.c_str(), cold, cold / v[0], warm, warm / v[0], shown,
      PeakRssMb(), cpu0, cold_cpu, faults0, cold_faults);
  return 0;
}

// Loads PROFILE, then diffs its scope view against the same file loaded
// again as the base (cold, as ProfileMain's diff row); prints the load, the
// diff and their ratio. For profiling the diff alone.
int DiffMain(const std::string& path) {
  double v[7] = {0};
  if (!LoadThen(
          path,
          [&](tfprof::LoadedProfile* l, double* d) {
            d[3] = CpuSeconds();  // the load's (all this process did)
            return ColdDiff(path, l, d);
          },
          v, 7)) {
    return 1;
  }
  std::printf(
      "load %.3f s, diff scope (base = the same file) cold %.3f s "
      "(%.2fx), repeated %.3f s (%.2fx); CPU: load %.3f s, diff %.3f s "
      "(%.2fx)\n",
      v[0], v[3], v[3] / v[0], v[5], v[5] / v[0], v[6], v[4], v[4] / v[6]);
  struct stat st;
  if (stat(path.c_str(), &st) == 0) {
    RatioTarget(absl::StrFormat("%.1f MB", st.st_size / 1e6),
                "diff (scope, base = the same file), cold / load", v[3] / v[0],
                kDiffTarget);
  }
  return 0;
}

int main(int argc, char** argv) {
  // Measured as the tfprof program runs (huge pages where the machine
  // offers them on request).
  tfprof::cli::MaybeReexecWithHugePages(argv);
  if (argc == 3 && std::string(argv[1]) == "--trace") return TraceMain(argv[2]);
  if (argc == 3 && std::string(argv[1]) == "--web") return WebMain(argv[2]);
  if (argc == 3 && std::string(argv[1]) == "--diff") return DiffMain(argv[2]);
  if (argc == 3 && std::string(argv[1]) == "--cores") {
    return CoresMain(argv[2]);
  }
  if ((argc == 4 || argc == 5) && std::string(argv[1]) == "--query") {
    return QueryMain(argv[2], argv[3],
                     argc == 5 && std::string(argv[4]) == "filtered");
  }
  if (argc == 2 && std::string(argv[1]) == "--json_kernel") {
    std::printf("%s\n", tfprof::JsonKernelName().c_str());
    return 0;
  }
  if (argc != 2) {
    std::fprintf(stderr,
                 "usage: bench PROFILE | bench --trace TRACE | bench --web "
                 "PROFILE | bench --diff PROFILE | bench --cores PROFILE | "
                 "bench --query VIEW|none "
                 "PROFILE [filtered]\n");
    return 2;
  }
  return ProfileMain(argv[1]);
}
