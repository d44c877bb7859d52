#include "profiler/model/model.h"

#include <algorithm>
#include <cstring>
#include <string_view>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "profiler/base/device.h"
#include "profiler/base/parallel.h"
#include "profiler/base/saturate.h"
#include "profiler/base/wire.h"

namespace tfprof {
namespace {

// Inserts s into a sorted vector of unique strings.
void InsertSorted(std::vector<std::string_view>* v, std::string_view s) {
  auto it = std::lower_bound(v->begin(), v->end(), s);
  if (it == v->end() || *it != s) v->insert(it, s);
}

DeviceTimes& FindOrAddDevice(std::vector<DeviceTimes>* v,
                             std::string_view device) {
  auto it = std::lower_bound(
      v->begin(), v->end(), device,
      [](const DeviceTimes& d, std::string_view s) { return d.device < s; });
  if (it == v->end() || it->device != device) {
    it = v->insert(it, DeviceTimes{device, {}});
  }
  return *it;
}

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

// TensorFlow keeps one output slot per input *name* (the last one given);
// every input of that name looks its shape up in that slot.
void ApplyTensorFlowSlots(std::vector<NodeInput>* inputs) {
  absl::flat_hash_map<const std::string*, int32_t> last;
  for (const NodeInput& in : *inputs) last[in.name] = in.slot;
  for (NodeInput& in : *inputs) in.slot = last[in.name];
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
  auto it = std::lower_bound(
      v_.begin(), v_.end(), t,
      [](const std::string* a, std::string_view b) { return *a < b; });
  return it != v_.end() && **it == t;
}

void OpTypes::insert(const std::string* interned) {
  auto it = std::lower_bound(
      v_.begin(), v_.end(), interned,
      [](const std::string* a, const std::string* b) { return *a < *b; });
  if (it == v_.end() || **it != *interned) v_.insert(it, interned);
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
      std::lower_bound(output_shapes.begin(), output_shapes.end(), slot,
                       [](const auto& p, int32_t s) { return p.first < s; });
  if (it == output_shapes.end() || it->first != slot) return nullptr;
  return &it->second;
}

std::optional<tfcore::AttrValue> GraphNode::FindAttr(
    std::string_view key) const {
  // The blob is a ProfileNode holding only field 11, map<string, AttrValue>:
  // scan the entries' keys without decoding the values.
  wire::Reader r(attrs);
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
  if (attrs.empty()) return out;
  tfpb::ProfileNode holder;
  if (!holder.ParseFromString(attrs)) return out;
  for (const auto& [k, v] : holder.attrs()) out[k] = v;
  return out;
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
  return it == by_name_.end() ? nullptr : it->second;
}

GraphNode* Model::FindMutable(std::string_view name) {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
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
  by_name_[raw->name] = raw;
  sorted_.valid.store(false);
  ++generation_;
  ++version_;
  return raw;
}

const std::vector<const GraphNode*>& Model::NodesByName() const {
  // Double-checked: readers after the first see `valid` and take no lock;
  // the first readers build the order under the lock, one of them.
  if (sorted_.valid.load(std::memory_order_acquire)) return sorted_.nodes;
  std::lock_guard<std::mutex> lock(sorted_.mutex);
  if (!sorted_.valid.load(std::memory_order_relaxed)) {
    // Sorted as (name view, node) pairs: a comparison reads the names'
    // bytes without first loading each node and its string.
    std::vector<std::pair<std::string_view, const GraphNode*>> keyed;
    keyed.reserve(nodes_.size());
    for (const auto& n : nodes_) keyed.emplace_back(n->name, n.get());
    // (Names are unique: any sort gives the one order.)
    ParallelSort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) {
      return a.first < b.first;
    });
    sorted_.nodes.clear();
    sorted_.nodes.reserve(keyed.size());
    for (const auto& k : keyed) sorted_.nodes.push_back(k.second);
    sorted_.valid.store(true, std::memory_order_release);
  }
  return sorted_.nodes;
}

