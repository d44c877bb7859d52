#include "profiler/render/render_json_csv.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "profiler/base/json_writer.h"

namespace tfprof {
namespace {

struct SelectedStat {
  const char* name;
  int64_t self, total;
};

// The numeric attributes -select asks for, in output order ("micros" brings
// its accelerator and CPU parts).
std::vector<SelectedStat> SelectedStats(const ResultNode& n, const Options& o) {
  std::vector<SelectedStat> v;
  const bool micros = o.Selected(Attr::kMicros);
  if (micros) v.push_back({"micros", n.self.exec_micros, n.total.exec_micros});
  if (micros || o.Selected(Attr::kAcceleratorMicros)) {
    v.push_back({"accelerator_micros", n.self.accelerator_exec_micros,
                 n.total.accelerator_exec_micros});
  }
  if (micros || o.Selected(Attr::kCpuMicros)) {
    v.push_back(
        {"cpu_micros", n.self.cpu_exec_micros, n.total.cpu_exec_micros});
  }
  if (o.Selected(Attr::kBytes)) {
    v.push_back({"bytes", n.self.requested_bytes, n.total.requested_bytes});
  }
  if (o.Selected(Attr::kPeakBytes)) {
    v.push_back({"peak_bytes", n.self.peak_bytes, n.total.peak_bytes});
  }
  if (o.Selected(Attr::kResidualBytes)) {
    v.push_back(
        {"residual_bytes", n.self.residual_bytes, n.total.residual_bytes});
  }
  if (o.Selected(Attr::kOutputBytes)) {
    v.push_back({"output_bytes", n.self.output_bytes, n.total.output_bytes});
  }
  if (o.Selected(Attr::kParams)) {
    v.push_back({"params", n.self.parameters, n.total.parameters});
  }
  if (o.Selected(Attr::kFloatOps)) {
    v.push_back({"float_ops", n.self.float_ops, n.total.float_ops});
  }
  return v;
}

std::string JsonList(const std::vector<std::string>& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) {
    if (i > 0) out += ",";
    out += JsonQuote(v[i]);
  }
  return out + "]";
}

std::string JsonDims(const std::vector<int64_t>& dims) {
  return absl::StrCat("[", absl::StrJoin(dims, ","), "]");
}

// A kernel row's launches, durations (ns), streams, launch dimensions and
// launching ops.
void JsonKernelFacts(const KernelFacts& k, const ResultNode& n,
                     std::string* out) {
  absl::StrAppend(out, ", \"kernel\": {\"launches\": ", k.launches,
                  ", \"total_ns\": ", k.total_ns, ", \"min_ns\": ", k.min_ns,
                  ", \"avg_ns\": ", KernelMeanNanos(k),
                  ", \"max_ns\": ", k.max_ns,
                  ", \"streams\": ", JsonList(k.streams),
                  ", \"launch\": ", JsonList(k.launch), ", \"ops\": [");
  for (size_t i = 0; i < n.members.size(); ++i) {
    const MemberNode& m = n.members[i];
    absl::StrAppend(
        out, i > 0 ? ", " : "", "{\"name\": ", JsonQuote(m.name()),
        ", \"launches\": ", m.stats.run_count,
        ", \"accelerator_micros\": ", m.stats.accelerator_exec_micros, "}");
  }
  absl::StrAppend(out, "], \"unlinked_launches\": ", k.unlinked_launches,
                  ", \"steps\": ", k.steps, ", \"ranks\": ", k.ranks, "}");
}

std::string JsonDouble(double v) { return v < 0 ? "null" : NumberText(v); }

// An op or kernel row's float-op figures, as selected.
void JsonFlopFacts(const FlopFacts& f, const Options& o, std::string* out) {
  if (o.Selected(Attr::kAcceleratorFlopRate)) {
    absl::StrAppend(out,
                    ", \"accelerator_flop_rate\": ", JsonDouble(f.flop_rate));
  }
  if (o.Selected(Attr::kArithmeticIntensity)) {
    absl::StrAppend(out,
                    ", \"arithmetic_intensity\": ", JsonDouble(f.intensity),
                    ", \"bytes_moved\": ", f.bytes);
  }
  if (o.Selected(Attr::kRoofline)) {
    if (f.roof <= 0) {
      absl::StrAppend(out, ", \"roofline\": null");
    } else {
      absl::StrAppend(
          out, ", \"roofline\": {\"bound\": \"",
          f.memory_bound ? "memory" : "compute",
          "\", \"roof_flop_rate\": ", JsonDouble(f.roof),
          ", \"peak_flop_rate\": ", JsonDouble(f.peak),
          ", \"fraction_of_roof\": ",
          f.roof_fraction < 0 ? "null" : JsonDouble(f.roof_fraction),
          ", \"dtype\": \"", DtypeName(f.dtype), "\"}");
    }
  }
  if (f.split &&
      (o.Selected(Attr::kFloatOps) || o.Selected(Attr::kAcceleratorFlopRate) ||
       o.Selected(Attr::kArithmeticIntensity) || o.Selected(Attr::kRoofline))) {
    absl::StrAppend(out, ", \"float_ops_split_by_time\": true");
  }
}

// Occurrence, devices, op types and input shapes, as selected.
void JsonNodeFacts(const ResultTree& r, const ResultNode& n, std::string* out) {
  const Options& o = r.options;
  if (o.Selected(Attr::kOccurrence)) {
    if (IsFlatView(r.view)) {
      absl::StrAppend(out, ", \"occurrence\": {\"run\": ", FlatRowRuns(n),
                      ", \"defined\": ", n.members.size(), "}");
    } else if (r.view != ViewKind::kCode) {
      absl::StrAppend(out, ", \"occurrence\": {\"run\": ", n.self.run_count,
                      ", \"total_run\": ", n.total.run_count,
                      ", \"total_defined\": ", n.total.definition_count, "}");
    }
  }
  if (o.Selected(Attr::kDevice)) {
    absl::StrAppend(out, ", \"devices\": ", JsonList(NodeDevices(r, n)));
  }
  if (o.Selected(Attr::kOpTypes)) {
    absl::StrAppend(out, ", \"op_types\": ", JsonList(NodeOpTypes(r, n)));
  }
  if (n.flops != nullptr) JsonFlopFacts(*n.flops, o, out);
  if (n.kernel != nullptr) JsonKernelFacts(*n.kernel, n, out);
  if (o.Selected(Attr::kInputShapes) && r.view != ViewKind::kCode &&
      !IsFlatView(r.view)) {
    absl::StrAppend(out, ", \"input_shapes\": {");
    bool first = true;
    for (const auto& [idx, dims] : NodeInputShapes(r, n)) {
      absl::StrAppend(out, first ? "" : ", ", "\"", idx,
                      "\": ", JsonDims(dims));
      first = false;
    }
    absl::StrAppend(out, "}");
  }
}

// Where a partial tree stops (null: the whole tree, as -output json).
struct JsonCut {
  int levels_left;  // levels of children still to write below this node
  size_t offset = 0;
  size_t limit = 0;  // of the first level's children only
  const std::function<bool(const ResultNode&)>* keep = nullptr;
};

void JsonNode(const ResultTree& r, size_t id, int indent, const JsonCut* cut,
              std::string* out) {
  const ResultNode& n = r.nodes[id];
  const std::string pad(static_cast<size_t>(indent), ' ');
  absl::StrAppend(out, pad, "{\"name\": ", JsonQuote(n.name),
                  ", \"accounted\": ", n.account ? "true" : "false");
  if (cut != nullptr) {
    absl::StrAppend(out, ", \"id\": ", id,
                    ", \"child_count\": ", n.children.size());
  }
  for (const SelectedStat& s : SelectedStats(n, r.options)) {
    absl::StrAppend(out, ", \"", s.name, "\": {\"self\": ", s.self,
                    ", \"total\": ", s.total, "}");
    const std::vector<int64_t>& shape = NodeShape(n);
    if (std::string_view(s.name) == "params" && !shape.empty()) {
      absl::StrAppend(out, ", \"shape\": ", JsonDims(shape));
    }
  }
  JsonNodeFacts(r, n, out);
  if (cut != nullptr && cut->levels_left <= 0) {
    absl::StrAppend(out, "}");
    return;
  }
  size_t begin = 0, end = n.children.size();
  std::optional<JsonCut> below;
  if (cut != nullptr) {
    begin = std::min(cut->offset, end);
    end = begin + std::min(cut->limit, end - begin);
    below = JsonCut{cut->levels_left - 1, 0, SIZE_MAX, cut->keep};
  }
  auto kept = [&](size_t c) {
    return cut == nullptr || cut->keep == nullptr || (*cut->keep)(r.nodes[c]);
  };
  size_t count = 0;
  for (size_t i = begin; i < end; ++i) count += kept(n.children[i]) ? 1 : 0;
  if (count < end - begin) {
    absl::StrAppend(out, ", \"hidden_children\": ", end - begin - count);
  }
  if (count == 0) {
    absl::StrAppend(out, ", \"children\": []}");
    return;
  }
  absl::StrAppend(out, ", \"children\": [\n");
  size_t written = 0;
  for (size_t i = begin; i < end; ++i) {
    if (!kept(n.children[i])) continue;
    JsonNode(r, n.children[i], indent + 2, below ? &*below : nullptr, out);
    absl::StrAppend(out, ++written < count ? ",\n" : "\n");
  }
  absl::StrAppend(out, pad, "]}");
}

void CsvRow(const ResultTree& r, size_t id, int depth, std::string* out) {
  const ResultNode& n = r.nodes[id];
  const Options& o = r.options;
  absl::StrAppend(out, CsvField(n.name), ",", depth, ",",
                  n.account ? "true" : "false");
  for (const SelectedStat& s : SelectedStats(n, o)) {
    absl::StrAppend(out, ",", s.self, ",", s.total);
  }
  if (o.Selected(Attr::kOccurrence)) {
    if (IsFlatView(r.view)) {
      absl::StrAppend(out, ",", FlatRowRuns(n), ",", n.members.size());
    } else {
      absl::StrAppend(out, ",", n.self.run_count, ",",
                      n.total.definition_count);
    }
  }
  if (o.Selected(Attr::kDevice)) {
    absl::StrAppend(out, ",", CsvField(absl::StrJoin(NodeDevices(r, n), "|")));
  }
  if (o.Selected(Attr::kOpTypes)) {
    absl::StrAppend(out, ",", CsvField(absl::StrJoin(NodeOpTypes(r, n), "|")));
  }
  const FlopFacts none;
  const FlopFacts& f = n.flops != nullptr ? *n.flops : none;
  auto number = [](double v) { return v < 0 ? std::string() : NumberText(v); };
  if (o.Selected(Attr::kAcceleratorFlopRate)) {
    absl::StrAppend(out, ",", number(f.flop_rate));
  }
  if (o.Selected(Attr::kArithmeticIntensity)) {
    absl::StrAppend(out, ",", number(f.intensity));
  }
  if (o.Selected(Attr::kRoofline)) {
    absl::StrAppend(out, ",",
                    f.roof <= 0 ? "" : (f.memory_bound ? "memory" : "compute"),
                    ",", f.roof <= 0 ? "" : number(f.roof_fraction));
  }
  out->append("\n");
}

void CsvTree(const ResultTree& r, size_t id, int depth, std::string* out) {
  CsvRow(r, id, depth, out);
  for (size_t c : r.nodes[id].children) CsvTree(r, c, depth + 1, out);
}

}  // namespace

