// The model-building API, and the TF1 readers (GraphDef, RunMetadata) on
// top of it.
#include "profiler/model/model_builder.h"

#include <algorithm>
#include <string_view>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "profiler/base/saturate.h"

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

// TensorFlow keeps one output slot per input *name* (the last one given);
// every input of that name looks its shape up in that slot.
void ApplyTensorFlowSlots(std::vector<NodeInput>* inputs) {
  absl::flat_hash_map<const std::string*, int32_t> last;
  for (const NodeInput& in : *inputs) last[in.name] = in.slot;
  for (NodeInput& in : *inputs) in.slot = last[in.name];
}

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

// The memory of one execution on its node's own device.
MemoryExec MemoryOf(const ExecRecord& exec, bool on_cpu,
                    std::vector<Allocation>* allocations) {
  MemoryExec mem;
  mem.memory_micros = SatAdd(exec.start_micros, exec.duration_micros);
  if (exec.memory == nullptr) return mem;
  const ExecMemoryRecord& m = *exec.memory;
  int64_t residual = 0, requested = 0, peak = 0;
  for (const AllocatorRecord& a : m.allocators) {
    SatInc(&residual, a.live_bytes);
    SatInc(&requested, a.total_bytes);
    SatInc(&peak, a.peak_bytes);
    if (a.allocator.find("GPU") == std::string::npos) continue;
    mem.allocator_bytes_in_use =
        std::max(mem.allocator_bytes_in_use, a.bytes_in_use);
    allocations->insert(allocations->end(), a.allocations.begin(),
                        a.allocations.end());
  }
  for (const OutputRecord& out : m.outputs) {
    SatInc(&mem.output_bytes, out.bytes);
    auto it = std::lower_bound(
        mem.output_memory.begin(), mem.output_memory.end(), out.slot,
        [](const OutputMemory& o, int32_t s) { return o.slot < s; });
    if (it == mem.output_memory.end() || it->slot != out.slot) {
      it = mem.output_memory.insert(it, OutputMemory{out.slot, 0, 0});
    }
    it->bytes = out.bytes;
    it->ptr = out.ptr;
  }
  if (m.has_memory_stats) {
    if (on_cpu) {
      SatInc(&mem.host_temp_bytes, m.temp_bytes);
      SatInc(&mem.host_persistent_bytes, m.persistent_bytes);
    } else {
      SatInc(&mem.accelerator_temp_bytes, m.temp_bytes);
      SatInc(&mem.accelerator_persistent_bytes, m.persistent_bytes);
    }
  }
  const int64_t persistent =
      SatAdd(mem.host_persistent_bytes, mem.accelerator_persistent_bytes);
  const int64_t temp = SatAdd(mem.host_temp_bytes, mem.accelerator_temp_bytes);
  mem.residual_bytes = SatAdd(residual, persistent);
  mem.requested_bytes = SatAdd(SatAdd(requested, persistent), temp);
  mem.peak_bytes = SatAdd(SatAdd(peak, persistent), temp);
  return mem;
}

}  // namespace

// --- Nodes

GraphNode* ModelBuilder::Node(std::string_view name, std::string_view op,
                              bool* created) {
  GraphNode* node = model_->FindMutable(name);
  if (created != nullptr) *created = node == nullptr;
  if (node != nullptr) return node;
  return model_->NewNode(std::string(name), std::string(op));
}

void ModelBuilder::SetInputs(GraphNode* node,
                             const std::vector<std::string_view>& in) {
  if (!node->inputs.empty()) return;
  node->inputs.reserve(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    std::string_view input = in[i];
    // "name:N" is output N of "name"; a ':' not followed by digits alone is
    // part of the name (a trace's "f/enc:0/dot.1", "aten::mm").
    int32_t slot = 0;
    const size_t colon = input.rfind(':');
    if (colon != std::string_view::npos && colon + 1 < input.size() &&
        input.find_first_not_of("0123456789", colon + 1) ==
            std::string_view::npos) {
      if (!absl::SimpleAtoi(std::string(input.substr(colon + 1)), &slot)) {
        slot = 0;
      }
      input = input.substr(0, colon);
    }
    if (!input.empty() && input[0] == '^') input.remove_prefix(1);
    // (The node's own name if it exists, else an interned copy.)
    const GraphNode* src = model_->Find(input);
    node->inputs.push_back(NodeInput{
        static_cast<int32_t>(i), slot,
        src != nullptr ? &src->name : model_->strings_.Intern(input), src});
  }
  ApplyTensorFlowSlots(&node->inputs);
  ++model_->generation_;  // the graph view's structure follows inputs
  ++model_->version_;
}

