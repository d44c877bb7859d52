// PyTorch profiler (Kineto) traces: Chrome Trace Format JSON with CPU-side
// events (cpu_op / user_annotation / cuda_runtime ..., "Operator" and
// "Runtime" in older traces) that nest on their thread, GPU activity
// (kernel, gpu_memcpy, gpu_memset) on stream lanes linked to the runtime
// call that launched it by a correlation id, ProfilerStep#N ranges as steps,
// python_function events or "Call stack" args for call stacks, and
// "[memory]" instant events. Also the legacy autograd profiler's export (a
// bare array of uncategorized X events on "CPU functions", PyTorch built
// without Kineto): CPU ops nested by that profiler's own rule.
#include "profiler/importers/kineto/kineto.h"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <limits>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "profiler/importers/common/nesting.h"
#include "profiler/importers/common/steps.h"
#include "profiler/importers/kineto/kineto_args.h"
#include "profiler/importers/kineto/kineto_collectives.h"
#include "profiler/importers/kineto/kineto_events.h"
#include "profiler/importers/kineto/kineto_import.h"
#include "profiler/importers/kineto/torch_flops.h"
#include "profiler/importers/kineto/torch_structure.h"

namespace tfprof {
namespace trace_internal {

bool KinetoImport::OnEvent(JsonReader* reader, JsonReader::Value& ev) {
  if (!ReadEvent(reader, ev, &f_, &shapes_)) return false;
  std::optional<absl::string_view> ph = f_.ph.String();
  if (!ph.has_value()) {
    builder_->Count(file_, "events without a \"ph\" string, skipped");
    return true;
  }
  const absl::string_view name = f_.name.String().value_or("");
  const absl::string_view category = f_.cat.String().value_or("");
  Event e;
  if (!Classify(*ph, category, name, &e)) return true;
  if (!f_.ts.Micros(&e.start) ||
      (e.kind != Kind::kMemory &&
       (!f_.dur.Micros(&e.duration) || e.duration < 0))) {
    builder_->Count(file_, "events without a valid ts/dur, skipped");
    return true;
  }
  e.name = Intern(&strings_, name);
  e.category = Intern(&strings_, category);
  if (e.kind != Kind::kGpu) std::tie(e.start_ns, e.duration_ns) = NanoTimes(e);
  KeepStepSpan(e, name);
  const int32_t index = static_cast<int32_t>(events_.size());
  if (e.kind != Kind::kGpu) {
    const std::string key = absl::StrCat(f_.pid.IdText().value_or(""), "/",
                                         f_.tid.IdText().value_or(""));
    auto [it, inserted] =
        threads_.emplace(key, static_cast<int32_t>(threads_.size()));
    if (inserted) thread_names_.push_back(key);
    e.thread = it->second;
  }
  KeepArgs(index, &e);
  if (e.kind == Kind::kCpu || e.kind == Kind::kGpu) {
    tags_.Keep(index, name, NanoTimes(e).first, f_);
  }
  events_.push_back(e);
  return true;
}

bool KinetoImport::Classify(absl::string_view ph, absl::string_view category,
                            absl::string_view name, Event* e) {
  if (ph == "i" || ph == "I") {
    if (name != "[memory]") {
      builder_->Count(file_,
                      "instant events (other than [memory]) not "
                      "mapped");
      return false;
    }
    e->kind = Kind::kMemory;
  } else if (ph == "X") {
    if (category == "Trace") return false;  // the profiling session's span
    if (category == "python_function") {
      e->kind = Kind::kPython;
    } else if (IsGpuCategory(category)) {
      e->kind = Kind::kGpu;
    } else if (category == "gpu_user_annotation") {
      KeepGpuAnnotation(name);
      return false;  // not an event the passes nest
    } else if (IsGpuSideNonWork(category)) {
      builder_->Count(file_, absl::StrCat("\"", category,
                                          "\" events not mapped (GPU-side "
                                          "ranges, not work a node "
                                          "launched)"));
      return false;
    } else {
      e->kind = Kind::kCpu;
      e->runtime = IsRuntimeCategory(category);
    }
  } else if (IsIgnoredPhase(ph)) {
    return false;
  } else {
    builder_->Count(file_,
                    absl::StrCat("events of phase \"", ph, "\" not mapped"));
    return false;
  }
  return true;
}

void KinetoImport::KeepArgs(int32_t index, Event* e) {
  // (A field of any other type than an object has no args.)
  switch (e->kind) {
    case Kind::kCpu: {
      const IdKey link =
          MakeIdKey(e->runtime ? f_.correlation : f_.external_id, &strings_);
      if (link.present()) {
        (e->runtime ? by_correlation_ : by_external_id_).emplace(link, index);
      }
      CpuArgs a;
      std::optional<int64_t> flops = f_.flops.Int();
      if (flops.has_value() && *flops >= 0) a.flops = flops;
      std::optional<absl::string_view> stack = f_.call_stack.String();
      if (stack.has_value()) a.call_stack = Intern(&strings_, *stack);
      const std::string& name = strings_.Get(e->name);
      if (HasTorchFlops(name) && (shapes_.has_dims || a.flops.has_value())) {
        a.torch = TorchFlops(name, shapes_.Args());
        // A count PyTorch wrote itself (older traces) is its count.
        if (a.flops.has_value()) {
          a.torch->pytorch = *a.flops;
          if (a.torch->extended < 0) a.torch->extended = *a.flops;
        }
      }
      if (a.flops.has_value() || a.call_stack >= 0 || a.torch.has_value()) {
        e->args = static_cast<int32_t>(cpu_args_.size());
        cpu_args_.push_back(a);
      }
      break;
    }
    case Kind::kMemory: {
      MemoryArgs a;
      a.time_ns = NanoTimes(*e).first;
      a.bytes = f_.bytes.Int();
      a.device_type = f_.device_type.Int().value_or(0);
      a.device_id = f_.device_id.Int().value_or(0);
      a.total_allocated = f_.total_allocated.Int();
      a.address = static_cast<uint64_t>(f_.addr.Int().value_or(0));
      e->args = static_cast<int32_t>(memory_args_.size());
      memory_args_.push_back(a);
      break;
    }
    case Kind::kGpu: {
      GpuArgs a;
      std::tie(a.start_ns, a.duration_ns) = NanoTimes(*e);
      a.correlation = MakeIdKey(f_.correlation, &strings_);
      a.external_id = MakeIdKey(f_.external_id, &strings_);
      if (!a.external_id.present()) {
        a.external_id = MakeIdKey(f_.external_id_lower, &strings_);
      }
      a.device = f_.device.Int().value_or(0);
      if (f_.grid.size > 0 && f_.block.size > 0) {
        a.launch = Intern(&strings_, LaunchText(f_));
      }
      std::string stream = f_.stream.IdText().value_or("");
      if (stream.empty()) {
        std::string tid = f_.tid.IdText().value_or("0");
        absl::string_view t = tid;
        absl::ConsumePrefix(&t, "stream ");
        stream = std::string(absl::StripAsciiWhitespace(t));
      }
      a.stream = Intern(&strings_, stream);
      e->args = static_cast<int32_t>(gpu_args_.size());
      gpu_args_.push_back(a);
      break;
    }
    case Kind::kPython:
    case Kind::kMerged:  // (marked after reading)
      break;
  }
}

void KinetoImport::KeepGpuAnnotation(absl::string_view name) {
  GpuAnnotation a;
  if (!f_.ts.Nanos(&a.start_ns) || !f_.dur.Nanos(&a.duration_ns) ||
      a.duration_ns < 0) {
    builder_->Count(file_, "events without a valid ts/dur, skipped");
    return;
  }
  a.name = Intern(&strings_, name);
  // Kineto writes the GPU as the pid and the stream as the tid.
  a.device = f_.device.Int().value_or(f_.pid.Int().value_or(0));
  a.stream = Intern(&strings_,
                    f_.stream.IdText().value_or(f_.tid.IdText().value_or("0")));
  a.external_id = MakeIdKey(f_.external_id, &strings_);
  annotations_.push_back(a);
}

void KinetoImport::AddGpuAnnotations() {
  Activity* activity = builder_->activity();
  for (const GpuAnnotation& a : annotations_) {
    DeviceAnnotation d;
    d.start_ns = a.start_ns;
    d.duration_ns = a.duration_ns;
    auto it = a.external_id.present() ? by_external_id_.find(a.external_id)
                                      : by_external_id_.end();
    const std::string& name = strings_.Get(a.name);
    const std::optional<int64_t> named = ProfilerStep(name);
    if (it != by_external_id_.end()) {
      d.step = events_[it->second].step;
    } else {
      d.step = named.has_value() ? *named : steps_.At(a.start_ns / 1000);
    }
    d.name = activity->Intern(name);
    d.stream =
        activity->Intern(GpuStreamDevice(a.device, strings_.Get(a.stream)));
    activity->AddAnnotation(d);
  }
}

std::pair<int64_t, int64_t> KinetoImport::NanoTimes(const Event& e) const {
  int64_t start, duration = 0;
  if (!f_.ts.Nanos(&start)) start = SatMul(e.start, 1000);
  if (e.kind != Kind::kMemory && !f_.dur.Nanos(&duration)) {
    duration = SatMul(e.duration, 1000);
  }
  return {start, std::max<int64_t>(duration, 0)};
}

void KinetoImport::KeepStepSpan(const Event& e, absl::string_view name) {
  if (e.kind != Kind::kCpu) return;
  std::optional<int64_t> step = ProfilerStep(name);
  if (!step.has_value()) return;
  const auto [start, duration] = NanoTimes(e);
  builder_->activity()->AddStepSpan(*step, start, SatAdd(start, duration));
}

// Steps: ProfilerStep#N ranges delimit steps by their start times. The
// thread of the first one is the step thread; other threads that record the
// autograd engine's ops run backward for it.
void KinetoImport::FindSteps() {
  autograd_thread_.assign(thread_names_.size(), false);
  for (int32_t i = 0; i < static_cast<int32_t>(events_.size()); ++i) {
    const Event& e = events_[i];
    if (e.kind != Kind::kCpu) continue;
    const std::string& name = strings_.Get(e.name);
    std::optional<int64_t> step = ProfilerStep(name);
    if (step.has_value()) {
      steps_.Add(e.start, *step);
      if (step_thread_ < 0) step_thread_ = e.thread;
      if (e.thread == step_thread_) step_spans_.push_back(i);
    } else if (IsAutogradEngineOp(name)) {
      autograd_thread_[e.thread] = true;
    }
  }
  if (step_thread_ >= 0) autograd_thread_[step_thread_] = false;
  std::sort(step_spans_.begin(), step_spans_.end(), [&](int32_t a, int32_t b) {
    return events_[a].start_ns < events_[b].start_ns;
  });
  steps_.Sort();
}

int32_t KinetoImport::StepSpanAt(int64_t t_ns) const {
  auto it = std::upper_bound(
      step_spans_.begin(), step_spans_.end(), t_ns,
      [&](int64_t t, int32_t s) { return t < events_[s].start_ns; });
  if (it == step_spans_.begin()) return -1;
  const Event& s = events_[*std::prev(it)];
  return t_ns < SatAdd(s.start_ns, s.duration_ns) ? *std::prev(it) : -1;
}

// Nesting on each thread: sort once by (thread, start, longer first), then
// sweep with a stack of open CPU events and one of Python frames.
void KinetoImport::Nest() {
  std::vector<int32_t> order;
  order.reserve(events_.size());
  for (int32_t i = 0; i < static_cast<int32_t>(events_.size()); ++i) {
    if (events_[i].kind != Kind::kGpu) order.push_back(i);
  }
  // The step thread first: ranges adopted from other threads extend its
  // ProfilerStep's name. Then by start and longer first to the nanosecond,
  // as PyTorch orders them (events a microsecond apart or less keep their
  // true order).
  std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    const Event& x = events_[a];
    const Event& y = events_[b];
    const auto kx = std::make_tuple(x.thread != step_thread_, x.thread,
                                    x.start_ns, -x.duration_ns, x.kind, a);
    const auto ky = std::make_tuple(y.thread != step_thread_, y.thread,
                                    y.start_ns, -y.duration_ns, y.kind, b);
    return kx < ky;
  });
  if (!legacy_) MarkMergedRecords(order);
  int32_t current_thread = -1;
  for (int32_t i : order) {
    const Event& e = events_[i];
    if (e.thread != current_thread) {
      cpu_stack_.clear();
      py_stack_.clear();
      current_thread = e.thread;
    }
    PopEndedBy(e, &cpu_stack_);
    PopEndedBy(e, &py_stack_);
    switch (e.kind) {
      case Kind::kPython:
        py_stack_.push_back(i);
        break;
      case Kind::kMemory:
        NestMemory(i);
        break;
      case Kind::kCpu:
        PopOverhangs(e, &cpu_stack_, &partial_);
        NestCpu(i);
        break;
      case Kind::kMerged:
        // Not opened: what it encloses nests in its parent, whose node it
        // takes.
        events_[i].parent = cpu_stack_.empty() ? -1 : cpu_stack_.back();
        events_[i].node =
            cpu_stack_.empty() ? -1 : events_[cpu_stack_.back()].node;
        break;
      case Kind::kGpu:
        break;
    }
  }
}

