#include "profiler/web/api.h"

#include <algorithm>
#include <limits>
#include <optional>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "profiler/advise/advisor.h"
#include "profiler/base/json_writer.h"
#include "profiler/base/large_stack.h"
#include "profiler/render/render_diff.h"
#include "profiler/render/render_json_csv.h"
#include "profiler/render/render_memory.h"
#include "profiler/render/render_ranks.h"
#include "profiler/render/render_steps.h"
#include "profiler/render/step_timeline.h"
#include "profiler/render/summary.h"
#include "profiler/render/trace_timeline.h"
#include "profiler/render/view_timeline.h"
#include "profiler/views/diff.h"
#include "profiler/views/flops.h"
#include "profiler/views/kernels.h"
#include "profiler/views/steps.h"

namespace tfprof {
namespace {

// Results kept for expanding nodes and paging without running the query
// again: at most this many, and the older ones go while they hold more
// than kCachedNodes result nodes together (a result costs about 330 bytes a
// node, so a large profile's results are not kept eight times over).
constexpr size_t kCachedQueries = 8;
constexpr size_t kCachedNodes = 4'000'000;

WebReply JsonReply(std::string body) {
  return WebReply{200, "application/json", std::move(body)};
}

WebReply Error(int status, const std::string& message) {
  return WebReply{status, "application/json",
                  absl::StrCat("{\"error\": ", JsonQuote(message), "}\n")};
}

WebReply ErrorFor(const absl::Status& s) {
  const bool user = s.code() == absl::StatusCode::kInvalidArgument ||
                    s.code() == absl::StatusCode::kFailedPrecondition ||
                    s.code() == absl::StatusCode::kNotFound;
  return Error(user ? 400 : 500, std::string(s.message()));
}

}  // namespace

std::string ShellQuote(const std::string& w) {
  const bool plain =
      !w.empty() && w.find_first_not_of(
                        "abcdefghijklmnopqrstuvwxyz"
                        "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
                        "0123456789_./:=,@%+-") == std::string::npos;
  if (plain) return w;
  std::string out = "'";
  for (char c : w) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

namespace {

// The top changes the diff page lists (as `diff top`'s default).
constexpr size_t kTopChanges = 10;

// What a view request asks besides options.
struct ViewRequest {
  ViewKind view = ViewKind::kScope;
  bool steps = false;  // diff only: the steps table
  bool top = false;    // diff only: the top changes across views
  Options opts;
  JsonLevels cut;
  bool whole = false;  // levels=all from the root: -output json exactly
  // With levels=all: leave out subtrees whose total is below this share of
  // the root's (in -order_by's attribute, else micros): a flame graph's
  // data for a large profile.
  double min_share = 0;
  DiffOptions diff;
  std::vector<std::string> diff_words;  // -map/-alpha/... for the command
};

absl::Status ParseCount(const std::string& name, const std::string& value,
                        size_t max, size_t* out) {
  uint64_t v = 0;
  if (!absl::SimpleAtoi(value, &v) || v > max) {
    return absl::InvalidArgumentError(
        absl::StrCat("parameter ", name, ": want a whole number up to ", max,
                     ", not '", value.substr(0, 40), "'"));
  }
  *out = static_cast<size_t>(v);
  return absl::OkStatus();
}

// The parameters only a diff takes (SetDiffOption), kept for the command.
absl::Status ParseDiffParam(const std::string& name, const std::string& value,
                            ViewRequest* r) {
  absl::Status s = SetDiffOption(name, value, "parameter ", &r->diff);
  if (!s.ok()) return s;
  r->diff_words.push_back("-" + name);
  r->diff_words.push_back(value);
  return absl::OkStatus();
}

// Parameters that are not view options.
std::optional<absl::Status> ParseRequestParam(const std::string& name,
                                              const std::string& value,
                                              bool diff, ViewRequest* r) {
  if (name == "view") {
    if (diff && (value == "steps" || value == "top")) {
      (value == "steps" ? r->steps : r->top) = true;
      return absl::OkStatus();
    }
    std::optional<ViewKind> v = ViewNamed(value);
    if (!v.has_value()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "parameter view: unknown view '", value.substr(0, 40),
          "' (scope, graph, op, code, kernel", diff ? ", steps, top)" : ")"));
    }
    r->view = *v;
    return absl::OkStatus();
  }
  if (name == "node") {
    return ParseCount(name, value, SIZE_MAX / 2, &r->cut.node);
  }
  if (name == "offset") {
    return ParseCount(name, value, SIZE_MAX / 2, &r->cut.offset);
  }
  if (name == "limit") {
    return ParseCount(name, value, kMaxPageRows, &r->cut.limit);
  }
  if (name == "levels") {
    if (value == "all") {
      r->whole = true;
      return absl::OkStatus();
    }
    size_t levels = 0;
    absl::Status s = ParseCount(name, value, kMaxLevels, &levels);
    r->cut.levels = static_cast<int>(levels);
    return s;
  }
  if (name == "min_share") {
    if (!absl::SimpleAtod(value, &r->min_share) || !(r->min_share >= 0) ||
        r->min_share >= 1) {
      return absl::InvalidArgumentError(
          "parameter min_share: want a fraction in [0, 1)");
    }
    return absl::OkStatus();
  }
  if (diff && (name == "map" || name == "alpha" || name == "significant_only" ||
               name == "min_change")) {
    return ParseDiffParam(name, value, r);
  }
  return std::nullopt;
}

absl::StatusOr<ViewRequest> ParseViewRequest(const WebParams& params,
                                             const Options& defaults,
                                             bool diff) {
  if (params.size() > kMaxParams) {
    return absl::InvalidArgumentError(
        absl::StrCat("too many parameters (at most ", kMaxParams, ")"));
  }
  ViewRequest r;
  r.opts = defaults;
  r.cut.limit = kMaxPageRows;
  for (const auto& [name, value] : params) {
    if (name.size() + value.size() > kMaxParamBytes) {
      return absl::InvalidArgumentError(
          absl::StrCat("parameter ", name.substr(0, 40),
                       " is too long (at most ", kMaxParamBytes, " bytes)"));
    }
    if (std::optional<absl::Status> s =
            ParseRequestParam(name, value, diff, &r)) {
      if (!s->ok()) return *s;
      continue;
    }
    if (name == "output" || FindOption(name) == nullptr) {
      const std::string hint = SuggestOption(name);
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown parameter '", name.substr(0, 40), "'",
          hint.empty() ? "" : absl::StrCat(" (did you mean ", hint, "?)")));
    }
    absl::Status s = SetOption(name, value, &r.opts);
    if (!s.ok()) return s;
  }
  absl::Status valid = ValidateOptions(r.opts);
  if (!valid.ok()) return valid;
  if (r.whole && (r.cut.node != 0 || r.cut.offset != 0)) {
    return absl::InvalidArgumentError(
        "levels=all returns the whole tree: drop node and offset");
  }
  if (r.min_share > 0 && !r.whole) {
    return absl::InvalidArgumentError("min_share needs levels=all");
  }
  return r;
}

