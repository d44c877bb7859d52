#include "profiler/model/model.h"

#include <algorithm>
#include <cstring>
#include <string_view>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "profiler/base/device.h"
#include "profiler/base/parallel.h"
#include "profiler/base/saturate.h"
#include "profiler/base/wire.h"

namespace tfprof {
namespace {

// The time on kept devices, and whether every device was kept.
int64_t SumKeptTimes(const std::vector<DeviceTimes>& v,
                     const DeviceFilter& keep, int64_t* intervals,
                     bool* all_kept) {
  int64_t total = 0;
  for (const DeviceTimes& d : v) {
    if (!keep(d.device)) {
      *all_kept = false;
      continue;
    }
    for (const TimeInterval& t : d.times) SatInc(&total, t.duration_micros);
    *intervals += static_cast<int64_t>(d.times.size());
  }
  return total;
}

}  // namespace

std::vector<int64_t> ShapeToVec(const tfcore::TensorShapeProto& shape) {
  std::vector<int64_t> dims;
  if (shape.dim_size() == 0 && !shape.unknown_rank()) {
    dims.push_back(1);  // a scalar with known rank
  } else {
    for (const auto& d : shape.dim()) dims.push_back(d.size());
  }
  return dims;
}

void ExecDetail::Clear() {
  all_start_micros = latest_end_micros = 0;
  accelerator_execs.clear();
  cpu_execs.clear();
  memory_execs.clear();
  allocations.clear();
  devices.clear();
  other_execs.clear();
}

bool OpTypes::count(std::string_view t) const {
  const std::string* const* first = data();
  const std::string* const* last = first + size();
  auto it = std::lower_bound(
      first, last, t,
      [](const std::string* a, std::string_view b) { return *a < b; });
  return it != last && **it == t;
}

void OpTypes::insert(const std::string* interned) {
  if (one_ == nullptr) {
    one_ = interned;
    return;
  }
  if (many_.empty()) {
    if (*one_ == *interned) return;
    many_.push_back(one_);
  }
  auto it = std::lower_bound(
      many_.begin(), many_.end(), interned,
      [](const std::string* a, const std::string* b) { return *a < *b; });
  if (it == many_.end() || **it != *interned) many_.insert(it, interned);
  one_ = many_.front();
}

const StepExec* GraphNode::FindExec(int64_t step) const {
  auto it =
      std::lower_bound(execs.begin(), execs.end(), step,
                       [](const StepExec& e, int64_t s) { return e.step < s; });
  if (it == execs.end() || it->step != step) return nullptr;
  return &*it;
}

const std::vector<int64_t>* GraphNode::OutputShape(int32_t slot) const {
  auto it =
      std::lower_bound(output_shapes().begin(), output_shapes().end(), slot,
                       [](const auto& p, int32_t s) { return p.first < s; });
  if (it == output_shapes().end() || it->first != slot) return nullptr;
  return &it->second;
}

std::optional<tfcore::AttrValue> GraphNode::FindAttr(
    std::string_view key) const {
  // The blob is a ProfileNode holding only field 11, map<string, AttrValue>:
  // scan the entries' keys without decoding the values.
  wire::Reader r(attrs());
  uint32_t field;
  int wt;
  std::optional<tfcore::AttrValue> found;
  while (r.Next(&field, &wt)) {
    if (field != 11 || wt != wire::kBytes) {
      r.Skip(wt);
      continue;
    }
    wire::Reader entry = r.Sub();
    std::string_view k, v;
    bool has_value = false;
    while (entry.Next(&field, &wt)) {
      if (field == 1 && wt == wire::kBytes) {
        k = entry.Bytes();
      } else if (field == 2 && wt == wire::kBytes) {
        v = entry.Bytes();
        has_value = true;
      } else {
        entry.Skip(wt);
      }
    }
    if (k != key) continue;
    tfcore::AttrValue value;
    if (has_value &&
        !value.ParseFromArray(v.data(), static_cast<int>(v.size()))) {
      continue;
    }
    found = std::move(value);  // the last entry wins, as in a parsed map
  }
  return found;
}

std::map<std::string, tfcore::AttrValue> GraphNode::Attrs() const {
  std::map<std::string, tfcore::AttrValue> out;
  if (attrs().empty()) return out;
  tfpb::ProfileNode holder;
  if (!holder.ParseFromString(attrs())) return out;
  for (const auto& [k, v] : holder.attrs()) out[k] = v;
  return out;
}

const NodeDetails& GraphNode::NoDetails() {
  static const NodeDetails* const kNone = new NodeDetails();
  return *kNone;
}

const std::string* GraphNode::EmptyString() {
  static const std::string* const kEmpty = new std::string();
  return kEmpty;
}

int64_t GraphNode::Parameters() const {
  if (shape.empty()) return 0;
  int64_t params = 1;
  for (int64_t d : shape) {
    if (d < 0) return 0;  // incomplete shape
    // Saturate instead of overflowing on absurd shapes.
    if (d != 0 && params > INT64_MAX / d) return INT64_MAX;
    params *= d;
  }
  return params;
}

namespace {

// v / n, rounded toward zero or to the nearest (halves away from zero).
int64_t Divided(int64_t v, int64_t n, bool nearest) {
  if (!nearest) return v / n;
  const int64_t q = v / n, r = v % n;
  const int64_t twice = r < 0 ? -2 * r : 2 * r;  // |r| < n: no overflow
  if (twice < n) return q;
  return v < 0 ? q - 1 : q + 1;
}

}  // namespace

void NodeStats::DivideBy(int64_t n, bool nearest) {
  for (int64_t* v : {&run_count, &exec_micros, &accelerator_exec_micros,
                     &cpu_exec_micros, &requested_bytes, &peak_bytes,
                     &residual_bytes, &output_bytes, &float_ops}) {
    *v = Divided(*v, n, nearest);
  }
}

void Model::MeanOverAllSteps() {
  mean_over_all_steps_ = true;
  const int64_t n = static_cast<int64_t>(steps_.size());
  for (auto& node : nodes_) node->mean_over_steps = n;
}

NodeStats GraphNode::Stats(int64_t step) const {
  NodeStats s;
  s.parameters = Parameters();
  if (execs.empty()) {
    s.float_ops = float_ops;  // static estimate when the node never ran
    return s;
  }
  if (step >= 0) {
    const StepExec* e = FindExec(step);
    if (e != nullptr) {
      s.run_count = e->run_count;
      s.exec_micros = e->exec_micros();
      s.accelerator_exec_micros = e->accelerator_micros;
      s.cpu_exec_micros = e->cpu_micros;
      s.requested_bytes = e->requested_bytes;
      s.peak_bytes = e->peak_bytes;
      s.residual_bytes = e->residual_bytes;
      s.output_bytes = e->output_bytes;
    }
  } else {
    for (const StepExec& e : execs) {
      SatInc(&s.run_count, e.run_count);
      SatInc(&s.exec_micros, e.exec_micros());
      SatInc(&s.accelerator_exec_micros, e.accelerator_micros);
      SatInc(&s.cpu_exec_micros, e.cpu_micros);
      SatInc(&s.requested_bytes, e.requested_bytes);
      SatInc(&s.peak_bytes, e.peak_bytes);
      SatInc(&s.residual_bytes, e.residual_bytes);
      SatInc(&s.output_bytes, e.output_bytes);
    }
    if (mean_over_steps > 0) {
      s.DivideBy(mean_over_steps, /*nearest=*/true);
    } else {
      s.DivideBy(static_cast<int64_t>(execs.size()));
    }
  }
  s.float_ops = SatMul(float_ops, s.run_count);
  return s;
}

NodeStats Model::StatsOn(const GraphNode& node, int64_t step,
                         const DeviceFilter& keep) const {
  NodeStats s;
  const bool placed_kept =
      node.canonical_device().empty() || keep(node.canonical_device());
  if (placed_kept) s.parameters = node.Parameters();
  if (node.execs.empty()) {
    if (placed_kept) s.float_ops = node.float_ops;
    return s;
  }
  int64_t matched = 0;
  ExecDetail d;
  for (const StepExec& e : node.execs) {
    if (step >= 0 && e.step != step) continue;
    DetailInto(e, &d);
    int64_t cpu_runs = 0, accelerator_runs = 0;
    bool all_cpu = true, all_accelerator = true;
    const int64_t cpu = SumKeptTimes(d.cpu_execs, keep, &cpu_runs, &all_cpu);
    const int64_t acc = SumKeptTimes(d.accelerator_execs, keep,
                                     &accelerator_runs, &all_accelerator);
    bool any = cpu_runs > 0 || accelerator_runs > 0;
    for (std::string_view dev : d.devices) any = any || keep(dev);
    if (!any) continue;
    ++matched;
    SatInc(&s.run_count, all_cpu ? e.run_count : cpu_runs);
    SatInc(&s.cpu_exec_micros, cpu);
    SatInc(&s.accelerator_exec_micros, acc);
    if (placed_kept) {
      SatInc(&s.requested_bytes, e.requested_bytes);
      SatInc(&s.peak_bytes, e.peak_bytes);
      SatInc(&s.residual_bytes, e.residual_bytes);
      SatInc(&s.output_bytes, e.output_bytes);
    }
  }
  if (step < 0 && matched > 0) {
    const bool all = node.mean_over_steps > 0;
    for (int64_t NodeStats::*f :
         {&NodeStats::run_count, &NodeStats::accelerator_exec_micros,
          &NodeStats::cpu_exec_micros, &NodeStats::requested_bytes,
          &NodeStats::peak_bytes, &NodeStats::residual_bytes,
          &NodeStats::output_bytes}) {
      s.*f = Divided(s.*f, all ? node.mean_over_steps : matched, all);
    }
  }
  s.exec_micros = SatAdd(s.accelerator_exec_micros, s.cpu_exec_micros);
  s.float_ops = SatMul(node.float_ops, s.run_count);
  return s;
}

// --- building

const GraphNode* Model::Find(std::string_view name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : *it;
}

GraphNode* Model::FindMutable(std::string_view name) {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : *it;
}

GraphNode* Model::NewNode(const std::string& name, const std::string& op) {
  auto node = std::make_unique<GraphNode>();
  node->id = static_cast<int64_t>(nodes_.size());
  node->name = name;
  node->op = op;
  AddOpType(node.get(), op);
  GraphNode* raw = node.get();
  node->index = nodes_.size();
  nodes_.push_back(std::move(node));
  // A node of a name already taken takes the name over.
  auto [it, added] = by_name_.insert(raw);
  if (!added) {
    by_name_.erase(it);
    by_name_.insert(raw);
  }
  sorted_.valid.store(false);
  ++generation_;
  ++version_;
  return raw;
}

void Model::SortByName(std::vector<const GraphNode*>* nodes, bool parallel) {
  // Sorted as (name view, node) pairs: a comparison reads the names' bytes
  // without first loading each node and its string.
  std::vector<std::pair<std::string_view, const GraphNode*>> keyed;
  keyed.reserve(nodes->size());
  for (const GraphNode* n : *nodes) keyed.emplace_back(n->name, n);
  const auto less = [](const auto& a, const auto& b) {
    return a.first < b.first;
  };
  if (parallel) {
    ParallelSort(keyed.begin(), keyed.end(), less);
  } else {
    std::sort(keyed.begin(), keyed.end(), less);
  }
  for (size_t i = 0; i < keyed.size(); ++i) (*nodes)[i] = keyed[i].second;
}

const std::vector<const GraphNode*>& Model::NodesByName() const {
  // Double-checked: readers after the first see `valid` and take no lock;
  // the first readers build the order under the lock, one of them.
  if (sorted_.valid.load(std::memory_order_acquire)) return sorted_.nodes;
  std::lock_guard<std::mutex> lock(sorted_.mutex);
  if (!sorted_.valid.load(std::memory_order_relaxed)) {
    sorted_.nodes.clear();
    sorted_.nodes.reserve(nodes_.size());
    for (const auto& n : nodes_) sorted_.nodes.push_back(n.get());
    // (Names are unique: any sort gives the one order.)
    SortByName(&sorted_.nodes, /*parallel=*/true);
    sorted_.valid.store(true, std::memory_order_release);
  }
  return sorted_.nodes;
}

void Model::AddOpLog(const tfpb::OpLogProto& op_log) {
  ++version_;
  for (const auto& [id, str] : op_log.id_to_string()) {
    id_to_string_.emplace(id, str);  // existing ids are kept
  }
  for (const tfpb::OpLogEntry& entry : op_log.log_entries()) {
    GraphNode* node = FindMutable(entry.name());
    if (node == nullptr) continue;
    for (const std::string& type : entry.types()) AddOpType(node, type);
    if (entry.float_ops() != 0) node->float_ops = entry.float_ops();
    if (entry.has_code_def()) {
      has_code_traces_ = true;
      if (node->code().empty()) {
        std::string code = entry.code_def().SerializeAsString();
        if (!code.empty()) *node->mutable_code() = std::move(code);
      }
    }
  }
}

void Model::set_activity(Activity activity) {
  activity_ = std::move(activity);
  ++version_;
  for (const NodeCost& c : activity_.node_costs()) {
    GraphNode* node = FindMutable(activity_.String(c.node));
    if (node == nullptr) continue;
    node->pytorch_float_ops = c.pytorch_float_ops;
    node->cost_bytes = c.bytes;
    node->dtype = c.dtype;
  }
}

void Model::AddCheckpointVariables(const std::vector<std::string>& names) {
  ++version_;
  for (const std::string& name : names) {
    GraphNode* node = FindMutable(name);
    if (node != nullptr) AddOpType(node, kCheckpointVariableType);
  }
}

const std::vector<uint32_t>& Model::KernelStreams(const GraphNode& node) const {
  static const std::vector<uint32_t> kNone;
  StreamIndex& index = stream_index_;
  std::lock_guard<std::mutex> lock(index.mutex);
  if (index.version != version_) {
    index.streams.clear();
    for (const DeviceWork& w : activity_.work()) {
      if (w.op == 0) continue;
      const GraphNode* n = Find(activity_.String(w.op));
      if (n != nullptr) index.streams[n->index].push_back(w.stream);
    }
    for (auto& [i, streams] : index.streams) {
      std::sort(streams.begin(), streams.end());
      streams.erase(std::unique(streams.begin(), streams.end()), streams.end());
    }
    index.version = version_;
  }
  auto it = index.streams.find(node.index);
  return it == index.streams.end() ? kNone : it->second;
}

double Model::run_coverage() const {
  return static_cast<double>(covered_ids_.size()) /
         (static_cast<double>(nodes_.size()) + 1e-10);
}

std::vector<CodeFrame> Model::CallStack(const GraphNode& node) const {
  std::vector<CodeFrame> frames;
  if (node.code().empty()) return frames;
  tfpb::CodeDef code;
  if (!code.ParseFromString(node.code())) return frames;
  auto lookup = [this](int64_t id) -> std::string {
    auto it = id_to_string_.find(id);
    return it == id_to_string_.end() ? std::string() : it->second;
  };
  frames.reserve(code.traces_size());
  for (const auto& t : code.traces()) {
    CodeFrame f;
    // Old profiles carry the strings inline, newer ones ids into the table.
    f.file = !t.file().empty() ? t.file() : lookup(t.file_id());
    f.function = !t.function().empty() ? t.function() : lookup(t.function_id());
    f.line = !t.line().empty() ? t.line() : lookup(t.line_id());
    f.lineno = t.lineno();
    f.func_start_line = t.func_start_line();
    frames.push_back(std::move(f));
  }
  return frames;
}

std::string Model::SerializedProfileProto() const {
  return DeterministicBytes(ToProfileProto());
}

tfpb::ProfileProto Model::ToProfileProto() const {
  tfpb::ProfileProto profile;
  for (const auto& [id, str] : id_to_string_) {
    (*profile.mutable_id_to_string())[id] = str;
  }
  ExecDetail d;
  for (const auto& node : nodes_) {
    if (node->id < 0) continue;
    tfpb::ProfileNode& pn = (*profile.mutable_nodes())[node->id];
    if (!node->attrs().empty()) pn.MergeFromString(node->attrs());
    pn.set_name(node->name);
    pn.set_op(node->op);
    pn.set_id(node->id);
    pn.set_canonical_device(node->canonical_device());
    pn.set_host_device(node->host_device());
    pn.set_float_ops(node->float_ops);
    for (int64_t dim : node->shape) pn.add_shape(dim);
    for (const std::string& t : node->op_types) pn.add_op_types(t);
    for (const NodeInput& in : node->inputs) {
      const GraphNode* src = InputNode(in);
      if (src == nullptr) continue;
      (*pn.mutable_inputs())[in.index] = src->id;
      if (in.slot >= 0) (*pn.mutable_src_output_index())[src->id] = in.slot;
    }
    for (const auto& [idx, dims] : node->stored_input_shapes()) {
      auto& t = (*pn.mutable_input_shapes())[idx];
      for (int64_t dim : dims) t.add_int64_values(dim);
    }
    for (const auto& [idx, dims] : node->output_shapes()) {
      auto& t = (*pn.mutable_output_shapes())[idx];
      for (int64_t dim : dims) t.add_int64_values(dim);
    }
    if (!node->code().empty()) {
      pn.mutable_trace()->ParseFromString(node->code());
    }
    for (const StepExec& e : node->execs) {
      tfpb::ExecProfile& ep = (*pn.mutable_execs())[e.step];
      ep.set_run_count(e.run_count);
      DetailInto(e, &d);
      ep.set_all_start_micros(d.all_start_micros);
      ep.set_latest_end_micros(d.latest_end_micros);
      auto save_times =
          [](const std::vector<DeviceTimes>& in,
             google::protobuf::Map<std::string, tfpb::ExecTime>* out) {
            for (const DeviceTimes& dt : in) {
              tfpb::ExecTime& et = (*out)[std::string(dt.device)];
              for (const TimeInterval& t : dt.times) {
                tfpb::Tuple* tuple = et.add_times();
                tuple->add_int64_values(t.start_micros);
                tuple->add_int64_values(t.duration_micros);
              }
            }
          };
      save_times(d.accelerator_execs, ep.mutable_accelerator_execs());
      save_times(d.cpu_execs, ep.mutable_cpu_execs());
      for (const MemoryExec& m : d.memory_execs) {
        tfpb::ExecMemory* em = ep.add_memory_execs();
        em->set_memory_micros(m.memory_micros);
        em->set_host_temp_bytes(m.host_temp_bytes);
        em->set_host_persistent_bytes(m.host_persistent_bytes);
        em->set_accelerator_temp_bytes(m.accelerator_temp_bytes);
        em->set_accelerator_persistent_bytes(m.accelerator_persistent_bytes);
        em->set_requested_bytes(m.requested_bytes);
        em->set_peak_bytes(m.peak_bytes);
        em->set_residual_bytes(m.residual_bytes);
        em->set_output_bytes(m.output_bytes);
        em->set_allocator_bytes_in_use(m.allocator_bytes_in_use);
        for (const OutputMemory& om : m.output_memory) {
          tfpb::Memory& mm = (*em->mutable_output_memory())[om.slot];
          mm.set_bytes(om.bytes);
          mm.set_ptr(om.ptr);
        }
      }
      for (const Allocation& a : d.allocations) {
        auto* r = ep.add_allocations();
        r->set_alloc_micros(a.alloc_micros);
        r->set_alloc_bytes(a.alloc_bytes);
      }
      for (std::string_view dev : d.devices) ep.add_devices(std::string(dev));
    }
  }
  profile.set_has_trace(has_code_traces_);
  profile.set_miss_accelerator_stream(miss_accelerator_stream_);
  for (int64_t s : steps_) profile.add_steps(s);
  return profile;
}

}  // namespace tfprof