void Model::AddGraph(const tfcore::GraphDef& graph) {
  ++version_;
  std::vector<std::pair<GraphNode*, const tfcore::NodeDef*>> added;
  for (const tfcore::NodeDef& def : graph.node()) {
    if (by_name_.contains(def.name())) continue;
    GraphNode* node = NewNode(def.name(), def.op());
    bool has_shape = false, has_output_shapes = false;
    tfpb::ProfileNode attr_holder;
    for (const auto& attr : def.attr()) {
      (*attr_holder.mutable_attrs())[attr.first] = attr.second;
      if (attr.first == "shape" && attr.second.has_shape()) {
        if (has_shape) continue;
        has_shape = true;
        node->shape = ShapeToVec(attr.second.shape());
      } else if (attr.first == "_output_shapes" && attr.second.has_list()) {
        if (has_output_shapes) continue;
        has_output_shapes = true;
        const auto& shapes = attr.second.list().shape();
        for (int i = 0; i < shapes.size(); ++i) {
          node->output_shapes.emplace_back(i, ShapeToVec(shapes.Get(i)));
        }
      }
    }
    if (def.attr_size() > 0) {
      attr_holder.SerializeToString(&node->attrs);
    }
    added.emplace_back(node, &def);
  }
  for (auto& [node, def] : added) {
    node->inputs.reserve(def->input_size());
    for (int i = 0; i < def->input_size(); ++i) {
      std::string_view input = def->input(i);
      int32_t slot = 0;
      const size_t colon = input.find(':');
      if (colon != std::string_view::npos) {
        if (!absl::SimpleAtoi(std::string(input.substr(colon + 1)), &slot)) {
          slot = 0;
        }
        input = input.substr(0, colon);
      }
      if (!input.empty() && input[0] == '^') input.remove_prefix(1);
      // (The node's own name if it exists, else an interned copy.)
      const GraphNode* src = Find(input);
      node->inputs.push_back(NodeInput{
          i, slot, src != nullptr ? &src->name : strings_.Intern(input), src});
    }
    ApplyTensorFlowSlots(&node->inputs);
  }
}

struct Model::PendingExec {
  absl::flat_hash_map<std::pair<GraphNode*, int64_t>, ExecDetail> details;

  ExecDetail& For(const Model& model, GraphNode* node, int64_t step,
                  StepExec* exec) {
    auto [it, added] = details.try_emplace({node, step});
    if (added && exec->detail != nullptr) model.DetailInto(*exec, &it->second);
    return it->second;
  }
};

namespace {

StepExec& MutableExec(GraphNode* node, int64_t step) {
  auto& execs = node->execs;
  auto it =
      std::lower_bound(execs.begin(), execs.end(), step,
                       [](const StepExec& e, int64_t s) { return e.step < s; });
  if (it == execs.end() || it->step != step) {
    it = execs.insert(it, StepExec());
    it->step = step;
  }
  return *it;
}

}  // namespace