std::string QueryKey(ViewKind view, const Options& opts) {
  std::string key = ViewName(view);
  for (const auto& [name, value] : OptionValues(opts)) {
    absl::StrAppend(&key, "\n", name, "=", value);
  }
  return key;
}

std::string JsonStrings(const std::vector<std::string>& v) {
  std::vector<std::string> quoted;
  quoted.reserve(v.size());
  for (const std::string& s : v) quoted.push_back(JsonQuote(s));
  return absl::StrCat("[", absl::StrJoin(quoted, ", "), "]");
}

// Whether any node carries float ops.
bool HasFlops(const Model& model) {
  for (const auto& node : model.nodes()) {
    if (node->float_ops > 0) return true;
  }
  return false;
}

std::string OptionsJson(const Options& current) {
  std::vector<std::pair<std::string, std::string>> values =
      OptionValues(current);
  std::vector<std::string> rows;
  for (const OptionSpec& o : OptionTable()) {
    if (o.name == "output") continue;
    std::string value;
    for (const auto& [name, v] : values) {
      if (name == o.name) value = v;
    }
    rows.push_back(absl::StrCat("{\"name\": ", JsonQuote(o.name),
                                ", \"default\": ", JsonQuote(o.default_text),
                                ", \"value\": ", JsonQuote(value),
                                ", \"help\": ", JsonQuote(o.help), "}"));
  }
  return absl::StrCat("[", absl::StrJoin(rows, ",\n  "), "]");
}

}  // namespace

