// The host plane of an XSpace: each thread's TensorFlow ops (or a JAX
// capture's host events, as paths) nested with the Python frames around them;
// memory events and CUDA launches go to the innermost op.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "profiler/importers/common/nesting.h"
#include "profiler/importers/xspace/xspace_import.h"
#include "profiler/importers/xspace/xspace_names.h"

namespace tfprof {
namespace trace_internal {

void XSpaceImport::ImportHostPlane(const PlaneRef& plane) {
  XPlane meta;
  corrupt_ |= !ParseMeta(plane, &meta);
  PlaneStats stats(meta);
  // Threads are named by their lines; a name two lines share (two python3
  // threads) gets each line's id, or their busy times would be one lane's.
  absl::flat_hash_map<std::string, int> named;
  for (const LineRef& ref : plane.lines) ++named[ref.header.name()];
  XLine line, python;  // one line's events at a time (nesting needs them all)
  for (const LineRef& ref : plane.lines) {
    if (!ParseBytes(ref.bytes, &line)) {
      corrupt_ = true;
      continue;
    }
    std::vector<HostEvent> events;
    events.reserve(line.events_size());
    for (const XEvent& ev : line.events()) {
      CollectHostEvent(stats, meta, line, ev, false, &events);
    }
    auto py = python_lines_.find(line.id());
    if (py != python_lines_.end()) {
      if (!ParseBytes(py->second->bytes, &python)) {
        corrupt_ = true;
      } else {
        for (const XEvent& ev : python.events()) {
          CollectHostEvent(*py_stats_, python_meta_, python, ev, true, &events);
        }
      }
    }
    std::string thread = absl::StrCat(
        plane.name, "/",
        line.name().empty() ? absl::StrCat(line.id()) : line.name());
    if (!line.name().empty() && named[line.name()] > 1) {
      absl::StrAppend(&thread, " #", line.id());
    }
    host_thread_ = builder_->activity()->Intern(thread);
    NestHostEvents(stats, &events);
    AddHostExecs(stats, events, thread);
  }
}

void XSpaceImport::CollectHostEvent(const PlaneStats& stats,
                                    const XPlane& plane, const XLine& line,
                                    const XEvent& ev, bool python,
                                    std::vector<HostEvent>* events) {
  HostEvent h;
  if (!TimeOf(line, ev, &h.start, &h.duration)) {
    ++bad_events_;
    return;
  }
  h.event = &ev;
  h.start_ns = StartNs(line, ev);
  h.duration_ns = DurationNs(ev);
  h.md = Metadata(plane, ev);
  const absl::string_view name =
      h.md != nullptr ? absl::string_view(h.md->name()) : "";
  if (python || (jax_ && absl::StartsWith(name, "$"))) {
    if (!absl::StartsWith(name, "$")) return;
    h.kind = HostKind::kPython;
    h.name = name;
  } else if (!jax_ && SplitTfOp(name, &h.name, &h.type)) {
    h.kind = HostKind::kOp;
  } else if (!jax_ && absl::StartsWith(name, kIteratorPrefix)) {
    h.kind = HostKind::kOp;  // a tf.data iterator: counted like an op
    h.name = name;
    h.type = kDatasetType;
  } else if (name == "MemoryAllocation" || name == "MemoryDeallocation") {
    h.kind = HostKind::kOther;
    h.memory = true;
    h.deallocation = name == "MemoryDeallocation";
  } else if (stats.Find(ev, h.md, "correlation_id") != nullptr) {
    h.kind = HostKind::kOther;
  } else if (jax_ && !name.empty() && name != "<UNKNOWN>") {
    h.kind = HostKind::kOp;  // a JAX capture's host events are its ops
    h.name = name;
    h.type = name;
  } else {
    return;  // other host activity: not an op
  }
  events->push_back(std::move(h));
}

void XSpaceImport::NestHostEvents(const PlaneStats& stats,
                                  std::vector<HostEvent>* events) {
  const int32_t n = static_cast<int32_t>(events->size());
  std::vector<int32_t> order(n);
  for (int32_t i = 0; i < n; ++i) order[i] = i;
  SortForNesting(
      *events, [](const HostEvent&) { return 0; }, &order);
  op_stack_.clear();
  py_stack_.clear();
  for (int32_t i : order) {
    const HostEvent& h = (*events)[i];
    PopEnded(*events, h.start, &op_stack_);
    PopEnded(*events, h.start, &py_stack_);
    switch (h.kind) {
      case HostKind::kPython:
        py_stack_.push_back(i);
        break;
      case HostKind::kOther:
        NestOther(stats, i, events);
        break;
      case HostKind::kOp:
        NestOp(stats, i, events);
        break;
    }
  }
}

void XSpaceImport::NestOther(const PlaneStats& stats, int32_t i,
                             std::vector<HostEvent>* events) {
  HostEvent& h = (*events)[i];
  int32_t owner = op_stack_.empty() ? -1 : op_stack_.back();
  if (jax_ && !h.memory && owner < 0) {
    // A launch outside any host op counts as an op of its own (the copy it
    // starts is its work), as a PyTorch runtime call outside any op does.
    h.kind = HostKind::kOp;
    h.name = h.md != nullptr ? absl::string_view(h.md->name()) : "";
    h.type = h.name;
    NestOp(stats, i, events);
    owner = i;
  }
  if (h.memory) {
    AddMemorySample(stats, h, owner < 0 ? -1 : (*events)[owner].node);
    if (owner < 0) {
      ++orphan_memory_;
    } else if (jax_) {
      // A JAX capture's allocations are the XLA programs' buffers, made by
      // the runtime while it dispatches: samples of the allocators' bytes
      // in use (with the host event around them as their op), not bytes of
      // that host event.
      ++program_memory_;
    } else {
      (*events)[owner].memory_events.push_back(i);
    }
    return;
  }
  const std::string ctx = stats.Text(*h.event, h.md, "context_id").value_or("");
  const std::string corr =
      stats.Text(*h.event, h.md, "correlation_id").value_or("");
  if (owner >= 0) {
    launches_[absl::StrCat(ctx, "/", corr)] = Launch{
        (*events)[owner].node, (*events)[owner].step, h.start_ns, host_thread_};
  } else if (root_steps_) {
    launches_[absl::StrCat(ctx, "/", corr)] =
        Launch{-1, StepOf(std::nullopt, h.start), DeviceWork::kNoLaunch, 0};
  }
}

void XSpaceImport::NestOp(const PlaneStats& stats, int32_t i,
                          std::vector<HostEvent>* events) {
  HostEvent& h = (*events)[i];
  h.exclusive_ns = h.duration_ns;
  if (!op_stack_.empty()) {
    HostEvent& parent = (*events)[op_stack_.back()];
    parent.exclusive_ns -= NestedNanos(h, parent);
  }
  if (jax_) {
    h.node = HostPathNode(&h, *events);
  } else {
    h.node = h.type == kDatasetType
                 ? builder_->TypedNode(DatasetNodeName(h.name), h.type)
                 : builder_->TypedNode(h.name, h.type);
  }
  h.step = StepOf(stats.Int(*h.event, h.md, "group_id"), h.start);
  if (!py_stack_.empty() && !builder_->HasCode(h.node)) {
    builder_->SetCode(h.node,
                      OpenFrames(*events, py_stack_, [](const HostEvent& py) {
                        return ParsePythonEvent(py.name);
                      }));
  }
  op_stack_.push_back(i);
}

int32_t XSpaceImport::HostPathNode(HostEvent* h,
                                   const std::vector<HostEvent>& events) {
  if (!op_stack_.empty()) {
    const HostEvent& parent = events[op_stack_.back()];
    if (parent.depth < kMaxPathDepth) {
      h->base = parent.node;
      h->depth = parent.depth + 1;
    } else {
      h->base = parent.base;
      h->depth = parent.depth;
    }
  } else {
    h->depth = 1;
  }
  const std::string component = ScopeComponent(h->name);
  return builder_->Node(
      h->base >= 0 ? absl::StrCat(builder_->NodeName(h->base), "/", component)
                   : component,
      h->type);
}

void XSpaceImport::AddMemorySample(const PlaneStats& stats, const HostEvent& h,
                                   int32_t node) {
  std::optional<int64_t> bytes = stats.Int(*h.event, h.md, "allocation_bytes");
  std::optional<int64_t> heap = stats.Int(*h.event, h.md, "bytes_allocated");
  if (!bytes.has_value() && !heap.has_value()) return;
  Activity* activity = builder_->activity();
  MemorySample m;
  m.time_ns = h.start_ns;
  m.bytes = h.deallocation ? -bytes.value_or(0) : bytes.value_or(0);
  m.bytes_in_use =
      heap.has_value()
          ? SatAdd(*heap,
                   stats.Int(*h.event, h.md, "bytes_reserved").value_or(0))
          : MemorySample::kNotRecorded;
  m.allocator = activity->Intern(stats.Text(*h.event, h.md, "allocator_name")
                                     .value_or("unknown_allocator"));
  // The op TensorFlow names on the event, else the op around it.
  const std::optional<std::string> tf_op = stats.Text(*h.event, h.md, "tf_op");
  if (tf_op.has_value() && !tf_op->empty()) {
    m.op = activity->Intern(*tf_op);
  } else if (node >= 0) {
    m.op = activity->Intern(builder_->NodeName(node));
  }
  m.address =
      static_cast<uint64_t>(stats.Int(*h.event, h.md, "addr").value_or(0));
  activity->AddMemorySample(m);
}

void XSpaceImport::AddHostExecs(const PlaneStats& stats,
                                const std::vector<HostEvent>& events,
                                const std::string& thread) {
  Activity* activity = builder_->activity();
  const uint32_t thread_id = activity->Intern(thread);
  for (const HostEvent& h : events) {
    if (h.kind != HostKind::kOp) continue;
    activity->AddHostSpan(HostSpan{
        h.start_ns, h.duration_ns, h.step,
        activity->Intern(h.md != nullptr ? h.md->name() : std::string()),
        activity->Intern(builder_->NodeName(h.node)), thread_id});
    const TraceBuilder::ExecRef exec =
        builder_->AddExec(h.step, kHostCpuDevice, h.node, h.start_ns,
                          std::max<int64_t>(h.exclusive_ns, 0));
    AddMemory(stats, events, h, exec);
  }
}

void XSpaceImport::AddMemory(const PlaneStats& stats,
                             const std::vector<HostEvent>& events,
                             const HostEvent& h, TraceBuilder::ExecRef exec) {
  ExecMemory memory(builder_, exec);
  for (int32_t m : h.memory_events) {
    const HostEvent& mem = events[m];
    std::optional<int64_t> bytes =
        stats.Int(*mem.event, mem.md, "allocation_bytes");
    if (!bytes.has_value()) {
      bytes = stats.Int(*mem.event, mem.md, "requested_bytes");
    }
    if (!bytes.has_value() || *bytes < 0) {
      builder_->Count(file_,
                      "memory events without allocation_bytes, "
                      "skipped");
      continue;
    }
    memory.Record(stats.Text(*mem.event, mem.md, "allocator_name")
                      .value_or("unknown_allocator"),
                  mem.deallocation ? -*bytes : *bytes, mem.start,
                  stats.Int(*mem.event, mem.md, "bytes_allocated"));
  }
}

}  // namespace trace_internal
}  // namespace tfprof