// PyTorch's profiler (EventList._remove_dup_nodes) drops a CPU record whose
// parent on its thread has it as its only child and the same name: the
// parent keeps its time, and the record's children and kernels. Marks those
// records kMerged, from their nesting (`order`: Nest()'s sweep order).
void KinetoImport::MarkMergedRecords(const std::vector<int32_t>& order) {
  std::vector<int32_t> parent(events_.size(), -1);
  std::vector<int32_t> children(events_.size(), 0);
  std::vector<int32_t> stack;
  int32_t current_thread = -1;
  for (int32_t i : order) {
    const Event& e = events_[i];
    if (e.kind != Kind::kCpu) continue;
    if (e.thread != current_thread) {
      stack.clear();
      current_thread = e.thread;
    }
    PopEndedBy(e, &stack);
    PopOverhangs(e, &stack, nullptr);
    if (!stack.empty()) {
      parent[i] = stack.back();
      ++children[stack.back()];
    }
    stack.push_back(i);
  }
  for (int32_t i : order) {
    const int32_t p = parent[i];
    if (p >= 0 && children[p] == 1 && events_[p].name == events_[i].name) {
      events_[i].kind = Kind::kMerged;
      ++merged_;
    }
  }
}

// A [memory] event goes to the innermost open CPU event; every one is a
// sample of its allocator's bytes in use.
void KinetoImport::NestMemory(int32_t i) {
  const MemoryArgs& a = memory_args_[events_[i].args];
  if (a.bytes.has_value()) {
    Activity* activity = builder_->activity();
    MemorySample m;
    m.time_ns = a.time_ns;
    m.bytes = *a.bytes;
    m.bytes_in_use = a.total_allocated.value_or(MemorySample::kNotRecorded);
    m.address = a.address;
    m.allocator = activity->Intern(AllocatorName(a.device_type, a.device_id));
    if (!cpu_stack_.empty()) {
      m.op =
          activity->Intern(builder_->NodeName(events_[cpu_stack_.back()].node));
    }
    activity->AddMemorySample(m);
  }
  if (cpu_stack_.empty()) {
    ++orphan_memory_;
    return;
  }
  Event& op = events_[cpu_stack_.back()];
  if (op.last_memory < 0) {
    op.first_memory = i;
  } else {
    events_[op.last_memory].next_memory = i;
  }
  op.last_memory = i;
}