std::string EquivalentCommand(const std::string& input_flags,
                              const std::string& command, const Options& opts) {
  const std::vector<std::pair<std::string, std::string>> defaults =
      OptionValues(Options());
  std::string out = absl::StrCat("tfprof ", input_flags, " ", command);
  size_t i = 0;
  for (const auto& [name, value] : OptionValues(opts)) {
    const bool same = i < defaults.size() && defaults[i].second == value;
    ++i;
    if (same || name == "output") continue;
    absl::StrAppend(&out, " -", name, " ", ShellQuote(value));
  }
  return out;
}

WebApi::WebApi(Session* session, WebInputFlags flags, Options defaults)
    : session_(session),
      flags_(std::move(flags)),
      defaults_(std::move(defaults)),
      info_json_(InfoJson()) {}

const std::vector<std::pair<std::string, std::string>>& WebApi::Endpoints() {
  static const auto* endpoints =
      new std::vector<std::pair<std::string, std::string>>{
          {"/api/info",
           "the inputs, steps, views, options (with defaults and help) and "
           "whether a base run, timelines, kernels and float ops are there"},
          {"/api/view",
           "a view's result tree: view=scope|graph|op|code|kernel, any "
           "option as name=value; node=ID, levels=N (or all), offset, limit "
           "page through it"},
          {"/api/diff",
           "the view compared with the base run: as /api/view plus map, "
           "alpha, min_change, significant_only; view=steps compares the "
           "steps, view=top lists the top changes across views"},
          {"/api/steps",
           "the step table (as steps -output json); step=N: that step's row "
           "(as steps -step N)"},
          {"/api/summary", "the summary (as summary -output json)"},
          {"/api/advise", "the advisor's reports: checker=NAME|all"},
          {"/api/memory",
           "memory in use per allocator: the peak, the largest allocations "
           "live then (as memory -top 50) and the bytes in use over time"},
          {"/api/timeline",
           "one step's Chrome trace (step=N; a trace's steps A to B on one "
           "clock: steps=A-B): the trace's own events, the RunMetadata's, or "
           "the graph view's timeline"},
          {"/api/ranks",
           "the ranks as one job (as ranks -output json): clock offsets, "
           "per rank and step wall, communication and wait, stragglers"},
          {"/api/ranks_timeline",
           "one step of every rank on the aligned clock (step=N; as ranks "
           "-output timeline -step N)"},
      };
  return *endpoints;
}

WebReply WebApi::Get(const std::string& path, const WebParams& params) {
  if (path == "/api/view") return View(params);
  if (path == "/api/diff") return Diff(params);
  if (path == "/api/advise") return Advise(params);
  if (path == "/api/timeline") return Timeline(params);
  if (path == "/api/ranks_timeline") return RanksTimeline(params);
  // The rest take no parameters: one given is an error, not ignored (a
  // step=N asked of the whole steps table would look answered).
  for (const char* bare :
       {"/api/info", "/api/memory", "/api/summary", "/api/ranks"}) {
    if (path != bare || params.empty()) continue;
    return Error(
        400, absl::StrCat("unknown parameter '", params[0].first.substr(0, 40),
                          "' (", path.substr(5), " takes none)"));
  }
  if (path == "/api/info") return JsonReply(info_json_);
  if (path == "/api/memory") return Memory();
  if (path == "/api/steps") return Steps(params);
  if (path == "/api/summary") return Summary();
  if (path == "/api/ranks") return Ranks();
  std::vector<std::string> paths;
  for (const auto& e : Endpoints()) paths.push_back(e.first);
  return Error(404, absl::StrCat("no such endpoint; endpoints: ",
                                 absl::StrJoin(paths, ", ")));
}

