#include "profiler/render/render_proto.h"

#include <cstdio>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/text_format.h"
#include "profiler/base/json_writer.h"

namespace tfprof {
namespace {

tfcore::TensorShapeProto VecToShape(const std::vector<int64_t>& dims) {
  tfcore::TensorShapeProto shape;
  if (dims.empty()) {
    shape.set_unknown_rank(true);
    return shape;
  }
  for (int64_t d : dims) shape.add_dim()->set_size(d);
  return shape;
}

void SetSelf(const NodeStats& s, tfpb::GraphNodeProto* p) {
  p->set_run_count(s.run_count);
  p->set_exec_micros(s.exec_micros);
  p->set_accelerator_exec_micros(s.accelerator_exec_micros);
  p->set_cpu_exec_micros(s.cpu_exec_micros);
  p->set_requested_bytes(s.requested_bytes);
  p->set_peak_bytes(s.peak_bytes);
  p->set_residual_bytes(s.residual_bytes);
  p->set_output_bytes(s.output_bytes);
  p->set_float_ops(s.float_ops);
  p->set_parameters(s.parameters);
}

void SetTotals(const Totals& t, tfpb::GraphNodeProto* p) {
  p->set_total_definition_count(t.definition_count);
  p->set_total_run_count(t.run_count);
  p->set_total_exec_micros(t.exec_micros);
  p->set_total_accelerator_exec_micros(t.accelerator_exec_micros);
  p->set_total_cpu_exec_micros(t.cpu_exec_micros);
  p->set_total_requested_bytes(t.requested_bytes);
  p->set_total_peak_bytes(t.peak_bytes);
  p->set_total_residual_bytes(t.residual_bytes);
  p->set_total_output_bytes(t.output_bytes);
  p->set_total_parameters(t.parameters);
  p->set_total_float_ops(t.float_ops);
}

void FillGraphNode(const ResultTree& r, size_t id, tfpb::GraphNodeProto* p) {
  const ResultNode& n = r.nodes[id];
  p->set_name(n.name);
  for (const std::string& d : NodeDevices(r, n)) p->add_devices(d);
  SetSelf(n.self, p);
  SetTotals(n.total, p);
  for (const auto& [idx, dims] : NodeInputShapes(r, n)) {
    (*p->mutable_input_shapes())[idx] = VecToShape(dims);
  }
  if (n.tensor != nullptr) *p->mutable_tensor_value() = n.tensor->proto;
  for (size_t c : n.children) FillGraphNode(r, c, p->add_children());
}

void FillMultiSelf(const ResultTree& r, const ResultNode& n,
                   tfpb::MultiGraphNodeProto* p) {
  p->set_name(n.name);
  p->set_exec_micros(n.self.exec_micros);
  p->set_accelerator_exec_micros(n.self.accelerator_exec_micros);
  p->set_cpu_exec_micros(n.self.cpu_exec_micros);
  p->set_requested_bytes(n.self.requested_bytes);
  p->set_peak_bytes(n.self.peak_bytes);
  p->set_residual_bytes(n.self.residual_bytes);
  p->set_output_bytes(n.self.output_bytes);
  p->set_float_ops(n.self.float_ops);
  p->set_parameters(n.self.parameters);
  p->set_total_exec_micros(n.total.exec_micros);
  p->set_total_accelerator_exec_micros(n.total.accelerator_exec_micros);
  p->set_total_cpu_exec_micros(n.total.cpu_exec_micros);
  p->set_total_requested_bytes(n.total.requested_bytes);
  p->set_total_peak_bytes(n.total.peak_bytes);
  p->set_total_residual_bytes(n.total.residual_bytes);
  p->set_total_output_bytes(n.total.output_bytes);
  p->set_total_parameters(n.total.parameters);
  p->set_total_float_ops(n.total.float_ops);
  for (const MemberNode& m : n.members) {
    tfpb::GraphNodeProto* g = p->add_graph_nodes();
    g->set_name(m.name());
    if (!m.device().empty()) g->add_devices(m.device());
    SetSelf(m.stats, g);
    Totals t;
    t.AddSelf(m.stats);
    SetTotals(t, g);
    for (const auto& [idx, dims] : NodeInputShapes(r, m)) {
      (*g->mutable_input_shapes())[idx] = VecToShape(dims);
    }
  }
}

void FillMultiTree(const ResultTree& r, size_t id,
                   tfpb::MultiGraphNodeProto* p) {
  FillMultiSelf(r, r.nodes[id], p);
  for (size_t c : r.nodes[id].children) {
    FillMultiTree(r, c, p->add_children());
  }
}

std::string JsonList(const std::vector<std::string>& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) {
    if (i > 0) out += ",";
    out += JsonQuote(v[i]);
  }
  return out + "]";
}

void JsonNode(const ResultTree& r, size_t id, int indent, std::string* out) {
  const ResultNode& n = r.nodes[id];
  const Options& o = r.options;
  const std::string pad(static_cast<size_t>(indent), ' ');
  absl::StrAppend(out, pad, "{\"name\": ", JsonQuote(n.name),
                  ", \"accounted\": ", n.account ? "true" : "false");
  auto stat = [&](const char* key, int64_t self, int64_t total) {
    absl::StrAppend(out, ", \"", key, "\": {\"self\": ", self,
                    ", \"total\": ", total, "}");
  };
  if (o.Selected("micros")) {
    stat("micros", n.self.exec_micros, n.total.exec_micros);
  }
  if (o.Selected("micros") || o.Selected("accelerator_micros")) {
    stat("accelerator_micros", n.self.accelerator_exec_micros,
         n.total.accelerator_exec_micros);
  }
  if (o.Selected("micros") || o.Selected("cpu_micros")) {
    stat("cpu_micros", n.self.cpu_exec_micros, n.total.cpu_exec_micros);
  }
  if (o.Selected("bytes")) {
    stat("bytes", n.self.requested_bytes, n.total.requested_bytes);
  }
  if (o.Selected("peak_bytes")) {
    stat("peak_bytes", n.self.peak_bytes, n.total.peak_bytes);
  }
  if (o.Selected("residual_bytes")) {
    stat("residual_bytes", n.self.residual_bytes, n.total.residual_bytes);
  }
  if (o.Selected("output_bytes")) {
    stat("output_bytes", n.self.output_bytes, n.total.output_bytes);
  }
  if (o.Selected("params")) {
    stat("params", n.self.parameters, n.total.parameters);
    const std::vector<int64_t>& shape = NodeShape(n);
    if (!shape.empty()) {
      absl::StrAppend(out, ", \"shape\": [");
      for (size_t i = 0; i < shape.size(); ++i) {
        absl::StrAppend(out, i ? "," : "", shape[i]);
      }
      absl::StrAppend(out, "]");
    }
  }
  if (o.Selected("float_ops")) {
    stat("float_ops", n.self.float_ops, n.total.float_ops);
  }
  if (o.Selected("occurrence")) {
    if (r.view == ViewKind::kOp) {
      int64_t runs = 0;
      for (const MemberNode& m : n.members) runs += m.stats.run_count;
      absl::StrAppend(out, ", \"occurrence\": {\"run\": ", runs,
                      ", \"defined\": ", n.members.size(), "}");
    } else if (r.view != ViewKind::kCode) {
      absl::StrAppend(out, ", \"occurrence\": {\"run\": ", n.self.run_count,
                      ", \"total_run\": ", n.total.run_count,
                      ", \"total_defined\": ", n.total.definition_count, "}");
    }
  }
  if (o.Selected("device")) {
    absl::StrAppend(out, ", \"devices\": ", JsonList(NodeDevices(r, n)));
  }
  if (o.Selected("op_types")) {
    absl::StrAppend(out, ", \"op_types\": ", JsonList(NodeOpTypes(r, n)));
  }
  if (o.Selected("input_shapes") && r.view != ViewKind::kCode &&
      r.view != ViewKind::kOp) {
    absl::StrAppend(out, ", \"input_shapes\": {");
    bool first = true;
    for (const auto& [idx, dims] : NodeInputShapes(r, n)) {
      absl::StrAppend(out, first ? "" : ", ", "\"", idx, "\": [");
      for (size_t i = 0; i < dims.size(); ++i) {
        absl::StrAppend(out, i ? "," : "", dims[i]);
      }
      absl::StrAppend(out, "]");
      first = false;
    }
    absl::StrAppend(out, "}");
  }
  if (n.children.empty()) {
    absl::StrAppend(out, ", \"children\": []}");
    return;
  }
  absl::StrAppend(out, ", \"children\": [\n");
  for (size_t i = 0; i < n.children.size(); ++i) {
    JsonNode(r, n.children[i], indent + 2, out);
    absl::StrAppend(out, i + 1 < n.children.size() ? ",\n" : "\n");
  }
  absl::StrAppend(out, pad, "]}");
}

std::string CsvField(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out.push_back('"');
    out.push_back(c);
  }
  return out + "\"";
}