std::string RenderJson(const ResultTree& result) {
  std::string out =
      absl::StrCat("{\"view\": \"", ViewName(result.view),
                   "\", \"step\": ", result.options.step, ", \"select\": ");
  absl::StrAppend(&out, JsonList(result.options.select.names()),
                  ", \"units\": {\"micros\": "
                  "\"microseconds\", \"bytes\": \"bytes\"}");
  // Which float ops a PyTorch trace's nodes carry (the kernel view's are
  // always the extended rule's).
  if (result.model != nullptr &&
      result.model->source() == ProfileSource::kPyTorch) {
    absl::StrAppend(&out, ", \"flops_rule\": \"",
                    result.view == ViewKind::kKernel
                        ? std::string("extended")
                        : result.options.flops_rule,
                    "\"");
  }
  absl::StrAppend(&out, ",\n\"root\":\n");
  if (!result.nodes.empty()) JsonNode(result, 0, 0, nullptr, &out);
  absl::StrAppend(&out, "\n}\n");
  return out;
}

std::string RenderJsonLevels(const ResultTree& result, const JsonLevels& cut) {
  if (cut.node >= result.nodes.size()) return "null";
  const JsonCut first{cut.levels, cut.offset, cut.limit,
                      cut.keep ? &cut.keep : nullptr};
  std::string out;
  JsonNode(result, cut.node, 0, &first, &out);
  return out;
}

std::string RenderCsv(const ResultTree& result) {
  std::string out = "name,depth,accounted";
  const Options& o = result.options;
  for (const SelectedStat& s : SelectedStats(ResultNode(), o)) {
    absl::StrAppend(&out, ",", s.name, ",total_", s.name);
  }
  if (o.Selected(Attr::kOccurrence)) out += ",run_count,defined_count";
  if (o.Selected(Attr::kDevice)) out += ",devices";
  if (o.Selected(Attr::kOpTypes)) out += ",op_types";
  if (o.Selected(Attr::kAcceleratorFlopRate)) out += ",accelerator_flop_rate";
  if (o.Selected(Attr::kArithmeticIntensity)) out += ",arithmetic_intensity";
  if (o.Selected(Attr::kRoofline)) out += ",roofline_bound,roofline_fraction";
  out += "\n";
  if (result.nodes.empty()) return out;
  if (IsFlatView(result.view)) {
    for (size_t c : result.nodes[0].children) CsvRow(result, c, 1, &out);
  } else {
    CsvTree(result, 0, 0, &out);
  }
  return out;
}

}  // namespace tfprof
