#include "profiler/render/view_timeline.h"

#include <map>
#include <memory>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "profiler/base/device.h"
#include "profiler/base/json_writer.h"
#include "re2/re2.h"

namespace tfprof {
namespace {

constexpr int kMaxTopAllocations = 10;

std::string Finish(const std::vector<Json>& metadata,
                   const std::vector<Json>& events) {
  std::string out = "{\"traceEvents\":[";
  bool first = true;
  for (const auto* list : {&metadata, &events}) {
    for (const Json& e : *list) {
      if (!first) out.push_back(',');
      first = false;
      e.WriteTo(&out);
    }
  }
  out += "]}\n";
  return out;
}

bool Trackable(const Model& model, const GraphNode& g, int64_t step) {
  const StepExec* e = g.FindExec(step);
  return e != nullptr && model.Detail(*e).all_start_micros != 0 &&
         !g.canonical_device().empty() && !g.host_device().empty();
}

struct TimeNode {
  const GraphNode* node;
  int64_t start;
  int64_t duration;
  int64_t pid;
  int64_t tid = -1;
  std::vector<TimeNode*> next;
};

struct MemoryDevice {
  std::map<std::string, std::map<int64_t, int64_t>> tensor_allocs;
  std::map<int64_t, int64_t> allocations;  // time -> allocator bytes in use
};

class GraphTimelineBuilder {
 public:
  GraphTimelineBuilder(const ResultTree& r, const Model& m, int64_t step)
      : result_(r), model_(m), step_(step) {
    const auto& regexes = r.options.account_type_regexes;
    account_all_ = regexes.size() == 1 && regexes[0] == ".*";
    for (const std::string& re : regexes) {
      account_.push_back(std::make_unique<RE2>(re, RE2::Quiet));
    }
  }

  Timeline Build() {
    for (size_t c : result_.nodes[0].children) Allocate(c);
    AddFlows();
    AllocateLanes();
    Timeline t;
    int64_t flow_id = 1;
    for (const auto& [pid, lanes] : placed_) {
      for (const auto& [lane, nodes] : lanes) {
        for (const auto& [start, tn] : nodes) {
          Json e = TraceEvent("X", "Op", tn->node->name, pid, lane, start);
          e["dur"] = tn->duration;
          Json args = Json::Object();
          args["name"] = tn->node->name;
          e["args"] = std::move(args);
          metadata_.push_back(std::move(e));
          for (const TimeNode* next : tn->next) {
            const std::string flow = tn->node->name + "_flow";
            Json s = TraceEvent("s", "DataFlow", flow, pid, lane,
                                tn->start + tn->duration);
            s["id"] = flow_id;
            events_.push_back(std::move(s));
            Json f = TraceEvent("t", "DataFlow", flow, next->pid, next->tid,
                                next->start);
            f["id"] = flow_id;
            events_.push_back(std::move(f));
            ++flow_id;
          }
        }
      }
    }
    for (const auto& [dev, mem] : memory_) {
      if (IsPlacedOnCpu(dev)) continue;
      const int64_t pid = next_pid_++;
      metadata_.push_back(TraceProcessName("mem usage on:" + dev, pid));
      const int64_t pid2 = next_pid_++;
      metadata_.push_back(
          TraceProcessName("mem usage on:" + dev + " allocations", pid2));
      int64_t max_in_use = 0, last_point = 0;
      for (const auto& [ts, in_use] : mem.allocations) {
        max_in_use = std::max(max_in_use, in_use);
        // Points closer than 100us are not plotted, to keep files small.
        if (ts - last_point < 100) continue;
        last_point = ts;
        std::map<int64_t, std::vector<std::string>> tensor_mem;
        for (const auto& [name, allocs] : mem.tensor_allocs) {
          auto it = allocs.lower_bound(ts);
          if (it != allocs.begin()) --it;
          if (it != allocs.end() && it->second > 0) {
            tensor_mem[it->second].push_back(name);
          }
        }
        Counter(pid, ts, in_use, tensor_mem);
      }
      if (IsPlacedOnAccelerator(dev)) {
        t.messages.push_back(absl::StrFormat("%s peak memory: %.2f MB", dev,
                                             max_in_use / 1000000.0));
      }
    }
    t.json = Finish(metadata_, events_);
    return t;
  }