std::string WebApi::InfoJson() const {
  const Model& model = session_->model();
  std::vector<std::string> steps;
  for (int64_t s : model.steps()) steps.push_back(absl::StrCat(s));
  const bool timeline = !session_->profile().run_meta_files.empty() ||
                        HasTraceEvents(model) || !model.steps().empty();
  std::vector<std::string> paths;
  for (const auto& e : Endpoints()) paths.push_back(e.first);
  // The ranks --trace_path names (an input without traces is one run).
  const size_t ranks = std::max<size_t>(1, session_->RankGroups().size());
  return absl::StrCat(
      "{\"input_flags\": ", JsonQuote(flags_.current), ",\n \"ranks\": ", ranks,
      ",\n \"base_input_flags\": ",
      session_->base() != nullptr ? JsonQuote(flags_.base) : "null",
      ",\n \"steps\": [", absl::StrJoin(steps, ", "),
      "],\n \"has_code\": ", model.has_code_traces() ? "true" : "false",
      ",\n \"has_timeline\": ", timeline ? "true" : "false",
      ",\n \"has_kernels\": ", HasKernels(model) ? "true" : "false",
      ",\n \"has_memory\": ",
      model.activity().memory().empty() ? "false" : "true",
      ",\n \"has_flops\": ", HasFlops(model) ? "true" : "false",
      ",\n \"views\": [\"scope\", \"graph\", \"op\", \"code\", \"kernel\"]",
      ",\n \"order_by\": ", JsonStrings(OrderByValues()),
      ",\n \"kernel_order_by\": ", JsonStrings(KernelOrderByValues()),
      ",\n \"select\": ", JsonStrings(SelectValues()),
      ",\n \"endpoints\": ", JsonStrings(paths),
      ",\n \"options\": ", OptionsJson(defaults_), "}\n");
}

absl::StatusOr<std::shared_ptr<const ResultTree>> WebApi::Query(
    ViewKind view, const Options& opts) {
  const std::string key = QueryKey(view, opts);
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = cache_.begin(); it != cache_.end(); ++it) {
      if (it->first != key) continue;
      cache_.splice(cache_.begin(), cache_, it);
      return cache_.front().second;
    }
  }
  // Run without the lock: other requests go on meanwhile (the session
  // gives each query its own views). Two requests for the same new query
  // both run it; the cache keeps one.
  absl::StatusOr<ResultTree> r = session_->Query(view, opts);
  if (!r.ok()) return r.status();
  auto tree = std::make_shared<const ResultTree>(std::move(*r));
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = cache_.begin(); it != cache_.end(); ++it) {
    if (it->first == key) {
      cache_.erase(it);
      break;
    }
  }
  cache_.emplace_front(key, tree);
  size_t nodes = 0;
  for (const auto& entry : cache_) nodes += entry.second->nodes.size();
  while (cache_.size() > 1 &&
         (cache_.size() > kCachedQueries || nodes > kCachedNodes)) {
    nodes -= cache_.back().second->nodes.size();
    cache_.pop_back();
  }
  return tree;
}