// A CPU event: its parent's exclusive time shrinks; its node is the path of
// its ancestors' names; the Python frames open around it are its call stack.
void KinetoImport::NestCpu(int32_t i) {
  Event& e = events_[i];
  e.exclusive_ns = e.duration_ns;
  if (!cpu_stack_.empty()) {
    Event& parent = events_[cpu_stack_.back()];
    e.parent = cpu_stack_.back();
    parent.exclusive_ns -= NestedNanos(e, parent);
    if (parent.depth < kMaxPathDepth) {
      e.anchor = e.parent;
      e.depth = parent.depth + 1;
    } else {
      e.anchor = parent.anchor;
      e.depth = parent.depth;
      ++too_deep_;
    }
  } else {
    e.depth = 1;
  }
  const std::string& name = strings_.Get(e.name);
  const int32_t step_span =
      e.parent < 0 && autograd_thread_[e.thread] ? StepSpanAt(e.start_ns) : -1;
  if (step_span >= 0) {
    Adopt(i, step_span);
  } else {
    const std::string path =
        e.anchor >= 0 ? absl::StrCat(builder_->NodeName(events_[e.anchor].node),
                                     "/", Component(name))
                      : Component(name);
    e.node = builder_->Node(path, OpType(name));
  }
  e.step = steps_.At(e.start);
  if (!py_stack_.empty() && !builder_->HasCode(e.node)) {
    std::vector<Frame> frames = OpenFrames(
        events_, py_stack_,
        [&](const Event& py) { return ParseFrame(strings_.Get(py.name)); });
    DropProfilerFrames(&frames);
    builder_->SetCode(e.node, frames);
  }
  cpu_stack_.push_back(i);
}