void ModelBuilder::SetStringAttrs(
    GraphNode* node,
    const std::vector<std::pair<std::string, std::string>>& attrs) {
  if (attrs.empty() || !node->attrs().empty()) return;
  tfpb::ProfileNode holder;
  for (const auto& [key, value] : attrs) {
    (*holder.mutable_attrs())[key].set_s(value);
  }
  holder.SerializeToString(node->mutable_attrs());
  ++model_->version_;
}

void ModelBuilder::AddOpType(GraphNode* node, std::string_view type) {
  model_->AddOpType(node, type);
  ++model_->version_;
}

void ModelBuilder::SetFloatOps(GraphNode* node, int64_t per_run) {
  if (per_run == 0) return;
  node->float_ops = per_run;
  ++model_->version_;
}

void ModelBuilder::SetCode(GraphNode* node,
                           const std::vector<CodeLocation>& frames) {
  if (frames.empty() || !node->code().empty()) return;
  if (next_string_id_ == 0) {
    next_string_id_ = model_->id_to_string_.empty()
                          ? 1
                          : model_->id_to_string_.rbegin()->first + 1;
  }
  const auto id = [this](std::string_view s) {
    auto [it, added] = string_ids_.try_emplace(std::string(s), 0);
    if (added) {
      it->second = next_string_id_++;
      model_->id_to_string_.emplace(it->second, it->first);
    }
    return it->second;
  };
  tfpb::CodeDef code;
  for (const CodeLocation& f : frames) {
    tfpb::CodeDef::Trace* t = code.add_traces();
    t->set_file_id(id(f.file));
    t->set_function_id(id(f.function));
    t->set_lineno(f.lineno);
  }
  code.SerializeToString(node->mutable_code());
  model_->has_code_traces_ = true;
  ++model_->version_;
}

// --- Devices

int32_t ModelBuilder::Device(std::string_view device,
                             std::optional<DeviceKind> kind) {
  const absl::string_view key(device.data(), device.size());
  auto it = device_ids_.find(key);
  if (it != device_ids_.end()) return it->second;
  DeviceInfo info;
  info.name = absl::AsciiStrToLower(key);
  info.kind = kind.has_value() ? *kind : KindOfDevice(info.name);
  info.accelerator = IsPlacedOnAccelerator(info.name);
  const int32_t id = static_cast<int32_t>(devices_.size());
  devices_.push_back(std::move(info));
  device_ids_.emplace(std::string(device), id);
  return id;
}

// --- Steps

void ModelBuilder::BeginStep(int64_t step) {
  step_ = step;
  has_gpu_scheduling_ = has_gpu_stream_ = false;
  model_->steps_.insert(step);
  ++model_->version_;
}

void ModelBuilder::DeviceInStep(int32_t device) {
  const DeviceInfo& dev = devices_[device];
  if (!dev.accelerator) return;
  has_gpu_scheduling_ = true;
  if (dev.kind == DeviceKind::kStreamAll) has_gpu_stream_ = true;
}

void ModelBuilder::AddExec(GraphNode* node, int32_t device,
                           const ExecRecord& exec, bool covered) {
  const DeviceInfo& dev = devices_[device];
  DeviceInStep(device);
  if (exec.start_micros > 0) {
    const int64_t end =
        SatAdd(exec.start_micros,
               std::max(exec.all_end_rel_micros, exec.duration_micros));
    auto [span, added] =
        model_->run_spans_.emplace(step_, TimeSpan{exec.start_micros, end});
    span->second.start_micros =
        std::min(span->second.start_micros, exec.start_micros);
    span->second.end_micros = std::max(span->second.end_micros, end);
  }
  if (dev.kind == DeviceKind::kStream &&
      model_->source_ == ProfileSource::kTensorFlow) {
    StreamWork(covered ? node : nullptr, dev, exec);
  }
  if (node == nullptr) return;
  if (covered) model_->covered_ids_.insert(node->id);
  Record(node, dev, exec);
}