WebReply WebApi::View(const WebParams& params) {
  absl::StatusOr<ViewRequest> req = ParseViewRequest(params, defaults_, false);
  if (!req.ok()) return ErrorFor(req.status());
  absl::StatusOr<std::shared_ptr<const ResultTree>> tree =
      Query(req->view, req->opts);
  if (!tree.ok()) return ErrorFor(tree.status());
  const ResultTree& r = **tree;
  if (req->whole && req->min_share == 0) {
    std::string body;
    RunWithLargeStack([&] { body = RenderJson(r); });
    return JsonReply(std::move(body));
  }
  std::string node;
  if (req->whole) {
    JsonLevels cut;
    cut.levels = 1 << 30;
    const Attr attr =
        IsCount(r.options.order_by) ? r.options.order_by : Attr::kMicros;
    const double min =
        req->min_share * static_cast<double>(Value(r.root().total, attr));
    cut.keep = [attr, min](const ResultNode& n) {
      return static_cast<double>(Value(n.total, attr)) >= min;
    };
    RunWithLargeStack([&] { node = RenderJsonLevels(r, cut); });
  } else if (req->cut.node < r.nodes.size()) {
    node = RenderJsonLevels(r, req->cut);
  }
  if (node.empty()) {
    return Error(404, absl::StrCat("no node ", req->cut.node, " in this view (",
                                   r.nodes.size(), " nodes)"));
  }
  return JsonReply(absl::StrCat(
      "{\"view\": \"", ViewName(r.view), "\", \"step\": ", r.options.step,
      ", \"select\": ", JsonStrings(r.options.select.names()),
      ",\n\"command\": ",
      JsonQuote(EquivalentCommand(flags_.current, ViewName(r.view), r.options)),
      ",\n\"notes\": ", JsonStrings(r.notes), ",\n\"node\": ", node, "}\n"));
}

WebReply WebApi::Diff(const WebParams& params) {
  if (session_->base() == nullptr) {
    return Error(400,
                 "no base run: start tfprof with --base_profile_path (or "
                 "another --base_ input flag) to compare");
  }
  absl::StatusOr<ViewRequest> req = ParseViewRequest(params, defaults_, true);
  if (!req.ok()) return ErrorFor(req.status());
  if (req->steps) {
    absl::StatusOr<StepsDiff> d = session_->DiffStepTables(req->diff);
    if (!d.ok()) return ErrorFor(d.status());
    return JsonReply(RenderStepsDiff(*d, "json"));
  }
  if (req->top) {
    absl::StatusOr<DiffTop> top =
        session_->DiffTopChanges(req->opts, req->diff, kTopChanges);
    if (!top.ok()) return ErrorFor(top.status());
    return JsonReply(RenderDiffTop(*top, true));
  }
  absl::StatusOr<DiffTree> tree =
      session_->Diff(req->view, req->opts, req->diff);
  if (!tree.ok()) return ErrorFor(tree.status());
  std::string words = absl::StrCat("diff ", ViewName(req->view));
  for (const std::string& w : req->diff_words) {
    absl::StrAppend(&words, " ", ShellQuote(w));
  }
  std::string body;
  RunWithLargeStack([&] { body = RenderDiffJson(*tree); });
  return JsonReply(absl::StrCat(
      "{\"command\": ",
      JsonQuote(EquivalentCommand(
          absl::StrCat(flags_.current, " ", flags_.base), words, req->opts)),
      ",\n\"notes\": ", JsonStrings(tree->notes), ",\n\"diff\": ", body,
      "}\n"));
}

WebReply WebApi::Steps(const WebParams& params) {
  // step=N: that step's row, as `steps -step N -output json` prints it.
  int64_t step = -1;
  for (const auto& [name, value] : params) {
    if (name != "step" || !absl::SimpleAtoi(value, &step)) {
      return Error(400, "steps takes step=N (a step of the profile; -1: all)");
    }
  }
  std::call_once(steps_once_, [this] {
    steps_ = session_->Steps(PeakOverrideOf(defaults_));
    steps_json_ = RenderStepsJson(steps_);
  });
  if (step < 0) return JsonReply(steps_json_);
  absl::StatusOr<StepTable> row = Session::StepOf(steps_, step);
  if (!row.ok()) return ErrorFor(row.status());
  return JsonReply(RenderStepsJson(*row));
}

WebReply WebApi::Memory() {
  std::call_once(memory_once_, [this] {
    memory_json_ = RenderMemoryJson(session_->model(), session_->MemoryPeaks(),
                                    kMemoryTop, kMemoryPoints);
  });
  return JsonReply(memory_json_);
}

WebReply WebApi::Summary() {
  std::call_once(summary_once_, [this] {
    summary_json_ =
        RenderSummaryJson(session_->Summary(PeakOverrideOf(defaults_)));
  });
  return JsonReply(summary_json_);
}