void KinetoImport::Adopt(int32_t i, int32_t step) {
  Event& e = events_[i];
  const std::string backward = absl::StrCat(
      builder_->NodeName(events_[step].node), "/", kBackwardComponent);
  builder_->Node(backward, kBackwardWaitType);
  e.node = builder_->Node(
      absl::StrCat(backward, "/", Component(strings_.Get(e.name))),
      OpType(strings_.Get(e.name)));
  e.depth = events_[step].depth + 2;
  adopted_.emplace_back(step, i);
}

void KinetoImport::AccountBackwardWaits() {
  if (adopted_.empty()) return;
  std::sort(adopted_.begin(), adopted_.end());
  absl::flat_hash_map<int32_t, std::vector<NanoRange>> children;
  for (const std::pair<int32_t, int32_t>& a : adopted_) children[a.first];
  auto range = [&](const Event& e) {
    return NanoRange{e.start_ns, SatAdd(e.start_ns, e.duration_ns)};
  };
  for (const Event& e : events_) {
    auto it = e.parent >= 0 ? children.find(e.parent) : children.end();
    if (it != children.end()) it->second.push_back(range(e));
  }
  for (size_t a = 0; a < adopted_.size();) {
    const int32_t index = adopted_[a].first;
    Event& step = events_[index];
    std::vector<NanoRange> ranges;
    for (; a < adopted_.size() && adopted_[a].first == index; ++a) {
      ranges.push_back(range(events_[adopted_[a].second]));
    }
    const BackwardWait w = MeasureBackwardWait(
        range(step), std::move(children[index]), std::move(ranges));
    step.exclusive_ns -= w.wait_ns;
    const int32_t node = builder_->Node(
        absl::StrCat(builder_->NodeName(step.node), "/", kBackwardComponent),
        kBackwardWaitType);
    waits_.push_back(
        Wait{step.step, node, w.start_ns, w.wait_ns - w.covered_ns});
  }
}

