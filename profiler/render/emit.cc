#include "profiler/render/emit.h"

#include "absl/strings/str_cat.h"
#include "profiler/base/file.h"
#include "profiler/render/pprof.h"
#include "profiler/render/render_json_csv.h"
#include "profiler/render/render_proto.h"
#include "profiler/render/render_text.h"
#include "profiler/render/view_timeline.h"

namespace tfprof {
namespace {

absl::Status WriteTimeline(const std::string& path, const Timeline& timeline,
                           const EmitTarget& target) {
  absl::Status s = WriteFileAtomic(path, timeline.json, target.protected_paths);
  if (!s.ok()) return s;
  for (const std::string& m : timeline.messages) *target.out << m << "\n";
  if (timeline.json.size() > kLargeTraceBytes) {
    *target.err << "warning: " << path
                << " is over 200MB; browser trace viewers may fail to open "
                   "it. Narrow the query, e.g. -min_micros 1000 or "
                   "-account_type_regexes .*gpu:0.*\n";
  }
  *target.out << "Timeline written to " << path
              << "; open it in chrome://tracing or ui.perfetto.dev\n";
  return absl::OkStatus();
}

absl::StatusOr<ResultTree> EmitTimelines(Views* views, const Model& model,
                                         ViewKind view, const Options& opts,
                                         const EmitTarget& target) {
  const std::string& outfile = opts.output_options.at("outfile");
  if (view == ViewKind::kOp) {
    return absl::InvalidArgumentError(
        "the op view has no timeline; use graph, scope or code");
  }
  if (view != ViewKind::kGraph) {
    absl::StatusOr<ResultTree> result = views->Query(view, opts);
    if (!result.ok()) return result.status();
    absl::Status s = WriteTimeline(absl::StrCat(outfile, "_", opts.step),
                                   TreeTimeline(*result), target);
    if (!s.ok()) return s;
    return result;
  }
  // The graph timeline shows one step; -step -1 writes one file per step.
  std::vector<int64_t> steps;
  if (opts.step >= 0) {
    steps.push_back(opts.step);
  } else {
    steps.assign(model.steps().begin(), model.steps().end());
  }
  if (steps.empty()) {
    return absl::FailedPreconditionError(
        "the graph timeline needs run statistics, and this profile has no "
        "steps");
  }
  ResultTree last;
  for (int64_t step : steps) {
    Options one = opts;
    one.step = step;
    absl::StatusOr<ResultTree> result = views->Query(view, one);
    if (!result.ok()) return result.status();
    absl::Status s = WriteTimeline(absl::StrCat(outfile, "_", step),
                                   GraphTimeline(*result, model, step), target);
    if (!s.ok()) return s;
    last = std::move(*result);
  }
  return last;
}

}  // namespace

absl::StatusOr<ResultTree> QueryAndEmit(Views* views, const Model& model,
                                        ViewKind view, const Options& opts,
                                        const EmitTarget& target) {
  if (opts.output_type == "timeline") {
    return EmitTimelines(views, model, view, opts, target);
  }
  if (opts.output_type == "pprof" && view != ViewKind::kCode &&
      view != ViewKind::kScope) {
    return absl::InvalidArgumentError(
        "pprof output needs the code view (Python call stacks) or the scope "
        "view (name scopes)");
  }
  absl::StatusOr<ResultTree> result = views->Query(view, opts);
  if (!result.ok()) return result.status();
  for (const std::string& note : result->notes) *target.err << note << "\n";
  const std::string& type = opts.output_type;
  if (type == "none") return result;
  if (type == "pprof") {
    absl::StatusOr<perftools::profiles::Profile> profile = BuildPprof(*result);
    if (!profile.ok()) return profile.status();
    absl::StatusOr<std::string> gz = Gzip(profile->SerializeAsString());
    if (!gz.ok()) return gz.status();
    const std::string& path = opts.output_options.at("outfile");
    absl::Status s = WriteFileAtomic(path, *gz, target.protected_paths);
    if (!s.ok()) return s;
    *target.out << "pprof profile written to " << path << " ("
                << profile->sample_size()
                << " samples); view it with: pprof -top " << path
                << "  or  pprof -png --nodecount=100 --sample_index=1 " << path
                << "\n";
    return result;
  }
  if (type == "json" || type == "proto" || type == "pbtxt" || type == "csv") {
    const std::string data = type == "json" ? RenderJson(*result)
                             : type == "csv"
                                 ? RenderCsv(*result)
                                 : RenderProto(*result, type == "pbtxt");
    auto outfile = opts.output_options.find("outfile");
    if (outfile == opts.output_options.end()) {
      *target.out << data;
      target.out->flush();
      return result;
    }
    absl::Status s =
        WriteFileAtomic(outfile->second, data, target.protected_paths);
    if (!s.ok()) return s;
    return result;
  }
  const std::string report = RenderReport(*result, model);
  if (type == "file") {
    absl::Status s = WriteFileAtomic(opts.output_options.at("outfile"), report,
                                     target.protected_paths);
    if (!s.ok()) return s;
    return result;
  }
  *target.out << report;
  target.out->flush();
  return result;
}

}  // namespace tfprof