void ModelBuilder::Record(GraphNode* node, const DeviceInfo& dev,
                          const ExecRecord& exec) {
  if (dev.kind == DeviceKind::kPlacement) {
    if (!node->canonical_device().empty()) {
      // A node seen on two canonical devices keeps the first one only.
      if (node->canonical_device() != dev.name) return;
    } else {
      node->set_canonical_device(model_->strings_.Intern(dev.name));
      node->set_host_device(model_->strings_.Intern(HostDeviceOf(dev.name)));
      model_->AddOpType(node, node->canonical_device());
    }
  }
  StepExec& step_exec = MutableExec(node, step_);
  auto [pending, added] = pending_.try_emplace(node);
  ExecDetail& d = pending->second;
  if (added && step_exec.detail != nullptr) model_->DetailInto(step_exec, &d);
  const std::string_view idev = *model_->strings_.Intern(dev.name);

  // Time.
  InsertSorted(&d.devices, idev);
  if (exec.start_micros > 0) {
    if (d.all_start_micros > 0) {
      d.all_start_micros = std::min(d.all_start_micros, exec.start_micros);
    } else {
      d.all_start_micros = exec.start_micros;
    }
    // tfprof rounds very quick TensorFlow ops up to 1us; an event of a
    // PyTorch trace or an XSpace keeps its length (no event grows).
    const int64_t duration =
        exec.duration_micros == 0 &&
                model_->source_ == ProfileSource::kTensorFlow
            ? 1
            : exec.duration_micros;
    d.latest_end_micros =
        std::max(d.latest_end_micros, SatAdd(exec.start_micros, duration));
    const TimeInterval interval{exec.start_micros, duration};
    // Accelerator time counts on the stream:all lane only, CPU time on
    // canonical devices.
    if (dev.kind == DeviceKind::kStreamAll) {
      FindOrAddDevice(&d.accelerator_execs, idev).times.push_back(interval);
    } else if (dev.kind == DeviceKind::kPlacement) {
      FindOrAddDevice(&d.cpu_execs, idev).times.push_back(interval);
      ++step_exec.run_count;  // while loops run a node many times per step
    } else {
      FindOrAddDevice(&d.other_execs, idev).times.push_back(interval);
    }
  }

  // Memory is only taken from the canonical device.
  if (dev.name != node->canonical_device() || exec.start_micros <= 0) return;
  d.memory_execs.push_back(
      MemoryOf(exec, IsPlacedOnCpu(dev.name), &d.allocations));
}

// A GPU stream's node stat is one kernel or copy. TensorFlow's tracer
// labels a kernel "<node>:<OpType> <launch dimensions>" (the kernel's own
// name is not recorded, so the op type names it) and names a copy
// "MEMCPY<kind>" (in the node name or the label).
void ModelBuilder::StreamWork(const GraphNode* graph_node,
                              const DeviceInfo& dev, const ExecRecord& exec) {
  if (exec.start_micros <= 0) return;
  std::string_view label = exec.label;
  const size_t space = label.find(' ');
  std::string_view head = label.substr(0, space);
  const std::string_view rest =
      space == std::string_view::npos ? "" : label.substr(space + 1);
  const size_t colon = head.find(':');
  if (colon != std::string_view::npos) head = head.substr(colon + 1);
  // A RunMetadata's "<node>:<OpType>" names its node before the ':'; a
  // node's own name is whole.
  const bool raw = !exec.raw_name.empty() || graph_node == nullptr;
  const std::string_view node_name =
      raw ? exec.raw_name : std::string_view(graph_node->name);
  const std::string_view node =
      raw ? node_name.substr(0, node_name.find(':')) : node_name;
  Activity& activity = model_->activity_;
  DeviceWork w;
  w.start_ns = SatMul(exec.start_micros, 1000);
  w.duration_ns = SatMul(exec.duration_micros, 1000);
  w.step = step_;
  const size_t memcpy_at = node_name.find("MEMCPY");
  // (A TF timeline's copy is a node, named by its edge, of op type
  // MEMCPY<kind>.)
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
  w.name = activity.Intern(name);
  w.stream = activity.Intern(dev.name);
  if (graph_node != nullptr) w.op = activity.Intern(node);
  if (!copy && rest.substr(0, 5) == "regs:") w.launch = activity.Intern(rest);
  work_.emplace_back(
      exec.place >= 0 ? exec.place : static_cast<int64_t>(work_.size()), w);
}

void ModelBuilder::FlushNode(GraphNode* node) {
  auto it = pending_.find(node);
  if (it == pending_.end()) return;
  model_->StoreExec(it->second, &MutableExec(node, step_));
  pending_.erase(it);
}

