// Measures, in one run, our load of a ProfileProto against a bare protobuf
// parse of the same bytes, peak memory, and the time of each view's default
// and a filtered query, cold and repeated. Prints one table row.
//
// The bare parse and our load run in two child processes one after the
// other, so that each one's peak RSS is its own.
//
// Usage: bench PROFILE
//        bench --trace TRACE.json   (our trace import against a bare
//                                    simdjson DOM parse of the same file)
//        bench --json_kernel        (the simdjson kernel chosen at run time)
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_format.h"
#include "cli/hugepages.h"
#include "profiler/importers/trace_import.h"
#include "profiler/load/loader.h"
#include "profiler/views/views.h"
#include "profiler/web/api.h"
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

int TraceMain(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return 1;
  const double mb = st.st_size / 1e6;
  double parse[2] = {0, 0};
  const bool parsed = InChild(
      [&](double* v) {
        auto t0 = std::chrono::steady_clock::now();
        simdjson::padded_string json;
        if (simdjson::padded_string::load(path).get(json)) return false;
        simdjson::dom::parser parser;
        simdjson::dom::element root;
        if (parser.parse(json).get(root)) return false;
        v[0] = Seconds(t0);
        v[1] = PeakRssMb();
        return true;
      },
      parse, 2);
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
  std::printf("| %.1f MB | %.0f | %.3f s | %s | %s | %.2f | %.3f s |\n", mb,
              r[2], r[0],
              parsed ? absl::StrFormat("%.3f s", parse[0]).c_str() : "n/a",
              parsed ? absl::StrFormat("%.2f", r[0] / parse[0]).c_str() : "n/a",
              r[1] / mb, r[3]);
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
        int i = 3;
        for (const char* view : {"scope", "op", "code"}) {
          tfprof::Views cli_views(&loaded->model, nullptr);
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
          tfprof::Views views(&loaded->model, nullptr);
          tfprof::WebApi api(tfprof::WebRun{loaded.get(), &views, ""},
                             tfprof::WebRun{}, tfprof::Options());
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

// Loads PROFILE and runs one query of VIEW cold (the first after the load),
// then again; prints the load and both query times. With `filtered`, the
// query is -max_depth 4 -min_micros 1000 -order_by micros. For profiling
// one query (e.g. under perf).
int QueryMain(const std::string& view_name, const std::string& path,
              bool filtered) {
  std::optional<tfprof::ViewKind> view = tfprof::ViewNamed(view_name);
  if (!view && view_name != "none") return 2;
  tfprof::InputPaths in;
  in.profile_path = path;
  double v[3];
  std::unique_ptr<tfprof::LoadedProfile> loaded = TimedLoad(in, v);
  if (loaded == nullptr) return 1;
  if (!view) {  // "none": the load alone (a baseline for counters)
    std::printf("load %.3f s\n", v[0]);
    return 0;
  }
  tfprof::Views views(&loaded->model, nullptr);
  tfprof::Options o;
  if (filtered) {
    o.max_depth = 4;
    o.min_micros = 1000;
    o.order_by = "micros";
  }
  const double cpu0 = CpuSeconds();
  auto t0 = std::chrono::steady_clock::now();
  absl::StatusOr<tfprof::ResultTree> tree = views.Query(*view, o);
  const double cold = Seconds(t0);
  const double cold_cpu = CpuSeconds() - cpu0;
  if (!tree.ok()) return 1;
  const size_t shown = tree->nodes.size();
  tree = absl::InternalError("");
  t0 = std::chrono::steady_clock::now();
  tree = views.Query(*view, o);
  const double warm = Seconds(t0);
  std::printf("load %.3f s, %s query cold %.3f s (%.2fx), repeated %.3f s "
              "(%.3fx), %zu nodes shown, peak RSS %.0f MB; CPU: load %.3f s, "
              "cold query %.3f s\n",
              v[0], view_name.c_str(), cold, cold / v[0], warm, warm / v[0],
              shown, PeakRssMb(), cpu0, cold_cpu);
  return 0;
}

int main(int argc, char** argv) {
  // Measured as the tfprof program runs (huge pages where the machine
  // offers them on request).
  tfprof::cli::MaybeReexecWithHugePages(argv);
  if (argc == 3 && std::string(argv[1]) == "--trace") return TraceMain(argv[2]);
  if (argc == 3 && std::string(argv[1]) == "--web") return WebMain(argv[2]);
  if ((argc == 4 || argc == 5) && std::string(argv[1]) == "--query") {
    return QueryMain(argv[2], argv[3],
                     argc == 5 && std::string(argv[4]) == "filtered");
  }
  if (argc == 2 && std::string(argv[1]) == "--json_kernel") {
    std::printf("%s\n", tfprof::JsonKernelName().c_str());
    return 0;
  }
  if (argc != 2) {
    std::fprintf(
        stderr,
        "usage: bench PROFILE | bench --trace TRACE | bench --web PROFILE\n");
    return 2;
  }
  const std::string path = argv[1];
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    std::fprintf(stderr, "bench: %s: %s\n", path.c_str(), std::strerror(errno));
    return 1;
  }
  const double mb = st.st_size / 1e6;

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

  // 2. Our load, then the queries, in a fresh process.
  double r[16] = {0};
  const bool loaded = InChild(
      [&](double* v) {
        tfprof::InputPaths in;
        in.profile_path = path;
        std::unique_ptr<tfprof::LoadedProfile> loaded = TimedLoad(in, v);
        if (loaded == nullptr) return false;
        tfprof::Views views(&loaded->model, nullptr);
        auto t0 = std::chrono::steady_clock::now();
        const tfprof::ViewKind kinds[4] = {
            tfprof::ViewKind::kScope, tfprof::ViewKind::kGraph,
            tfprof::ViewKind::kOp, tfprof::ViewKind::kCode};
        for (int k = 0; k < 4; ++k) {
          tfprof::Options o;
          t0 = std::chrono::steady_clock::now();
          (void)views.Query(kinds[k], o);
          v[3 + k] = Seconds(t0);
          t0 = std::chrono::steady_clock::now();
          (void)views.Query(kinds[k], o);
          v[7 + k] = Seconds(t0);
          o.max_depth = 4;
          o.min_micros = 1000;
          o.order_by = "micros";
          t0 = std::chrono::steady_clock::now();
          (void)views.Query(kinds[k], o);
          v[11 + k] = Seconds(t0);
        }
        v[15] = PeakRssMb();
        return true;
      },
      r, 16);
  if (!loaded) return 1;
  const double load = r[0];
  char parse_s[32] = "n/a", ratio[32] = "n/a";
  if (parsed) {
    std::snprintf(parse_s, sizeof(parse_s), "%.3f s", parse[0]);
    std::snprintf(ratio, sizeof(ratio), "%.2f", load / parse[0]);
  }
  std::printf(
      "| %.1f MB | %.0f | %.3f s | %s | %s | %.2f | %.2f | "
      "%.3f/%.3f/%.3f/%.3f s | %.3f/%.3f/%.3f/%.3f s | %.3f/%.3f/%.3f/%.3f s "
      "|\n",
      mb, r[2], load, parse_s, ratio, r[1] / mb, r[15] / mb, r[3], r[4], r[5],
      r[6], r[7], r[8], r[9], r[10], r[11], r[12], r[13], r[14]);
  return 0;
}
