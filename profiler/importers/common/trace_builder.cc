// The builder shared by the trace importers: nodes, executions per step,
// call stacks and notes, written into a model (or exported as GraphDef /
// RunMetadata / OpLogProto).
#include "profiler/importers/common/trace_builder.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "profiler/base/device.h"

namespace tfprof {
namespace trace_internal {

namespace {

constexpr char kGpuDevicePrefix[] =
    "/job:localhost/replica:0/task:0/device:gpu:";

}  // namespace

absl::Status NotAKnownTrace(const std::string& name, bool parsed) {
  if (absl::StrContains(name, ".xplane.pb")) {
    return absl::InvalidArgumentError(absl::StrCat(
        name, parsed ? ": an XSpace with no /host: or /device: plane "
                       "(nothing to profile)"
                     : ": not a readable XSpace: its protobuf does not "
                       "parse (truncated or corrupt?)"));
  }
  // What xprof drew from a capture, saved beside its <host>.xplane.pb.
  for (const char* analysis :
       {".overview_page.pb", ".input_pipeline.pb", ".tensorflow_stats.pb",
        ".kernel_stats.pb", ".pod_viewer.pb", ".op_profile.pb"}) {
    if (absl::EndsWith(name, analysis)) {
      return absl::InvalidArgumentError(absl::StrCat(
          name,
          ": an analysis the TF2 profiler drew from a capture, not a "
          "trace; load the capture's <host>.xplane.pb beside it"));
    }
  }
  // A protobuf by its name that does not parse as an XSpace: one cut short,
  // or another message.
  const bool pb = absl::EndsWith(name, ".pb") || absl::EndsWith(name, ".pb.gz");
  return absl::InvalidArgumentError(absl::StrCat(
      name, ": not a known trace format", kExpectedFormats,
      pb && !parsed ? " (a protobuf that does not parse as an XSpace: one "
                      "truncated or corrupt, or another message; a GraphDef "
                      "goes to --graph_path, a RunMetadata to --run_meta_path)"
                    : ""));
}

std::string GpuDevice(int64_t gpu) {
  return absl::StrCat(kGpuDevicePrefix, gpu);
}

std::string GpuStreamAllDevice(int64_t gpu) {
  return absl::StrCat(kGpuDevicePrefix, gpu, "/stream:all");
}

std::string GpuStreamDevice(int64_t gpu, absl::string_view stream) {
  return absl::StrCat(kGpuDevicePrefix, gpu, "/stream:", stream);
}

std::string ScopeComponent(absl::string_view name) {
  std::string out(name);
  std::replace(out.begin(), out.end(), '/', '_');
  if (out.empty()) out = "_unnamed";
  return out;
}

std::optional<int64_t> RoundToInt64(double x) {
  constexpr double kLimit = 4611686018427387904.0;  // 2^62
  if (!std::isfinite(x) || x >= kLimit || x <= -kLimit) return std::nullopt;
  return static_cast<int64_t>(std::llround(x));
}

// --- TraceBuilder

namespace {

// A node's name: the event's own, ':' and all ("aten::mm"); an empty name
// would be no node.
std::string_view NodeKey(absl::string_view name) {
  return name.empty() ? std::string_view("_unnamed")
                      : std::string_view(name.data(), name.size());
}

// A node name as the TF1 export writes it: a RunMetadata's node names are
// cut at their first ':' when read.
std::string TF1Name(std::string name) {
  std::replace(name.begin(), name.end(), ':', '.');
  return name;
}

// Nanoseconds to the nearest microsecond, halves up.
int64_t NearestMicros(int64_t ns) { return FloorDiv(SatAdd(ns, 500), 1000); }

// The strings AppendPacked wrote, in order (views into `packed`).
std::vector<std::string_view> Unpacked(absl::string_view packed) {
  std::vector<std::string_view> out;
  while (packed.size() >= 4) {
    uint32_t n;
    std::memcpy(&n, packed.data(), sizeof(n));
    out.emplace_back(packed.data() + 4, n);
    packed.remove_prefix(4 + n);
  }
  return out;
}

void AppendPacked(absl::string_view s, std::string* packed) {
  const uint32_t n = static_cast<uint32_t>(s.size());
  char length[4];
  std::memcpy(length, &n, sizeof(n));
  packed->append(length, sizeof(length));
  packed->append(s.data(), s.size());
}

}  // namespace

int32_t TraceBuilder::Op(absl::string_view op) {
  if (ops_.size() == 0) ops_.Id("");  // id 0: no op type
  return static_cast<int32_t>(ops_.Id(std::string_view(op.data(), op.size())));
}

int32_t TraceBuilder::Device(const std::string& device) {
  const size_t known = devices_.size();
  const int32_t id = static_cast<int32_t>(devices_.Id(device));
  if (devices_.size() == known) return id;
  device_kind_.push_back(KindOfDevice(device));
  return id;
}

int32_t TraceBuilder::Node(absl::string_view name, absl::string_view op) {
  const std::string_view key = NodeKey(name);
  auto it = by_name_.find(key);
  if (it != by_name_.end()) {
    NodeInfo& info = nodes_[*it];
    if (info.op == 0 && !op.empty()) info.op = Op(op);
    return *it;
  }
  const int32_t index = static_cast<int32_t>(nodes_.size());
  nodes_.emplace_back();
  NodeInfo& info = nodes_.back();
  info.name = std::string(key);
  info.op = Op(op);
  by_name_.insert(index);
  return index;
}

int32_t TraceBuilder::TypedNode(absl::string_view name, absl::string_view op) {
  std::string key = absl::StrCat(name, std::string(1, '\0'), op);
  auto it = by_name_and_op_.find(key);
  if (it != by_name_and_op_.end()) return it->second;
  std::optional<int32_t> existing = FindNode(name);
  int32_t node;
  if (!existing.has_value()) {
    node = Node(name, op);
  } else if (ops_.Get(nodes_[*existing].op) == op) {
    node = *existing;
  } else {
    node = Node(absl::StrCat(name, "(", op, ")"), op);
    ++retyped_;
  }
  by_name_and_op_.emplace(std::move(key), node);
  return node;
}

const std::string& TraceBuilder::NodeName(int32_t node) const {
  return nodes_[node].name;
}

std::optional<int32_t> TraceBuilder::FindNode(absl::string_view name) const {
  auto it = by_name_.find(NodeKey(name));
  if (it == by_name_.end()) return std::nullopt;
  return *it;
}

void TraceBuilder::SetInputs(int32_t node,
                             const std::vector<std::string>& inputs) {
  std::string& packed = nodes_[node].inputs;
  if (!packed.empty()) return;
  size_t size = 0;  // sized once: a timeline has a list for most nodes
  for (const std::string& in : inputs) size += 4 + in.size();
  packed.reserve(size);
  for (const std::string& in : inputs) AppendPacked(in, &packed);
}

void TraceBuilder::SetCode(int32_t node, const std::vector<Frame>& frames) {
  if (frames.empty() || nodes_[node].code != nullptr) return;
  nodes_[node].code = std::make_unique<std::vector<Frame>>(frames);
}

void TraceBuilder::SetAttr(int32_t node, absl::string_view key,
                           absl::string_view value) {
  auto& attrs = nodes_[node].attrs;
  if (attrs == nullptr) {
    attrs =
        std::make_unique<std::vector<std::pair<std::string, std::string>>>();
  }
  for (const auto& [k, v] : *attrs) {
    if (k == key) return;
  }
  attrs->emplace_back(std::string(key), std::string(value));
}

const std::string& TraceBuilder::ClaimCanonicalDevice(
    int32_t node, const std::string& device) {
  int32_t& claimed = nodes_[node].canonical_device;
  if (claimed < 0 || devices_.Get(claimed).empty()) claimed = Device(device);
  return devices_.Get(claimed);
}

void TraceBuilder::AddFloatOps(int32_t node, int64_t flops) {
  FloatOps& info = flops_[node];
  if (info.runs == 0) {
    info.first = flops;
  } else if (flops != info.first) {
    info.uneven = true;
  }
  info.sum = SatAdd(info.sum, flops);
  ++info.runs;
}

void TraceBuilder::AddOpCost(int32_t node, const OpCost& cost) {
  CostSum& c = costs_[node];
  c.pytorch = SatAdd(c.pytorch, cost.pytorch_float_ops);
  c.bytes = SatAdd(c.bytes, cost.bytes);
  ++c.runs;
  int64_t& d = c.by_dtype[static_cast<size_t>(cost.dtype) % 8];
  d = SatAdd(d, std::max<int64_t>(
                    1, std::max(cost.float_ops, cost.pytorch_float_ops)));
}

TraceBuilder::ExecRef TraceBuilder::AddExec(int64_t step,
                                            const std::string& device,
                                            int32_t node, int64_t start_ns,
                                            int64_t duration_ns) {
  std::unique_ptr<StepData>& data = steps_[step];
  if (data == nullptr) {
    data = std::make_unique<StepData>();
    data->execs.reserve(expected_execs_);
    expected_execs_ = 0;
  }
  if (data->file != file_) {
    data->file = file_;
    touched_.push_back(step);
  }
  const int32_t device_id = Device(device);
  const uint32_t index = static_cast<uint32_t>(data->execs.size());
  data->execs.push_back(Exec{start_ns, duration_ns, node, device_id});
  min_start_ns_ = std::min(min_start_ns_, start_ns);
  ++num_execs_;
  if (device_kind_[device_id] == DeviceKind::kPlacement) {
    data->first_canonical.emplace(node, index);
    nodes_[node].on_canonical = true;
  } else if (device_kind_[device_id] == DeviceKind::kStreamAll) {
    nodes_[node].on_stream_all = true;
  }
  return ExecRef{data.get(), index};
}

ExecMemoryRecord* TraceBuilder::Details(ExecRef exec) {
  std::unique_ptr<ExecMemoryRecord>& details = exec.step->details[exec.index];
  if (details == nullptr) details = std::make_unique<ExecMemoryRecord>();
  return details.get();
}

TraceBuilder::ExecRef TraceBuilder::FirstCanonicalExec(int64_t step,
                                                       int32_t node) const {
  auto s = steps_.find(step);
  if (s == steps_.end()) return ExecRef();
  auto it = s->second->first_canonical.find(node);
  if (it == s->second->first_canonical.end()) return ExecRef();
  return ExecRef{s->second.get(), it->second};
}

void TraceBuilder::MoveExecs(
    const std::string& from,
    const absl::flat_hash_map<int32_t, std::string>& to) {
  if (to.empty()) return;
  const int32_t from_id = Device(from);
  absl::flat_hash_map<int32_t, int32_t> device_of;
  for (const auto& [node, device] : to) device_of[node] = Device(device);
  for (auto& [step, data] : steps_) {
    for (Exec& e : data->execs) {
      if (e.device != from_id) continue;
      auto it = device_of.find(e.node);
      if (it != device_of.end()) e.device = it->second;
    }
  }
}

void TraceBuilder::Note(const std::string& file, const std::string& text) {
  notes_.push_back(absl::StrCat(file, ": ", text));
}

void TraceBuilder::Count(const std::string& file, const std::string& what,
                         int64_t n) {
  auto [it, inserted] =
      count_index_.emplace(std::make_pair(file, what), counts_.size());
  if (inserted) {
    counts_.push_back(Counted{file, what, n});
  } else {
    counts_[it->second].n = SatAdd(counts_[it->second].n, n);
  }
}

std::string TraceBuilder::CountsText() const {
  bool files = false;  // counts of several files name theirs
  for (const Counted& c : counts_) files |= c.file != counts_.front().file;
  std::string out;
  for (const Counted& c : counts_) {
    if (c.n == 0) continue;
    absl::StrAppend(&out, out.empty() ? "" : "; ", files ? c.file + ": " : "",
                    c.n, " ", c.what);
  }
  return out;
}

void TraceBuilder::AddNodeCosts(bool tf1_names) {
  for (const auto& [node, c] : costs_) {
    NodeCost cost;
    cost.node = activity_.Intern(tf1_names ? TF1Name(nodes_[node].name)
                                           : nodes_[node].name);
    cost.pytorch_float_ops = c.pytorch / c.runs;
    cost.bytes = c.bytes / c.runs;
    for (size_t d = 1; d < 8; ++d) {
      if (c.by_dtype[d] > c.by_dtype[static_cast<size_t>(cost.dtype)]) {
        cost.dtype = static_cast<Dtype>(d);
      }
    }
    activity_.AddNodeCost(cost);
  }
  costs_ = {};
}

Activity TraceBuilder::TakeActivity() {
  AddNodeCosts(/*tf1_names=*/true);
  return std::move(activity_);
}

void TraceBuilder::Finish(TraceFormat format) {
  format_ = format;
  activity_.Finish();
  // The lookups are done with.
  by_name_ = NodesByName::Make(NameOfNode{&nodes_});
  by_name_and_op_ = {};
  for (auto& [step, data] : steps_) data->first_canonical = {};

  // Timestamps: tfprof ignores executions whose start is not positive.
  const int64_t min_start = NearestMicros(min_start_ns_);
  if (num_execs_ > 0 && min_start < 1) {
    shift_ = SatAdd(1, -std::max(min_start, INT64_MIN + 2));
    notes_.push_back(absl::StrCat(
        "timestamps shifted by +", shift_,
        "us so that every execution starts after 0 (tfprof ignores starts "
        "<= 0)"));
  }
  // The activity record on the same clock as the executions.
  activity_.Shift(SatMul(shift_, 1000));

  if (retyped_ > 0) {
    notes_.push_back(absl::StrCat(
        retyped_,
        " node names occur with a second op type (e.g. in different "
        "functions); those executions are nodes named \"<name>(<op type>)\""));
  }
  int64_t accelerator_only = 0;
  for (const NodeInfo& info : nodes_) {
    if (info.on_stream_all && !info.on_canonical) ++accelerator_only;
  }
  if (accelerator_only > 0) {
    notes_.push_back(absl::StrCat(
        accelerator_only,
        " nodes have accelerator time but no host (canonical device) "
        "execution in the trace: their run count is 0"));
  }
  int64_t uneven = 0;
  for (const auto& [node, f] : flops_) {
    if (f.runs > 0 && f.uneven) ++uneven;
  }
  if (uneven > 0) {
    notes_.push_back(absl::StrCat(
        uneven,
        " nodes have different float ops per run; their float ops are the "
        "per-run average"));
  }
  for (const Counted& c : counts_) {
    if (c.n == 0) continue;  // counted nothing
    notes_.push_back(absl::StrCat(c.file, ": ", c.n, " ", c.what));
  }
  counts_ = {};
  count_index_ = {};
}

int64_t TraceBuilder::FloatOpsPerRun(int32_t node) const {
  auto f = flops_.find(node);
  // tfprof multiplies the per-run float ops by the run count.
  return f == flops_.end() || f->second.runs == 0
             ? 0
             : f->second.sum / f->second.runs;
}

template <typename Fn>
void TraceBuilder::WalkStep(StepData* data, bool by_node, Fn fn) {
  // Devices in the order of their first execution in the step; then the
  // executions grouped by device, in their order (a stable counting sort).
  const std::vector<Exec>& execs = data->execs;
  std::vector<int32_t> slot(devices_.size(), -1);
  std::vector<uint32_t> first(1, 0);
  for (const Exec& e : execs) {
    if (slot[e.device] < 0) {
      slot[e.device] = static_cast<int32_t>(first.size()) - 1;
      first.push_back(0);
    }
    ++first[slot[e.device] + 1];
  }
  for (size_t k = 1; k < first.size(); ++k) first[k] += first[k - 1];
  std::vector<uint32_t> order(execs.size());
  for (uint32_t i = 0; i < execs.size(); ++i) {
    order[first[slot[execs[i].device]]++] = i;
  }
  // By node: each node's executions together, in that order (a stable sort
  // of the step's executions only), each with its place in it (the order a
  // RunMetadata lists them in).
  std::vector<uint32_t> place;
  if (by_node) {
    place.resize(execs.size());
    for (uint32_t k = 0; k < order.size(); ++k) place[order[k]] = k;
    std::stable_sort(order.begin(), order.end(),
                     [&execs](uint32_t a, uint32_t b) {
                       return execs[a].node < execs[b].node;
                     });
  }
  // Each (node, device)'s running total of nanoseconds so far.
  absl::flat_hash_map<std::pair<int32_t, int32_t>, int64_t> running;
  for (const uint32_t i : order) {
    const Exec& e = execs[i];
    int64_t& before = running[{e.node, e.device}];
    const int64_t after = SatAdd(before, e.duration_ns);
    ExecRecord record;
    record.duration_micros = NearestMicros(after) - NearestMicros(before);
    record.all_end_rel_micros = record.duration_micros;
    before = after;
    record.start_micros = SatAdd(NearestMicros(e.start_ns), shift_);
    if (by_node) record.place = place[i];
    auto details = data->details.find(i);
    if (details != data->details.end()) {
      ExecMemoryRecord* memory = details->second.get();
      if (shift_ != 0) {
        for (AllocatorRecord& a : memory->allocators) {
          for (Allocation& r : a.allocations) {
            r.alloc_micros = SatAdd(r.alloc_micros, shift_);
          }
        }
      }
      record.memory = memory;
    }
    fn(e.device, e.node, record);
  }
}

void TraceBuilder::FreeNodes() {
  std::deque<NodeInfo>().swap(nodes_);
  ops_ = StringTable();
}

void TraceBuilder::FreeAfterLastStep() {
  FreeNodes();
  devices_ = StringTable();
  std::vector<DeviceKind>().swap(device_kind_);
  std::vector<GraphNode*>().swap(model_nodes_);
}

void TraceBuilder::WriteNodes(ModelBuilder* builder) {
  // Each node's own records are freed as it is written, so that the model's
  // nodes take the memory the builder's free.
  AddNodeCosts(/*tf1_names=*/false);
  model_nodes_.resize(nodes_.size());
  std::vector<CodeLocation> frames;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    NodeInfo& info = nodes_[i];
    GraphNode* node = model_nodes_[i] = builder->Node(info.name, OpOf(info));
    std::string().swap(info.name);
    if (info.attrs != nullptr) builder->SetStringAttrs(node, *info.attrs);
    info.attrs.reset();
    builder->SetFloatOps(node, FloatOpsPerRun(static_cast<int32_t>(i)));
    if (info.code != nullptr) {
      frames.clear();
      for (const Frame& f : *info.code) {
        frames.push_back(CodeLocation{f.file, f.function, f.lineno});
      }
      builder->SetCode(node, frames);
      info.code.reset();
    }
  }
  flops_ = {};
  // Inputs name nodes: once every node exists.
  for (size_t i = 0; i < nodes_.size(); ++i) {
    builder->SetInputs(model_nodes_[i], Unpacked(nodes_[i].inputs));
    std::string().swap(nodes_[i].inputs);
  }
  builder->SetActivity(std::move(activity_));
  // The steps need the model's nodes only.
  nodes_written_ = true;
  FreeNodes();
}

void TraceBuilder::WriteSteps(ModelBuilder* builder) {
  if (!nodes_written_) return;  // WriteNodes first
  std::vector<int32_t> device_ids(devices_.size(), -1);
  while (!steps_.empty()) {
    const int64_t step = steps_.begin()->first;
    std::unique_ptr<StepData> data = std::move(steps_.begin()->second);
    steps_.erase(steps_.begin());
    builder->BeginStep(step);
    // Node by node, each node's record stored once it has all of its
    // executions: a step's pending records are one node's, not all.
    int32_t last_node = -1;
    WalkStep(data.get(), /*by_node=*/true,
             [&](int32_t device, int32_t node, const ExecRecord& record) {
               if (node != last_node && last_node >= 0) {
                 builder->FlushNode(model_nodes_[last_node]);
               }
               last_node = node;
               int32_t& id = device_ids[device];
               if (id < 0) {
                 id = builder->Device(devices_.Get(device),
                                      device_kind_[device]);
               }
               builder->AddExec(model_nodes_[node], id, record);
             });
    builder->EndStep();
  }
  FreeAfterLastStep();
}

tfcore::GraphDef TraceBuilder::TakeGraph() {
  tfcore::GraphDef graph;
  if (nodes_written_) return graph;  // the nodes went to a model
  for (NodeInfo& info : nodes_) {
    tfcore::NodeDef* def = graph.add_node();
    def->set_name(TF1Name(info.name));
    def->set_op(OpOf(info));
    for (std::string_view in : Unpacked(info.inputs)) {
      def->add_input(std::string(in));
    }
    std::string().swap(info.inputs);
    if (info.attrs != nullptr) {
      for (const auto& [key, value] : *info.attrs) {
        (*def->mutable_attr())[key].set_s(value);
      }
    }
    info.attrs.reset();
  }
  return graph;
}

tfpb::OpLogProto TraceBuilder::TakeOpLog() {
  tfpb::OpLogProto op_log;
  if (nodes_written_) return op_log;  // the nodes went to a model
  // Call stacks and float ops.
  absl::flat_hash_map<std::string, int64_t> ids;
  auto intern = [&](const std::string& s) -> int64_t {
    auto it = ids.find(s);
    if (it != ids.end()) return it->second;
    const int64_t id = static_cast<int64_t>(ids.size()) + 1;
    ids.emplace(s, id);
    (*op_log.mutable_id_to_string())[id] = s;
    return id;
  };
  for (size_t i = 0; i < nodes_.size(); ++i) {
    NodeInfo& info = nodes_[i];
    const int64_t float_ops = FloatOpsPerRun(static_cast<int32_t>(i));
    if (info.code == nullptr && !flops_.contains(static_cast<int32_t>(i))) {
      continue;
    }
    tfpb::OpLogEntry* entry = op_log.add_log_entries();
    entry->set_name(TF1Name(info.name));
    if (float_ops != 0) entry->set_float_ops(float_ops);
    if (info.code != nullptr) {
      tfpb::CodeDef* code = entry->mutable_code_def();
      for (const Frame& frame : *info.code) {
        tfpb::CodeDef::Trace* t = code->add_traces();
        t->set_file_id(intern(frame.file));
        t->set_function_id(intern(frame.function));
        t->set_lineno(frame.lineno);
      }
      info.code.reset();
    }
  }
  flops_ = {};
  return op_log;
}

namespace {

// An execution's memory as the TF1 message carries it.
void ExportMemory(const ExecMemoryRecord& m, tfcore::NodeExecStats* stat) {
  for (const AllocatorRecord& a : m.allocators) {
    tfcore::AllocatorMemoryUsed* used = stat->add_memory();
    used->set_allocator_name(a.allocator);
    used->set_total_bytes(a.total_bytes);
    used->set_peak_bytes(a.peak_bytes);
    used->set_live_bytes(a.live_bytes);
    if (a.bytes_in_use != 0) used->set_allocator_bytes_in_use(a.bytes_in_use);
    for (const Allocation& r : a.allocations) {
      tfcore::AllocationRecord* rec = used->add_allocation_records();
      rec->set_alloc_micros(r.alloc_micros);
      rec->set_alloc_bytes(r.alloc_bytes);
    }
  }
  for (const OutputRecord& o : m.outputs) {
    tfcore::NodeOutput* out = stat->add_output();
    out->set_slot(o.slot);
    auto* alloc =
        out->mutable_tensor_description()->mutable_allocation_description();
    alloc->set_allocated_bytes(o.bytes);
    alloc->set_ptr(o.ptr);
  }
  if (m.has_memory_stats) {
    stat->mutable_memory_stats()->set_temp_memory_size(m.temp_bytes);
    stat->mutable_memory_stats()->set_persistent_memory_size(
        m.persistent_bytes);
  }
}

}  // namespace

bool TraceBuilder::NextStep(int64_t* step, tfcore::RunMetadata* run_meta) {
  {
    // The previous step's messages go first.
    tfcore::RunMetadata empty;
    run_meta->Swap(&empty);
  }
  if (steps_.empty() || nodes_written_) return false;
  *step = steps_.begin()->first;
  std::unique_ptr<StepData> data = std::move(steps_.begin()->second);
  steps_.erase(steps_.begin());
  tfcore::StepStats* stats = run_meta->mutable_step_stats();
  int32_t last_device = -1;
  WalkStep(data.get(), /*by_node=*/false,
           [&](int32_t device, int32_t node, const ExecRecord& record) {
             if (device != last_device) {
               last_device = device;
               stats->add_dev_stats()->set_device(devices_.Get(device));
             }
             tfcore::NodeExecStats* stat =
                 stats->mutable_dev_stats(stats->dev_stats_size() - 1)
                     ->add_node_stats();
             if (record.memory != nullptr) ExportMemory(*record.memory, stat);
             stat->set_node_name(TF1Name(nodes_[node].name));
             stat->set_all_start_micros(record.start_micros);
             stat->set_op_start_rel_micros(0);
             stat->set_op_end_rel_micros(record.duration_micros);
             stat->set_all_end_rel_micros(record.all_end_rel_micros);
           });
  // After the last one, only the notes are left to give.
  if (steps_.empty()) FreeAfterLastStep();
  return true;
}

void ExecMemory::Record(const std::string& allocator, int64_t bytes,
                        int64_t micros, std::optional<int64_t> in_use) {
  size_t slot = 0;
  while (slot < live_.size() && live_[slot].allocator != allocator) ++slot;
  if (slot == live_.size()) {
    if (record_ == nullptr) record_ = builder_->Details(exec_);
    live_.push_back(Live{allocator, 0, record_->allocators.size()});
    record_->allocators.emplace_back().allocator = allocator;
  }
  AllocatorRecord& used = record_->allocators[live_[slot].index];
  int64_t& live = live_[slot].bytes;
  live = SatAdd(live, bytes);
  if (bytes > 0) used.total_bytes = SatAdd(used.total_bytes, bytes);
  used.peak_bytes = std::max(used.peak_bytes, live);
  used.live_bytes = std::max<int64_t>(live, 0);
  used.allocations.push_back(Allocation{micros, bytes});
  if (in_use.has_value()) used.bytes_in_use = *in_use;
}

}  // namespace trace_internal
}  // namespace tfprof