// CPU executions, with their memory, call stacks and float ops.
void KinetoImport::AddCpuExecs() {
  Activity* activity = builder_->activity();
  for (const Event& e : events_) {
    if (e.kind != Kind::kCpu && e.kind != Kind::kMerged) continue;
    if (e.node < 0) continue;
    // Every record is on the timeline as recorded; a merged one counts no
    // run of its own (its parent's node and time hold it).
    activity->AddHostSpan(HostSpan{
        e.start_ns, e.duration_ns,
        e.kind == Kind::kMerged ? events_[e.parent].step : e.step,
        activity->Intern(strings_.Get(e.name)),
        activity->Intern(builder_->NodeName(e.node)),
        activity->Intern(thread_names_[static_cast<size_t>(e.thread)])});
    if (e.kind == Kind::kMerged) continue;
    const TraceBuilder::ExecRef exec =
        builder_->AddExec(e.step, kHostCpuDevice, e.node, e.start_ns,
                          std::max<int64_t>(e.exclusive_ns, 0));
    if (e.args >= 0) {
      const CpuArgs& a = cpu_args_[e.args];
      if (!builder_->HasCode(e.node) && a.call_stack >= 0) {
        std::vector<Frame> frames = ParseCallStack(strings_.Get(a.call_stack));
        DropProfilerFrames(&frames);
        builder_->SetCode(e.node, frames);
        ++call_stacks_;
      }
    }
    AddMemory(e, exec);
  }
  for (const Wait& w : waits_) {
    builder_->AddExec(w.step, kHostCpuDevice, w.node, w.start_ns,
                      std::max<int64_t>(w.exclusive_ns, 0));
  }
  AddFlops();
}

void KinetoImport::CountNestedFlops() {
  std::vector<int32_t> parent(events_.size(), -1);
  std::vector<const TorchOpFlops*> flops(events_.size(), nullptr);
  for (size_t i = 0; i < events_.size(); ++i) {
    const Event& e = events_[i];
    parent[i] = e.parent;
    if (e.kind == Kind::kCpu && e.args >= 0 && cpu_args_[e.args].torch) {
      flops[i] = &*cpu_args_[e.args].torch;
    }
  }
  const std::vector<bool> nested = NestedCounted(parent, flops);
  for (size_t i = 0; i < events_.size(); ++i) {
    if (nested[i]) cpu_args_[events_[i].args].nested_counted = true;
  }
}

