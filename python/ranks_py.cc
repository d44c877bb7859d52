// Several ranks from Python (g3doc/ranks.md): one rank's summary as bytes
// (made where its trace is, e.g. on a Dask worker) and the job's analysis
// of many such summaries, the `ranks -output json` document.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "profiler/load/loader.h"
#include "profiler/load/trace_files.h"
#include "profiler/render/render_ranks.h"
#include "profiler/session/rank_loader.h"
#include "profiler/views/rank_codec.h"
#include "python/binding.h"

namespace py = pybind11;

namespace tfprof {
namespace python {
namespace {

// The summary of the rank whose trace files `trace_path` names (a comma
// list, directory or glob, as --trace_path), as bytes.
py::bytes RankSummary(const std::string& trace_path) {
  std::string bytes;
  absl::Status status = absl::OkStatus();
  {
    py::gil_scoped_release release;
    absl::StatusOr<std::vector<std::string>> files =
        ExpandTracePath(trace_path);
    if (!files.ok()) {
      status = files.status();
    } else if (files->empty()) {
      status = absl::InvalidArgumentError(
          absl::StrCat(trace_path, ": no trace files"));
    } else {
      RankFiles one;
      one.files = *files;
      const TraceRankTag tag = PeekTraceRank(files->front());
      one.rank = tag.rank;
      one.host = tag.host;
      absl::StatusOr<std::vector<RankProfile>> p = ProfileRankFiles({one}, 1);
      if (p.ok()) {
        bytes = EncodeRankProfile(p->front());
      } else {
        status = p.status();
      }
    }
  }
  ThrowIfError(status);
  return py::bytes(bytes);
}

// The job's analysis of rank summaries (RankSummary's bytes), as JSON.
std::string AnalyzeRankSummaries(const std::vector<py::bytes>& summaries) {
  std::vector<std::string> raw;
  for (const py::bytes& b : summaries) raw.push_back(std::string(b));
  std::vector<RankProfile> profiles;
  absl::Status status = absl::OkStatus();
  std::string out;
  {
    py::gil_scoped_release release;
    for (size_t i = 0; i < raw.size() && status.ok(); ++i) {
      absl::StatusOr<RankProfile> p =
          DecodeRankProfile(raw[i], absl::StrCat("rank summary ", i));
      if (p.ok()) {
        profiles.push_back(std::move(*p));
      } else {
        status = p.status();
      }
    }
    if (status.ok()) out = RenderRanksJson(AnalyzeRanks(std::move(profiles)));
  }
  ThrowIfError(status);
  return out;
}

}  // namespace

void DefineRanks(py::module_& m) {
  m.def("rank_summary", &RankSummary, py::arg("trace_path"),
        "One rank's summary (steps, collectives, the host ops between "
        "them) as bytes, from its trace files.");
  m.def("analyze_ranks", &AnalyzeRankSummaries, py::arg("summaries"),
        "The job's analysis of rank summaries: the ranks -output json "
        "document.");
}

}  // namespace python
}  // namespace tfprof