void Model::AddStepStat(GraphNode* node, int64_t step, const std::string& dev,
                        DeviceKind kind, const tfcore::NodeExecStats& stat,
                        PendingExec* pending) {
  if (kind == DeviceKind::kPlacement) {
    if (!node->canonical_device().empty()) {
      // A node seen on two canonical devices keeps the first one only.
      if (node->canonical_device() != dev) return;
    } else {
      node->set_canonical_device(strings_.Intern(dev));
      node->set_host_device(strings_.Intern(HostDeviceOf(dev)));
      AddOpType(node, node->canonical_device());
    }
  }
  StepExec& exec = MutableExec(node, step);
  ExecDetail& d = pending->For(*this, node, step, &exec);
  const std::string_view idev = *strings_.Intern(dev);

  // Time.
  InsertSorted(&d.devices, idev);
  if (stat.all_start_micros() > 0) {
    if (d.all_start_micros > 0) {
      d.all_start_micros =
          std::min(d.all_start_micros, stat.all_start_micros());
    } else {
      d.all_start_micros = stat.all_start_micros();
    }
    // tfprof rounds very quick TensorFlow ops up to 1us; an event of a
    // PyTorch trace or an XSpace keeps its length (no event grows).
    const int64_t duration =
        stat.op_end_rel_micros() == 0 && source_ == ProfileSource::kTensorFlow
            ? 1
            : stat.op_end_rel_micros();
    d.latest_end_micros = std::max(d.latest_end_micros,
                                   SatAdd(stat.all_start_micros(), duration));
    const TimeInterval interval{stat.all_start_micros(), duration};
    // Accelerator time counts on the stream:all lane only, CPU time on
    // canonical devices.
    if (kind == DeviceKind::kStreamAll) {
      FindOrAddDevice(&d.accelerator_execs, idev).times.push_back(interval);
    } else if (kind == DeviceKind::kPlacement) {
      FindOrAddDevice(&d.cpu_execs, idev).times.push_back(interval);
      ++exec.run_count;  // while loops run a node many times per step
    } else {
      FindOrAddDevice(&d.other_execs, idev).times.push_back(interval);
    }
  }

  // Memory is only taken from the canonical device.
  if (dev != node->canonical_device() || stat.all_start_micros() <= 0) return;
  MemoryExec mem;
  mem.memory_micros = SatAdd(stat.all_start_micros(), stat.op_end_rel_micros());
  for (const auto& m : stat.memory()) {
    if (m.allocator_name().find("GPU") == std::string::npos) continue;
    mem.allocator_bytes_in_use =
        std::max(mem.allocator_bytes_in_use, m.allocator_bytes_in_use());
    for (const auto& r : m.allocation_records()) {
      d.allocations.push_back(Allocation{r.alloc_micros(), r.alloc_bytes()});
    }
  }
  for (const auto& out : stat.output()) {
    if (!out.has_tensor_description() ||
        !out.tensor_description().has_allocation_description()) {
      continue;
    }
    const auto& alloc = out.tensor_description().allocation_description();
    const int64_t bytes =
        std::max(alloc.allocated_bytes(), alloc.requested_bytes());
    SatInc(&mem.output_bytes, bytes);
    auto it = std::lower_bound(
        mem.output_memory.begin(), mem.output_memory.end(), out.slot(),
        [](const OutputMemory& o, int32_t s) { return o.slot < s; });
    if (it == mem.output_memory.end() || it->slot != out.slot()) {
      it = mem.output_memory.insert(it, OutputMemory{out.slot(), 0, 0});
    }
    it->bytes = bytes;
    it->ptr = alloc.ptr();
  }
  if (stat.has_memory_stats()) {
    if (IsPlacedOnCpu(dev)) {
      SatInc(&mem.host_temp_bytes, stat.memory_stats().temp_memory_size());
      SatInc(&mem.host_persistent_bytes,
             stat.memory_stats().persistent_memory_size());
    } else {
      SatInc(&mem.accelerator_temp_bytes,
             stat.memory_stats().temp_memory_size());
      SatInc(&mem.accelerator_persistent_bytes,
             stat.memory_stats().persistent_memory_size());
    }
  }
  int64_t residual = 0, requested = 0, peak = 0;
  for (const auto& m : stat.memory()) {
    SatInc(&residual, m.live_bytes());
    SatInc(&requested, m.total_bytes());
    SatInc(&peak, m.peak_bytes());
  }
  const int64_t persistent =
      SatAdd(mem.host_persistent_bytes, mem.accelerator_persistent_bytes);
  const int64_t temp = SatAdd(mem.host_temp_bytes, mem.accelerator_temp_bytes);
  mem.residual_bytes = SatAdd(residual, persistent);
  mem.requested_bytes = SatAdd(SatAdd(requested, persistent), temp);
  mem.peak_bytes = SatAdd(SatAdd(peak, persistent), temp);
  d.memory_execs.push_back(std::move(mem));
}

absl::Status Model::AddRunMeta(int64_t step,
                               const tfcore::RunMetadata& run_meta) {
  if (!run_meta.has_step_stats()) {
    return absl::InvalidArgumentError(
        absl::StrCat("RunMetadata for step ", step, " has no step_stats"));
  }
  steps_.insert(step);
  ++version_;
  bool has_gpu_scheduling = false;
  bool has_gpu_stream = false;
  PendingExec pending;
  std::vector<DeviceWork> work;
  for (const auto& dev_stat : run_meta.step_stats().dev_stats()) {
    // Each device is classified once, not per execution on it.
    const std::string dev = absl::AsciiStrToLower(dev_stat.device());
    const DeviceKind kind = KindOfDevice(dev);
    if (IsPlacedOnAccelerator(dev)) {
      has_gpu_scheduling = true;
      if (kind == DeviceKind::kStreamAll) has_gpu_stream = true;
    }
    for (const auto& stat : dev_stat.node_stats()) {
      if (stat.all_start_micros() > 0) {
        const int64_t end = SatAdd(
            stat.all_start_micros(),
            std::max(stat.all_end_rel_micros(), stat.op_end_rel_micros()));
        auto [span, added] =
            run_spans_.emplace(step, TimeSpan{stat.all_start_micros(), end});
        span->second.start_micros =
            std::min(span->second.start_micros, stat.all_start_micros());
        span->second.end_micros = std::max(span->second.end_micros, end);
      }
      std::string_view name = stat.node_name();
      // GPU tracers write "name:OpType"; keep the node name only.
      const size_t colon = name.find(':');
      if (colon != std::string_view::npos) name = name.substr(0, colon);
      if (kind == DeviceKind::kStream &&
          source_ == ProfileSource::kTensorFlow) {
        StreamWork(name, step, dev, stat, &work);
      }
      GraphNode* node = FindMutable(name);
      if (node == nullptr) {
        // Nodes absent from the graph (or profiles with no graph at all) are
        // created on the fly, except the runtime's bookkeeping entries.
        if (name == "RecvTensor" || name == "_SOURCE" ||
            name.find("MEMCPY") != std::string_view::npos) {
          continue;
        }
        node = NewNode(std::string(name), std::string(name));
      } else {
        covered_nodes_.insert(node->id);
      }
      AddStepStat(node, step, dev, kind, stat, &pending);
    }
  }
  for (auto& [key, detail] : pending.details) {
    StoreExec(detail, &MutableExec(key.first, key.second));
  }
  if (has_gpu_scheduling && !has_gpu_stream) miss_accelerator_stream_ = true;
  if (!work.empty()) activity_.MergeWork(std::move(work));
  return absl::OkStatus();
}