 private:
  bool Accounted(const GraphNode& g) const {
    if (account_all_) return true;
    for (const std::string& t : g.op_types) {
      for (const auto& re : account_) {
        if (re->ok() && RE2::FullMatch(t, *re)) return true;
      }
    }
    return false;
  }

  void TrackMemory(const GraphNode& g) {
    MemoryDevice& dev = memory_[g.canonical_device()];
    const StepExec* e = g.FindExec(step_);
    const ExecDetail detail = model_.Detail(*e);
    std::map<int64_t, int64_t> allocs;
    for (const Allocation& a : detail.allocations) {
      allocs[a.alloc_micros] += a.alloc_bytes;
    }
    int64_t persistent = 0;  // the largest of any step, as tfprof does
    ExecDetail other;
    for (const StepExec& s : g.execs) {
      int64_t p = 0;
      model_.DetailInto(s, &other);
      for (const MemoryExec& m : other.memory_execs) {
        p += m.accelerator_persistent_bytes;
      }
      persistent = std::max(persistent, p);
    }
    allocs[0] += persistent;
    int64_t running = 0;
    std::map<int64_t, int64_t>& cumulative = dev.tensor_allocs[g.name];
    for (const auto& [t, bytes] : allocs) {
      running += bytes;
      cumulative[t] = running;
    }
    std::map<int64_t, int64_t> in_use;
    for (const MemoryExec& m : detail.memory_execs) {
      in_use[m.memory_micros] = m.allocator_bytes_in_use;
    }
    for (const auto& [t, bytes] : in_use) {
      if (t > 0) dev.allocations[t] = bytes;
    }
  }

  void Allocate(size_t id) {
    const ResultNode& rn = result_.nodes[id];
    const GraphNode* g = rn.graph_node;
    if (g != nullptr && Trackable(model_, *g, step_)) {
      TrackMemory(*g);
      const ExecDetail detail = model_.Detail(*g->FindExec(step_));
      std::map<std::string, std::vector<TimeInterval>> by_device;
      for (const auto* list : {&detail.accelerator_execs, &detail.cpu_execs}) {
        for (const DeviceTimes& d : *list) {
          auto& v = by_device[std::string(d.device)];
          v.insert(v.end(), d.times.begin(), d.times.end());
        }
      }
      for (const auto& [dev, times] : by_device) {
        auto pid = pids_.find(dev);
        if (pid == pids_.end()) {
          pid = pids_.emplace(dev, next_pid_++).first;
          metadata_.push_back(TraceProcessName(
              absl::StrCat(dev.find("stream") != std::string::npos
                               ? "Op execution threads: "
                               : "Op scheduling threads: ",
                           dev),
              pid->second));
        }
        auto& per_start = nodes_[dev];
        for (const TimeInterval& t : times) {
          if (per_start.count(t.start_micros)) continue;
          per_start[t.start_micros] = std::make_unique<TimeNode>(TimeNode{
              g, t.start_micros, t.duration_micros, pid->second, -1, {}});
        }
      }
    }
    for (size_t c : rn.children) Allocate(c);
  }

  // Arrows only between canonical devices (cpu <-> gpu scheduling).
  void AddFlows() {
    for (auto& [dev, per_start] : nodes_) {
      if (!IsCanonicalDevice(dev)) continue;
      for (auto& [start, tn] : per_start) {
        for (const NodeInput& in : tn->node->inputs) {
          const GraphNode* input = model_.InputNode(in);
          if (input == nullptr || !Accounted(*input) ||
              !Trackable(model_, *input, step_)) {
            continue;
          }
          const ExecDetail detail = model_.Detail(*input->FindExec(step_));
          for (const DeviceTimes& d : detail.cpu_execs) {
            const std::string device(d.device);
            if (!IsCanonicalDevice(device) || device == dev) continue;
            auto other = nodes_.find(device);
            if (other == nodes_.end()) continue;
            for (const TimeInterval& t : d.times) {
              auto src = other->second.find(t.start_micros);
              if (src != other->second.end()) {
                src->second->next.push_back(tn.get());
              }
            }
          }
        }
      }
    }
  }

