#include "profiler/render/emit.h"

#include <map>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "profiler/base/file.h"
#include "profiler/base/gzip.h"
#include "profiler/render/pprof.h"
#include "profiler/render/render_json_csv.h"
#include "profiler/render/render_proto.h"
#include "profiler/render/render_text.h"
#include "profiler/render/trace_timeline.h"
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

// A graph view's timeline of one step: for a trace, the trace's own events
// of the displayed nodes at their recorded times; else tfprof's layout.
absl::StatusOr<Timeline> GraphOrTraceTimeline(const ResultTree& result,
                                              const Model& model,
                                              int64_t step) {
  if (!HasTraceEvents(model)) return GraphTimeline(result, model, step);
  std::set<std::string> nodes;
  for (const ResultNode& n : result.nodes) {
    if (n.graph_node != nullptr) nodes.insert(n.graph_node->name);
  }
  absl::StatusOr<std::string> json = TraceEventsTimeline(model, step, &nodes);
  if (!json.ok()) return json.status();
  Timeline t;
  t.json = std::move(*json);
  return t;
}

absl::Status WriteOrPrint(const std::string& data, const Options& opts,
                          const EmitTarget& target) {
  auto outfile = opts.output_options.find("outfile");
  if (outfile == opts.output_options.end()) {
    *target.out << data;
    target.out->flush();
    return absl::OkStatus();
  }
  return WriteFileAtomic(outfile->second, data, target.protected_paths);
}

absl::Status EmitReport(const ResultTree& result, const Model& model,
                        const Options& opts, const EmitTarget& target) {
  return WriteOrPrint(RenderReport(result, model), opts, target);
}

absl::Status EmitNothing(const ResultTree&, const Model&, const Options&,
                         const EmitTarget&) {
  return absl::OkStatus();
}

absl::Status EmitJson(const ResultTree& result, const Model&,
                      const Options& opts, const EmitTarget& target) {
  return WriteOrPrint(RenderJson(result), opts, target);
}

absl::Status EmitCsv(const ResultTree& result, const Model&,
                     const Options& opts, const EmitTarget& target) {
  return WriteOrPrint(RenderCsv(result), opts, target);
}

absl::Status EmitProto(const ResultTree& result, const Model&,
                       const Options& opts, const EmitTarget& target) {
  return WriteOrPrint(
      RenderProto(result, opts.output_type == OutputKind::kPbtxt), opts,
      target);
}

absl::Status EmitPprof(const ResultTree& result, const Model&,
                       const Options& opts, const EmitTarget& target) {
  absl::StatusOr<perftools::profiles::Profile> profile = BuildPprof(result);
  if (!profile.ok()) return profile.status();
  return WritePprofFile(*profile, opts.output_options.at("outfile"), target);
}

}  // namespace

absl::Status WritePprofFile(const perftools::profiles::Profile& profile,
                            const std::string& path, const EmitTarget& target) {
  absl::StatusOr<std::string> gz = Gzip(profile.SerializeAsString());
  if (!gz.ok()) return gz.status();
  absl::Status s = WriteFileAtomic(path, *gz, target.protected_paths);
  if (!s.ok()) return s;
  *target.out << "pprof profile written to " << path << " ("
              << profile.sample_size() << " samples); view it with: pprof -top "
              << path << "  or  pprof -png --nodecount=100 --sample_index=1 "
              << path << "\n";
  return absl::OkStatus();
}

namespace {

using Emitter = absl::Status (*)(const ResultTree&, const Model&,
                                 const Options&, const EmitTarget&);

// How each -output type of OutputTypeTable() is written, except timelines
// (EmitTimelines queries once per step).
Emitter EmitterFor(OutputKind type) {
  switch (type) {
    case OutputKind::kStdout:
    case OutputKind::kFile:
      return EmitReport;
    case OutputKind::kNone:
      return EmitNothing;
    case OutputKind::kJson:
      return EmitJson;
    case OutputKind::kCsv:
      return EmitCsv;
    case OutputKind::kPbtxt:
    case OutputKind::kProto:
      return EmitProto;
    case OutputKind::kPprof:
      return EmitPprof;
    case OutputKind::kTimeline:
      break;
  }
  return nullptr;
}

}  // namespace

absl::Status CheckEmittable(ViewKind view, const Options& opts) {
  if (opts.output_type == OutputKind::kTimeline) {
    if (IsFlatView(view)) {
      return absl::InvalidArgumentError(
          absl::StrCat("the ", ViewName(view),
                       " view has no timeline; use graph, scope or code"));
    }
    return absl::OkStatus();
  }
  if (opts.output_type == OutputKind::kPprof && view != ViewKind::kCode &&
      view != ViewKind::kScope) {
    return absl::InvalidArgumentError(
        "pprof output needs the code view (Python call stacks) or the scope "
        "view (name scopes)");
  }
  return absl::OkStatus();
}

absl::Status EmitResult(const ResultTree& result, const Model& model,
                        const EmitTarget& target) {
  const Options& opts = result.options;
  absl::Status ok = CheckEmittable(result.view, opts);
  if (!ok.ok()) return ok;
  for (const std::string& note : result.notes) *target.err << note << "\n";
  const std::string& outfile = opts.output_type == OutputKind::kTimeline
                                   ? opts.output_options.at("outfile")
                                   : std::string();
  if (opts.output_type != OutputKind::kTimeline) {
    return EmitterFor(opts.output_type)(result, model, opts, target);
  }
  // A timeline: the graph view's of its step, else the tree's.
  if (result.view != ViewKind::kGraph) {
    return WriteTimeline(absl::StrCat(outfile, "_", opts.step),
                         TreeTimeline(result), target);
  }
  absl::StatusOr<Timeline> timeline =
      GraphOrTraceTimeline(result, model, opts.step);
  if (!timeline.ok()) return timeline.status();
  return WriteTimeline(absl::StrCat(outfile, "_", opts.step), *timeline,
                       target);
}

}  // namespace tfprof