WebReply WebApi::Advise(const WebParams& params) {
  tfpb::AdvisorOptionsProto options;
  for (const auto& [name, value] : params) {
    if (name != "checker") {
      return Error(400, absl::StrCat("unknown parameter '", name.substr(0, 40),
                                     "' (advise takes checker=NAME|all)"));
    }
    if (value == "all") {
      options.MergeFrom(AllAdvisorOptions());
    } else if (FindChecker(value) != nullptr) {
      (*options.mutable_checkers())[value];
    } else {
      return Error(400, absl::StrCat("no checker '", value.substr(0, 40), "'"));
    }
  }
  if (params.empty()) {
    options = DefaultAdvisorOptions(session_->model().source());
  }
  std::vector<std::string> notes;
  absl::StatusOr<tfpb::AdviceProto> advice =
      session_->Advise(options, &notes, PeakOverrideOf(defaults_));
  if (!advice.ok()) return ErrorFor(advice.status());
  std::vector<std::string> rows;
  for (const Checker* c : Checkers()) {
    auto it = advice->checkers().find(c->name());
    if (it == advice->checkers().end()) continue;
    rows.push_back(absl::StrCat(
        "{\"name\": ", JsonQuote(c->name()),
        ", \"help\": ", JsonQuote(c->help()), ", \"reports\": ",
        JsonStrings({it->second.reports().begin(), it->second.reports().end()}),
        "}"));
  }
  return JsonReply(absl::StrCat("{\"checkers\": [", absl::StrJoin(rows, ",\n "),
                                "],\n\"notes\": ", JsonStrings(notes), "}\n"));
}

WebReply WebApi::Timeline(const WebParams& params) {
  // step=N, or steps=A-B: the steps A..B on one clock.
  StepTimelineOptions options;
  int64_t step = -1;
  for (const auto& [name, value] : params) {
    const bool ok = name == "step"
                        ? absl::SimpleAtoi(value, &step) && step >= 0
                        : name == "steps" && absl::StrContains(value, '-') &&
                              ParseStepRange(value, &step, &options.last_step);
    if (!ok) {
      return Error(400,
                   "timeline takes step=N (a step of the profile) or "
                   "steps=A-B (the steps A to B, A <= B)");
    }
  }
  absl::StatusOr<Session::SourcedTimeline> t =
      session_->StepTimelineOf(step, options, defaults_);
  if (!t.ok()) return ErrorFor(t.status());
  return JsonReply(absl::StrCat("{\"step\": ", t->timeline.step,
                                ", \"last_step\": ", t->timeline.last_step,
                                ", \"source\": \"", t->source,
                                "\",\n\"trace\": ", t->timeline.json, "}\n"));
}

// The session's ranks methods take a lock of their own (session.h), so
// these run side by side with the other requests; two ranks requests wait
// for each other while the first loads the ranks.
WebReply WebApi::Ranks() {
  absl::StatusOr<RanksReport> report = session_->Ranks();
  if (!report.ok()) return ErrorFor(report.status());
  return JsonReply(RenderRanksJson(*report));
}

WebReply WebApi::RanksTimeline(const WebParams& params) {
  int64_t step = -1;
  for (const auto& [name, value] : params) {
    if (name != "step" || !absl::SimpleAtoi(value, &step) || step < 0) {
      return Error(400, "ranks_timeline takes step=N (a step of the ranks)");
    }
  }
  if (step < 0) {
    absl::StatusOr<RanksReport> report = session_->Ranks();
    if (!report.ok()) return ErrorFor(report.status());
    if (!report->steps.empty()) step = report->steps.front().step;
  }
  absl::StatusOr<std::string> trace = session_->RanksTimeline(step);
  if (!trace.ok()) return ErrorFor(trace.status());
  return JsonReply(
      absl::StrCat("{\"step\": ", step, ",\n\"trace\": ", *trace, "}\n"));
}

}  // namespace tfprof