// A GPU stream's node stat is one kernel or copy. TensorFlow's tracer
// labels a kernel "<node>:<OpType> <launch dimensions>" (the kernel's own
// name is not recorded, so the op type names it) and names a copy
// "MEMCPY<kind>" (in the node name or the label).
void Model::StreamWork(std::string_view node, int64_t step,
                       const std::string& dev,
                       const tfcore::NodeExecStats& stat,
                       std::vector<DeviceWork>* work) {
  if (stat.all_start_micros() <= 0) return;
  std::string_view label = stat.timeline_label();
  const size_t space = label.find(' ');
  std::string_view head = label.substr(0, space);
  const std::string_view rest =
      space == std::string_view::npos ? "" : label.substr(space + 1);
  const size_t colon = head.find(':');
  if (colon != std::string_view::npos) head = head.substr(colon + 1);
  DeviceWork w;
  w.start_ns = SatMul(stat.all_start_micros(), 1000);
  w.duration_ns = SatMul(stat.op_end_rel_micros(), 1000);
  w.step = step;
  const std::string_view node_name = stat.node_name();
  const size_t memcpy_at = node_name.find("MEMCPY");
  // (A TF timeline's copy is a node, named by its edge, of op type
  // MEMCPY<kind>.)
  const GraphNode* graph_node = FindMutable(node);
  const bool copy =
      memcpy_at != std::string_view::npos || head.substr(0, 6) == "MEMCPY" ||
      rest.find("num_bytes") != std::string_view::npos ||
      (graph_node != nullptr && absl::StartsWith(graph_node->op, "MEMCPY"));
  w.kind = copy ? WorkKind::kMemcpy : WorkKind::kKernel;
  std::string_view name = head;
  if (memcpy_at != std::string_view::npos) {
    name = node_name.substr(memcpy_at);
  } else if (name.empty()) {
    name = node_name;
  }
  w.name = activity_.Intern(name);
  w.stream = activity_.Intern(dev);
  if (graph_node != nullptr) w.op = activity_.Intern(node);
  if (!copy && rest.substr(0, 5) == "regs:") w.launch = activity_.Intern(rest);
  work->push_back(w);
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
      if (node->code.empty()) node->code = entry.code_def().SerializeAsString();
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
  return static_cast<double>(covered_nodes_.size()) /
         (static_cast<double>(nodes_.size()) + 1e-10);
}

std::vector<CodeFrame> Model::CallStack(const GraphNode& node) const {
  std::vector<CodeFrame> frames;
  if (node.code.empty()) return frames;
  tfpb::CodeDef code;
  if (!code.ParseFromString(node.code)) return frames;
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
  const tfpb::ProfileProto profile = ToProfileProto();
  std::string bytes;
  {
    google::protobuf::io::StringOutputStream stream(&bytes);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);  // maps in key order
    profile.SerializeToCodedStream(&coded);
  }
  return bytes;
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
    if (!node->attrs.empty()) pn.MergeFromString(node->attrs);
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
    for (const auto& [idx, dims] : node->stored_input_shapes) {
      auto& t = (*pn.mutable_input_shapes())[idx];
      for (int64_t dim : dims) t.add_int64_values(dim);
    }
    for (const auto& [idx, dims] : node->output_shapes) {
      auto& t = (*pn.mutable_output_shapes())[idx];
      for (int64_t dim : dims) t.add_int64_values(dim);
    }
    if (!node->code.empty()) pn.mutable_trace()->ParseFromString(node->code);
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
