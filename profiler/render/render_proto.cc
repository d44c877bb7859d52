#include "profiler/render/render_proto.h"

#include <vector>

#include "google/protobuf/text_format.h"

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

}  // namespace

tfpb::GraphNodeProto ToGraphNodeProto(const ResultTree& result) {
  tfpb::GraphNodeProto root;
  if (!result.nodes.empty()) FillGraphNode(result, 0, &root);
  return root;
}

tfpb::MultiGraphNodeProto ToMultiGraphNodeProto(const ResultTree& result) {
  tfpb::MultiGraphNodeProto root;
  if (result.nodes.empty()) return root;
  if (IsFlatView(result.view)) {
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
  const bool multi = IsFlatView(result.view) || result.view == ViewKind::kCode;
  std::string out;
  if (multi) {
    tfpb::MultiGraphNodeProto p = ToMultiGraphNodeProto(result);
    if (text) {
      google::protobuf::TextFormat::PrintToString(p, &out);
    } else {
      out = DeterministicBytes(p);
    }
  } else {
    tfpb::GraphNodeProto p = ToGraphNodeProto(result);
    if (text) {
      google::protobuf::TextFormat::PrintToString(p, &out);
    } else {
      out = DeterministicBytes(p);
    }
  }
  return out;
}

}  // namespace tfprof