void KinetoImport::AddFlops() {
  absl::flat_hash_set<int32_t> extended, any;
  FlopTally tally;
  for (const Event& e : events_) {
    if (e.kind != Kind::kCpu || e.args < 0) continue;
    const CpuArgs& a = cpu_args_[e.args];
    if (!a.torch.has_value()) continue;
    const TorchOpFlops& t = *a.torch;
    if (t.extended > 0 && !a.nested_counted) extended.insert(e.node);
    if (t.extended > 0 || t.pytorch > 0) any.insert(e.node);
    tally.Add(t, a.nested_counted);
  }
  for (const Event& e : events_) {
    if (e.kind != Kind::kCpu || !any.contains(e.node)) continue;
    TraceBuilder::OpCost cost;
    if (e.args >= 0 && cpu_args_[e.args].torch.has_value()) {
      const CpuArgs& a = cpu_args_[e.args];
      const TorchOpFlops& t = *a.torch;
      const bool counted = t.extended > 0 && !a.nested_counted;
      cost.float_ops = counted ? t.extended : 0;
      cost.pytorch_float_ops = std::max<int64_t>(t.pytorch, 0);
      cost.bytes = counted ? t.bytes : 0;
      cost.dtype = t.dtype;
    }
    if (extended.contains(e.node))
      builder_->AddFloatOps(e.node, cost.float_ops);
    builder_->AddOpCost(e.node, cost);
  }
  // (Several ranks' traces: each note says whose it is.)
  const std::string source = header_.rank.rank >= 0
                                 ? absl::StrCat("rank ", header_.rank.rank)
                                 : absl::StrCat("trace ", file_index_ + 1);
  for (std::string& note : tally.Notes()) {
    builder_->activity()->AddFlopsNote(std::move(note), source);
  }
}

// Memory allocated and freed while the event ran (outside its nested
// events), per allocator.
void KinetoImport::AddMemory(const Event& e, TraceBuilder::ExecRef exec) {
  ExecMemory memory(builder_, exec);
  for (int32_t m = e.first_memory; m >= 0; m = events_[m].next_memory) {
    const Event& mem = events_[m];
    const MemoryArgs& a = memory_args_[mem.args];
    if (!a.bytes.has_value()) {
      builder_->Count(file_, "[memory] events without integer Bytes, skipped");
      continue;
    }
    memory.Record(AllocatorName(a.device_type, a.device_id), *a.bytes,
                  mem.start, a.total_allocated);
  }
}

int32_t KinetoImport::LaunchCall(const Event& g) const {
  const GpuArgs& a = gpu_args_[g.args];
  auto it = a.correlation.present() ? by_correlation_.find(a.correlation)
                                    : by_correlation_.end();
  return it != by_correlation_.end() ? it->second : -1;
}

int32_t KinetoImport::Launcher(const Event& g, int32_t call) {
  const GpuArgs& a = gpu_args_[g.args];
  if (call >= 0) {
    // The innermost enclosing op of the runtime call; the call itself when
    // it ran outside any op.
    int32_t launcher = call;
    while (events_[launcher].runtime && events_[launcher].parent >= 0) {
      launcher = events_[launcher].parent;
    }
    // The op the event's External id names, when it encloses the call with
    // ranges between (a CUDA graph launched under torch.compile's "## Call
    // CompiledFxGraph ##" range): PyTorch counts the work on that op.
    auto owner = a.external_id.present() ? by_external_id_.find(a.external_id)
                                         : by_external_id_.end();
    if (owner != by_external_id_.end() && owner->second != launcher) {
      for (int32_t up = launcher; up >= 0; up = events_[up].parent) {
        if (up == owner->second) return up;
      }
    }
    return launcher;
  }
  auto e = a.external_id.present() ? by_external_id_.find(a.external_id)
                                   : by_external_id_.end();
  if (e == by_external_id_.end()) return -1;
  ++by_external_;
  return e->second;
}

// GPU activity: on ".../stream:all" for the CPU event that launched it, and
// on the real stream for the device list.
const TorchOpFlops* KinetoImport::CountedFlops(int32_t event) const {
  if (event < 0) return nullptr;
  const Event& e = events_[event];
  if (e.kind != Kind::kCpu || e.args < 0) return nullptr;
  const CpuArgs& a = cpu_args_[e.args];
  if (!a.torch.has_value() || a.torch->extended <= 0 || a.nested_counted) {
    return nullptr;
  }
  return &*a.torch;
}