void ModelBuilder::EndStep() {
  for (auto& [node, detail] : pending_) {
    model_->StoreExec(detail, &MutableExec(node, step_));
  }
  pending_.clear();
  if (has_gpu_scheduling_ && !has_gpu_stream_) {
    model_->miss_accelerator_stream_ = true;
  }
  if (!work_.empty()) {
    std::stable_sort(
        work_.begin(), work_.end(),
        [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<DeviceWork> work;
    work.reserve(work_.size());
    for (const auto& [place, w] : work_) work.push_back(w);
    model_->activity_.MergeWork(std::move(work));
  }
  work_.clear();
}

// --- Bulk

void ModelBuilder::TakeRecords(Model* other) {
  for (Model::ArenaChunk& c : other->arena_) {
    model_->arena_.push_back(std::move(c));
  }
  model_->arena_used_ += other->arena_used_;
  other->arena_.clear();
  other->arena_used_ = 0;
}

void ModelBuilder::Adopted() {
  model_->sorted_.valid.store(false);
  model_->generation_ = 1;
}

void ModelBuilder::SetNameOrder(std::vector<const GraphNode*> order) {
  if (order.size() != model_->nodes_.size()) return;
  model_->sorted_.nodes = std::move(order);
  model_->sorted_.valid.store(true);
}

// --- The TF1 readers

void Model::AddGraph(const tfcore::GraphDef& graph) {
  ++version_;
  ModelBuilder builder(this);
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
          node->mutable_output_shapes()->emplace_back(
              i, ShapeToVec(shapes.Get(i)));
        }
      }
    }
    if (def.attr_size() > 0) {
      attr_holder.SerializeToString(node->mutable_attrs());
    }
    added.emplace_back(node, &def);
  }
  std::vector<std::string_view> inputs;
  for (auto& [node, def] : added) {
    inputs.assign(def->input().begin(), def->input().end());
    builder.SetInputs(node, inputs);
  }
}

namespace {

// The memory part of a NodeExecStats, when it has one.
bool MemoryRecordOf(const tfcore::NodeExecStats& stat, ExecMemoryRecord* m) {
  if (stat.memory_size() == 0 && stat.output_size() == 0 &&
      !stat.has_memory_stats()) {
    return false;
  }
  *m = ExecMemoryRecord();
  for (const auto& used : stat.memory()) {
    AllocatorRecord& a = m->allocators.emplace_back();
    a.allocator = used.allocator_name();
    a.total_bytes = used.total_bytes();
    a.peak_bytes = used.peak_bytes();
    a.live_bytes = used.live_bytes();
    a.bytes_in_use = used.allocator_bytes_in_use();
    a.allocations.reserve(used.allocation_records_size());
    for (const auto& r : used.allocation_records()) {
      a.allocations.push_back(Allocation{r.alloc_micros(), r.alloc_bytes()});
    }
  }
  for (const auto& out : stat.output()) {
    if (!out.has_tensor_description() ||
        !out.tensor_description().has_allocation_description()) {
      continue;
    }
    const auto& alloc = out.tensor_description().allocation_description();
    m->outputs.push_back(OutputRecord{
        out.slot(), std::max(alloc.allocated_bytes(), alloc.requested_bytes()),
        alloc.ptr()});
  }
  if (stat.has_memory_stats()) {
    m->has_memory_stats = true;
    m->temp_bytes = stat.memory_stats().temp_memory_size();
    m->persistent_bytes = stat.memory_stats().persistent_memory_size();
  }
  return true;
}

}  // namespace

absl::Status Model::AddRunMeta(int64_t step,
                               const tfcore::RunMetadata& run_meta) {
  if (!run_meta.has_step_stats()) {
    return absl::InvalidArgumentError(
        absl::StrCat("RunMetadata for step ", step, " has no step_stats"));
  }
  ModelBuilder builder(this);
  builder.BeginStep(step);
  ExecMemoryRecord memory;
  for (const auto& dev_stat : run_meta.step_stats().dev_stats()) {
    const int32_t dev = builder.Device(dev_stat.device());
    builder.DeviceInStep(dev);
    for (const auto& stat : dev_stat.node_stats()) {
      ExecRecord exec;
      exec.start_micros = stat.all_start_micros();
      exec.duration_micros = stat.op_end_rel_micros();
      exec.all_end_rel_micros = stat.all_end_rel_micros();
      exec.raw_name = stat.node_name();
      exec.label = stat.timeline_label();
      if (MemoryRecordOf(stat, &memory)) exec.memory = &memory;
      // GPU tracers write "name:OpType"; keep the node name only.
      std::string_view name = exec.raw_name.substr(0, exec.raw_name.find(':'));
      GraphNode* node = FindMutable(name);
      bool covered = true;
      // Nodes absent from the graph (or profiles with no graph at all) are
      // created on the fly, except the runtime's bookkeeping entries.
      if (node == nullptr && name != "RecvTensor" && name != "_SOURCE" &&
          name.find("MEMCPY") == std::string_view::npos) {
        node = NewNode(std::string(name), std::string(name));
        covered = false;
      } else if (node == nullptr) {
        covered = false;
      }
      builder.AddExec(node, dev, exec, covered);
    }
  }
  builder.EndStep();
  return absl::OkStatus();
}

}  // namespace tfprof