// (column name, self, total) of each selected numeric attribute.
std::vector<std::tuple<std::string, int64_t, int64_t>> CsvStats(
    const ResultNode& n, const Options& o) {
  std::vector<std::tuple<std::string, int64_t, int64_t>> v;
  const bool micros = o.Selected("micros");
  if (micros) v.emplace_back("micros", n.self.exec_micros, n.total.exec_micros);
  if (micros || o.Selected("accelerator_micros")) {
    v.emplace_back("accelerator_micros", n.self.accelerator_exec_micros,
                   n.total.accelerator_exec_micros);
  }
  if (micros || o.Selected("cpu_micros")) {
    v.emplace_back("cpu_micros", n.self.cpu_exec_micros,
                   n.total.cpu_exec_micros);
  }
  if (o.Selected("bytes")) {
    v.emplace_back("bytes", n.self.requested_bytes, n.total.requested_bytes);
  }
  if (o.Selected("peak_bytes")) {
    v.emplace_back("peak_bytes", n.self.peak_bytes, n.total.peak_bytes);
  }
  if (o.Selected("residual_bytes")) {
    v.emplace_back("residual_bytes", n.self.residual_bytes,
                   n.total.residual_bytes);
  }
  if (o.Selected("output_bytes")) {
    v.emplace_back("output_bytes", n.self.output_bytes, n.total.output_bytes);
  }
  if (o.Selected("params")) {
    v.emplace_back("params", n.self.parameters, n.total.parameters);
  }
  if (o.Selected("float_ops")) {
    v.emplace_back("float_ops", n.self.float_ops, n.total.float_ops);
  }
  return v;
}