void KinetoImport::AddGpuExecs() {
  // Each GPU event's launching record (looked up once), and the kernel time
  // of every record with float ops: a kernel's float ops are its launching
  // record's, split over the record's kernels by their time.
  std::vector<int32_t> launchers, calls;
  absl::flat_hash_map<int32_t, std::pair<int64_t, int64_t>> launched;
  bool any_flops = false;
  for (const Event& g : events_) {
    if (g.kind != Kind::kGpu) continue;
    calls.push_back(LaunchCall(g));
    launchers.push_back(Launcher(g, calls.back()));
    if (WorkKindOf(strings_.Get(g.category)) == WorkKind::kKernel &&
        CountedFlops(launchers.back()) != nullptr) {
      auto& [ns, kernels] = launched[launchers.back()];
      ns = SatAdd(ns, gpu_args_[g.args].duration_ns);
      ++kernels;
    }
  }
  for (int32_t i = 0; i < static_cast<int32_t>(events_.size()); ++i) {
    any_flops = any_flops || CountedFlops(i) != nullptr;
  }
  size_t next = 0;
  for (const Event& g : events_) {
    if (g.kind != Kind::kGpu) continue;
    const GpuArgs& a = gpu_args_[g.args];
    const int32_t call = calls[next];
    const int32_t launcher = launchers[next++];
    int32_t node;
    int64_t step;
    if (launcher >= 0) {
      node = events_[launcher].node;
      step = events_[launcher].step;
    } else {
      const std::string& category = strings_.Get(g.category);
      node = builder_->UnlinkedNode(Component(category), category);
      step = steps_.At(g.start);
      ++unlinked_;
    }
    const std::string stream =
        GpuStreamDevice(a.device, strings_.Get(a.stream));
    builder_->AddExec(step, GpuStreamAllDevice(a.device), node, a.start_ns,
                      a.duration_ns);
    builder_->AddExec(step, stream, node, a.start_ns, a.duration_ns);
    DeviceWork flops;
    if (any_flops) flops.float_ops = 0;
    const TorchOpFlops* f = CountedFlops(launcher);
    auto share = launched.find(launcher);
    if (f != nullptr && share != launched.end() && share->second.first > 0 &&
        WorkKindOf(strings_.Get(g.category)) == WorkKind::kKernel) {
      const double part = static_cast<double>(a.duration_ns) /
                          static_cast<double>(share->second.first);
      flops.float_ops = static_cast<double>(f->extended) * part;
      flops.bytes = static_cast<double>(f->bytes) * part;
      flops.dtype = f->dtype;
      flops.flops_split = share->second.second > 1;
    }
    AddWork(g, stream, launcher >= 0 ? node : -1, step, call, flops);
    tags_.Inherit(static_cast<int32_t>(&g - events_.data()),
                  strings_.Get(g.name), a.start_ns, launcher,
                  [&](int32_t e) { return events_[e].parent; });
  }
}

void KinetoImport::AddWork(const Event& g, const std::string& stream,
                           int32_t node, int64_t step, int32_t call,
                           DeviceWork w) {
  const GpuArgs& a = gpu_args_[g.args];
  Activity* activity = builder_->activity();
  w.start_ns = a.start_ns;
  w.duration_ns = a.duration_ns;
  w.step = step;
  w.name = activity->Intern(strings_.Get(g.name));
  w.stream = activity->Intern(stream);
  if (node >= 0) w.op = activity->Intern(builder_->NodeName(node));
  if (a.launch >= 0) w.launch = activity->Intern(strings_.Get(a.launch));
  // The call's own record on the host timeline, for a launch arrow.
  if (call >= 0 && events_[call].node >= 0 && events_[call].thread >= 0) {
    w.launch_ns = events_[call].start_ns;
    w.launch_thread = activity->Intern(
        thread_names_[static_cast<size_t>(events_[call].thread)]);
  }
  w.kind = WorkKindOf(strings_.Get(g.category));
  activity->AddWork(w);
}