  // Each op goes to the first lane where it fits after the lane's ops.
  void AllocateLanes() {
    for (auto& [dev, per_start] : nodes_) {
      std::vector<std::map<int64_t, int64_t>>& lanes = lanes_[dev];
      for (auto& [start, tn] : per_start) {
        const int64_t end = start + tn->duration;
        int64_t lane = -1;
        for (size_t i = 0; i < lanes.size(); ++i) {
          lane = static_cast<int64_t>(i);
          for (auto it = lanes[i].rbegin(); it != lanes[i].rend(); ++it) {
            if (it->second > start) {
              lane = -1;
              break;
            }
            if (start > it->second) break;
          }
          if (lane >= 0) break;
        }
        if (lane < 0) {
          lane = static_cast<int64_t>(lanes.size());
          lanes.emplace_back();
        }
        lanes[static_cast<size_t>(lane)][start] = end;
        tn->tid = lane;
        placed_[tn->pid][lane][start] = tn.get();
      }
    }
  }

  void Counter(int64_t pid, int64_t ts, int64_t bytes,
               const std::map<int64_t, std::vector<std::string>>& tensors) {
    Json e = TraceEvent("C", "Memory", "Allocated Bytes", pid, 0, ts);
    Json args = Json::Object();
    args["Allocator Bytes in Use"] = bytes;
    e["args"] = std::move(args);
    events_.push_back(std::move(e));
    Json top = TraceEvent("C", "Memory", "Top Allocations", pid + 1, 0, ts);
    Json targs = Json::Object();
    for (int i = 1; i < kMaxTopAllocations; ++i) {
      targs[absl::StrFormat("Top Allocation %02d", i)] = "N/A";
    }
    int count = 0;
    for (auto it = tensors.rbegin(); it != tensors.rend(); ++it) {
      for (const std::string& name : it->second) {
        if (bytes < it->first || count >= kMaxTopAllocations) break;
        targs[absl::StrFormat("Top Allocation %02d", count)] =
            absl::StrCat(it->first / 1000000.0, " MB from ", name);
        ++count;
        bytes -= it->first;
      }
    }
    targs["Not Displayed"] = absl::StrFormat("%.2f MB", bytes / 1000000.0);
    top["args"] = std::move(targs);
    events_.push_back(std::move(top));
  }

  const ResultTree& result_;
  const Model& model_;
  const int64_t step_;
  bool account_all_ = false;
  std::vector<std::unique_ptr<RE2>> account_;
  int64_t next_pid_ = 0;
  std::map<std::string, int64_t> pids_;
  std::map<std::string, std::map<int64_t, std::unique_ptr<TimeNode>>> nodes_;
  std::map<std::string, std::vector<std::map<int64_t, int64_t>>> lanes_;
  std::map<int64_t, std::map<int64_t, std::map<int64_t, TimeNode*>>> placed_;
  std::map<std::string, MemoryDevice> memory_;
  std::vector<Json> metadata_;
  std::vector<Json> events_;
};

void EmitTree(const ResultTree& r, size_t id, int64_t start, int64_t duration,
              int64_t depth, std::set<int64_t>* seen_depths,
              std::vector<Json>* out) {
  const ResultNode& n = r.nodes[id];
  if (seen_depths->insert(depth).second) {
    out->push_back(TraceProcessName(absl::StrCat("Scope:", depth), depth));
  }
  Json e = TraceEvent("X", "Op", n.name, depth, 0, start);
  e["dur"] = duration;
  Json args = Json::Object();
  args["name"] = n.name;
  args["op"] = n.name;
  e["args"] = std::move(args);
  out->push_back(std::move(e));
  int64_t child_start = start;
  for (size_t c : n.children) {
    const int64_t total = r.nodes[c].total.exec_micros;
    if (total <= 0) continue;
    EmitTree(r, c, child_start, total, depth + 1, seen_depths, out);
    child_start += total;
  }
}

}  // namespace

Timeline GraphTimeline(const ResultTree& result, const Model& model,
                       int64_t step) {
  if (result.nodes.empty()) return Timeline{Finish({}, {}), {}};
  return GraphTimelineBuilder(result, model, step).Build();
}

Timeline TreeTimeline(const ResultTree& result) {
  std::vector<Json> events;
  if (!result.nodes.empty()) {
    std::set<int64_t> seen;
    EmitTree(result, 0, 0, result.nodes[0].total.exec_micros, 0, &seen,
             &events);
  }
  return Timeline{Finish(events, {}), {}};
}

}  // namespace tfprof