void CsvRow(const ResultTree& r, size_t id, int depth, std::string* out) {
  const ResultNode& n = r.nodes[id];
  const Options& o = r.options;
  absl::StrAppend(out, CsvField(n.name), ",", depth, ",",
                  n.account ? "true" : "false");
  for (const auto& [col, self, total] : CsvStats(n, o)) {
    absl::StrAppend(out, ",", self, ",", total);
  }
  if (o.Selected("occurrence")) {
    int64_t runs = n.self.run_count, defined = n.total.definition_count;
    if (r.view == ViewKind::kOp) {
      runs = 0;
      for (const MemberNode& m : n.members) runs += m.stats.run_count;
      defined = static_cast<int64_t>(n.members.size());
    }
    absl::StrAppend(out, ",", runs, ",", defined);
  }
  if (o.Selected("device")) {
    absl::StrAppend(out, ",", CsvField(absl::StrJoin(NodeDevices(r, n), "|")));
  }
  if (o.Selected("op_types")) {
    absl::StrAppend(out, ",", CsvField(absl::StrJoin(NodeOpTypes(r, n), "|")));
  }
  out->append("\n");
}

void CsvTree(const ResultTree& r, size_t id, int depth, std::string* out) {
  CsvRow(r, id, depth, out);
  for (size_t c : r.nodes[id].children) CsvTree(r, c, depth + 1, out);
}

}  // namespace

std::string RenderCsv(const ResultTree& result) {
  std::string out = "name,depth,accounted";
  const Options& o = result.options;
  ResultNode probe;
  for (const auto& [col, self, total] : CsvStats(probe, o)) {
    absl::StrAppend(&out, ",", col, ",total_", col);
  }
  if (o.Selected("occurrence")) out += ",run_count,defined_count";
  if (o.Selected("device")) out += ",devices";
  if (o.Selected("op_types")) out += ",op_types";
  out += "\n";
  if (result.nodes.empty()) return out;
  if (result.view == ViewKind::kOp) {
    for (size_t c : result.nodes[0].children) CsvRow(result, c, 1, &out);
  } else {
    CsvTree(result, 0, 0, &out);
  }
  return out;
}

tfpb::GraphNodeProto ToGraphNodeProto(const ResultTree& result) {
  tfpb::GraphNodeProto root;
  if (!result.nodes.empty()) FillGraphNode(result, 0, &root);
  return root;
}

tfpb::MultiGraphNodeProto ToMultiGraphNodeProto(const ResultTree& result) {
  tfpb::MultiGraphNodeProto root;
  if (result.nodes.empty()) return root;
  if (result.view == ViewKind::kOp) {
    FillMultiSelf(result, result.nodes[0], &root);
    tfpb::MultiGraphNodeProto* cur = &root;
    for (size_t c : result.nodes[0].children) {
      cur = cur->add_children();
      FillMultiSelf(result, result.nodes[c], cur);
    }
    return root;
  }
  FillMultiTree(result, 0, &root);
  return root;
}

std::string RenderProto(const ResultTree& result, bool text) {
  const bool multi =
      result.view == ViewKind::kOp || result.view == ViewKind::kCode;
  std::string out;
  if (multi) {
    tfpb::MultiGraphNodeProto p = ToMultiGraphNodeProto(result);
    if (text) {
      google::protobuf::TextFormat::PrintToString(p, &out);
    } else {
      p.SerializeToString(&out);
    }
  } else {
    tfpb::GraphNodeProto p = ToGraphNodeProto(result);
    if (text) {
      google::protobuf::TextFormat::PrintToString(p, &out);
    } else {
      p.SerializeToString(&out);
    }
  }
  return out;
}

std::string RenderJson(const ResultTree& result) {
  std::string out =
      absl::StrCat("{\"view\": \"", ViewName(result.view),
                   "\", \"step\": ", result.options.step, ", \"select\": ");
  std::vector<std::string> sel(result.options.select.begin(),
                               result.options.select.end());
  absl::StrAppend(&out, JsonList(sel),
                  ", \"units\": {\"micros\": "
                  "\"microseconds\", \"bytes\": \"bytes\"}"
                  ",\n\"root\":\n");
  if (!result.nodes.empty()) JsonNode(result, 0, 0, &out);
  absl::StrAppend(&out, "\n}\n");
  return out;
}

}  // namespace tfprof