// What the header says: the GPUs, and how the trace was recorded.
void KinetoImport::AddHeader() {
  Activity* activity = builder_->activity();
  // Several files of one run: the first one's rank.
  if (activity->rank().rank < 0 && activity->rank().base_ns == 0) {
    activity->set_rank(header_.rank);
  }
  for (const auto& [id, info] : header_.devices) {
    activity->SetDeviceInfo(GpuDevice(id), info);
  }
  if (header_.recording.known) {
    // Several files: what all of them were recorded with.
    Recording r = header_.recording;
    const Recording& before = activity->recording();
    if (before.known) {
      r.with_flops = r.with_flops && before.with_flops;
      r.record_shapes = r.record_shapes && before.record_shapes;
    }
    activity->set_recording(r);
  }
}

void KinetoImport::AddNotes() {
  if (!steps_.empty()) {
    builder_->Note(
        file_, absl::StrCat("steps from ProfilerStep ranges: ", steps_.size(),
                            "; a step's wall time is its ProfilerStep's, "
                            "and an event belongs to the step whose "
                            "ProfilerStep started last before it"));
  }
  steps_.NoteBeforeFirst(file_, "ProfilerStep", builder_);
  builder_->Count(
      file_,
      "events end after the event open at their start: not nested in it "
      "(as PyTorch's key_averages builds its tree)",
      partial_);
  builder_->Count(file_, "[memory] events outside any op, not mapped",
                  orphan_memory_);
  builder_->Count(file_,
                  "records merged into their parent, the only child it "
                  "had, of the same name (as PyTorch's key_averages does)",
                  merged_);
  builder_->Count(file_,
                  "GPU events without a launching runtime call linked to "
                  "their op by External id",
                  by_external_);
  builder_->Count(
      file_, "GPU events linked to no CPU event: on nodes _unlinked/<category>",
      unlinked_);
  if (too_deep_ > 0) {
    builder_->Note(file_, absl::StrCat(too_deep_, " events nested deeper than ",
                                       kMaxPathDepth,
                                       " levels: named as children of their "
                                       "ancestor at that depth"));
  }
  if (call_stacks_ > 0) {
    builder_->Note(file_, "call stacks taken from \"Call stack\" args");
  }
  if (!adopted_.empty()) {
    builder_->Note(
        file_, absl::StrCat(adopted_.size(),
                            " ranges of the autograd threads nested under the "
                            "ProfilerStep they ran in, as "
                            "ProfilerStep/backward/...; the step thread's wait "
                            "for them moved there from the step's own time"));
  }
}

// --- PyTorch's legacy autograd profiler (torch.autograd.profiler without
// Kineto). Its export_chrome_trace writes a bare array of "X" events without
// a category on a process named "CPU functions", times in whole
// microseconds, no ProfilerStep ranges, no shapes; its key_averages() nests
// an op in the open one only when it also ends inside it.

bool KinetoImport::IsLegacyAutogradTrace() const {
  constexpr absl::string_view kProcess = "CPU functions/";
  for (const Event& e : events_) {
    if (e.kind == Kind::kCpu && e.thread >= 0 &&
        strings_.Get(e.category).empty() &&
        absl::StartsWith(thread_names_[e.thread], kProcess)) {
      return true;
    }
  }
  return false;
}

void KinetoImport::PopEndedBy(const Event& e, std::vector<int32_t>* stack) {
  while (!stack->empty()) {
    const Event& open = events_[stack->back()];
    if (SatAdd(open.start_ns, open.duration_ns) > e.start_ns) break;
    stack->pop_back();
  }
}

void KinetoImport::PopOverhangs(const Event& e, std::vector<int32_t>* stack,
                                int64_t* popped) {
  const int64_t end = SatAdd(e.start_ns, e.duration_ns);
  while (!stack->empty()) {
    const Event& open = events_[stack->back()];
    if (end <= SatAdd(open.start_ns, open.duration_ns)) break;
    stack->pop_back();
    if (popped != nullptr) ++*popped;
  }
}

void KinetoImport::NoteLegacyTrace() {
  if (!legacy_) return;
  builder_->Note(file_,
                 "a trace of PyTorch's legacy autograd profiler (no "
                 "Kineto): CPU ops only, in whole microseconds; an op that "
                 "ends after the open one is nested beside it, as the "
                 "profiler's key_averages() counts it");
}

absl::Status ImportKineto(JsonReader* reader, const std::string& file,
                          int64_t file_index, TraceBuilder* builder) {
  return KinetoImport(file, file_index, builder).Run(reader);
}

}  // namespace trace_internal
}  // namespace tfprof
