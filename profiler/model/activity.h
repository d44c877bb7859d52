// What a trace records besides tfprof's per-node statistics, at the trace's
// own time resolution (nanoseconds on the trace's clock): the span of each
// step from its own markers, every piece of accelerator work (kernels,
// copies, sets) with the stream it ran on and the op that launched it, the
// ranges the program marked as the accelerator saw them, and the bytes in
// use of each allocator over time. The trace importers fill it;
// GraphDef + RunMetadata and ProfileProto inputs leave it empty (their steps
// and devices come from the node executions).
#ifndef TFPROF_PROFILER_MODEL_ACTIVITY_H_
#define TFPROF_PROFILER_MODEL_ACTIVITY_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "profiler/model/device_peaks.h"
#include "profiler/model/string_table.h"

namespace tfprof {

// A step as its markers delimit it (PyTorch's ProfilerStep#N, an XSpace
// step group): [start_ns, end_ns).
struct StepSpan {
  int64_t step = 0;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
};

enum class WorkKind : uint8_t { kKernel, kMemcpy, kMemset };

// One piece of accelerator work. Strings are Activity::String() ids.
struct DeviceWork {
  int64_t start_ns = 0;
  int64_t duration_ns = 0;
  int64_t step = 0;
  uint32_t name = 0;    // the kernel's (or copy's) name
  uint32_t stream = 0;  // ".../device:gpu:N/stream:S"
  uint32_t op = 0;      // the launching node's name; "" when not known
  uint32_t launch = 0;  // launch dimensions as recorded; "" when not
  // The host call that launched it (cudaLaunchKernel, ...), where the trace
  // links the two: its start and its thread (a HostSpan's thread id);
  // launch_ns kNoLaunch when not known.
  static constexpr int64_t kNoLaunch = INT64_MIN;
  int64_t launch_ns = kNoLaunch;
  uint32_t launch_thread = 0;
  WorkKind kind = WorkKind::kKernel;
  // Float ops of this launch where the importer knows its launching
  // record's (PyTorch traces: the record's float ops, split over its
  // kernels by their time; flops_split when it launched several); -1 when
  // not known per launch (the kernel view then splits the launching node's).
  double float_ops = -1;
  double bytes = 0;  // bytes moved, split likewise
  Dtype dtype = Dtype::kUnknown;
  bool flops_split = false;
};

// One host (CPU) event as the trace records it, nested events included.
struct HostSpan {
  int64_t start_ns = 0;
  int64_t duration_ns = 0;
  int64_t step = 0;
  uint32_t name = 0;    // the event's own name
  uint32_t node = 0;    // the node it counts on
  uint32_t thread = 0;  // "<pid>/<tid>" (Kineto), "<plane>/<line>" (XSpace)
};

// A range the program marked (PyTorch's record_function or ProfilerStep#N)
// as an accelerator stream recorded it (Kineto's gpu_user_annotation): not
// work, the span of the work the range launched on that stream.
struct DeviceAnnotation {
  int64_t start_ns = 0;
  int64_t duration_ns = 0;
  int64_t step = 0;
  uint32_t name = 0;    // the range's name (Activity::String() id)
  uint32_t stream = 0;  // ".../device:gpu:N/stream:S"
};

// The bytes in use of one allocator right after an allocation or a free.
struct MemorySample {
  // bytes_in_use when the trace did not record it: Activity::Finish() makes
  // it the running sum of `bytes` over the allocator's samples.
  static constexpr int64_t kNotRecorded = INT64_MIN;

  int64_t time_ns = 0;
  int64_t bytes_in_use = 0;
  uint32_t allocator = 0;  // Activity::String() id
  uint32_t op = 0;         // the node that allocated or freed; "" if none
  int64_t bytes = 0;       // allocated (> 0) or freed (< 0)
  uint64_t address = 0;    // of the block; 0 when not recorded
};

// What an importer computed of one node's float ops from the shapes a
// trace records (PyTorch traces): per run, averaged over the node's runs.
struct NodeCost {
  uint32_t node = 0;  // the node's name (Activity::String() id)
  // Float ops by PyTorch's own with_flops rule (for -flops_rule pytorch;
  // the node's float_ops hold the extended rule's).
  int64_t pytorch_float_ops = 0;
  // Bytes of the inputs and outputs of the computation counted.
  int64_t bytes = 0;
  // The element type of most of its float ops.
  Dtype dtype = Dtype::kUnknown;
};

// Which rank of a distributed job recorded the trace, as the trace says
// (Kineto's distributedInfo, an XSpace's host name); rank -1 when it does
// not say.
struct RankInfo {
  int64_t rank = -1;
  int64_t world_size = 0;
  std::string backend;  // "nccl", "gloo", ...
  std::string host;     // an XSpace's host name
  // What the times count from on the trace's wall clock: the time since the
  // epoch is base_ns + a time here (Kineto's baseTimeNanoseconds; Shift()
  // keeps it so). 0 when the times are wall-clock times already, as far as
  // the trace says.
  int64_t base_ns = 0;
};

// What a trace records of one collective beyond its name and time: the
// process group and the collective's sequence number in it, where the
// trace has them. Keyed by the event (name id, start) it belongs to.
struct CollectiveTag {
  uint32_t name = 0;  // Activity::String() id of the event's name
  int64_t start_ns = 0;
  uint32_t group = 0;  // process group name; "" when not recorded
  int64_t seq = -1;    // -1 when not recorded
};

// What the trace says of how it was recorded (PyTorch profiler options).
struct Recording {
  bool known = false;  // the trace says (Kineto traces do)
  bool with_flops = false;
  bool record_shapes = false;
};

class Activity {
 public:
  Activity() { strings_.Id(""); }  // id 0 is ""
  Activity(Activity&&) = default;
  Activity& operator=(Activity&&) = default;

  uint32_t Intern(std::string_view s) { return strings_.Id(s); }
  const std::string& String(uint32_t id) const { return strings_.Get(id); }

  // Widens the span of `step` to cover [start_ns, end_ns).
  void AddStepSpan(int64_t step, int64_t start_ns, int64_t end_ns);
  void AddWork(const DeviceWork& work) { work_.push_back(work); }
  void AddHostSpan(const HostSpan& span) { host_.push_back(span); }
  // Room for `n` more host spans (Finish() gives back what stays unused).
  void ReserveHostSpans(size_t n) {
    host_.reserve(host_.size() + n);
    host_reserved_ = true;
  }
  // Adds work to a finished record, keeping it sorted (linear in what is
  // there: a merge, not a sort).
  void MergeWork(std::vector<DeviceWork> work);
  void AddMemorySample(const MemorySample& m) { memory_.push_back(m); }
  void AddAnnotation(const DeviceAnnotation& a) { annotations_.push_back(a); }
  // An accelerator the input declares (".../device:gpu:N"), whether or not
  // anything ran on it.
  void AddDevice(std::string_view device);
  // What an accelerator (".../device:gpu:N") is, as the trace describes it.
  void SetDeviceInfo(std::string_view device, const DeviceInfo& info) {
    device_info_[std::string(device)] = info;
  }
  void AddNodeCost(const NodeCost& cost) { costs_.push_back(cost); }
  void set_recording(const Recording& r) { recording_ = r; }
  void set_rank(const RankInfo& r) { rank_ = r; }
  void AddCollectiveTag(const CollectiveTag& t) { tags_.push_back(t); }
  // A line on how float ops were counted (which rule, what was not
  // counted), for the summary's and advise's notes; `source` names the
  // trace it is about ("rank 1") where a run has several.
  void AddFlopsNote(std::string note, std::string source = "") {
    flops_notes_.emplace_back(std::move(source), std::move(note));
  }
  // Sorts everything: spans by step; work, host spans and annotations by
  // start; memory samples by allocator, then time (ties keep the order they
  // were added in). Fills in the bytes in use that were not recorded.
  void Finish();
  // Moves every time by `ns` (the importer's shift of the executions' clock).
  void Shift(int64_t ns);

  bool empty() const {
    return steps_.empty() && work_.empty() && memory_.empty() &&
           host_.empty() && annotations_.empty();
  }
  const std::vector<StepSpan>& steps() const { return steps_; }
  const std::vector<DeviceWork>& work() const { return work_; }
  const std::vector<MemorySample>& memory() const { return memory_; }
  const std::vector<HostSpan>& host() const { return host_; }
  const std::vector<DeviceAnnotation>& annotations() const {
    return annotations_;
  }
  // Declared accelerators, sorted.
  const std::vector<std::string>& devices() const { return devices_; }
  // Accelerators the trace describes, by ".../device:gpu:N".
  const std::map<std::string, DeviceInfo>& device_info() const {
    return device_info_;
  }
  const std::vector<NodeCost>& node_costs() const { return costs_; }
  const Recording& recording() const { return recording_; }
  const RankInfo& rank() const { return rank_; }
  // Sorted by (name, start) after Finish().
  const std::vector<CollectiveTag>& collective_tags() const { return tags_; }
  // The notes in the order added. With several sources, each distinct note
  // once, saying whose it is: "rank 0, rank 1: ..." (every source's: "each
  // of the 2 ranks: ...", when the sources are ranks).
  std::vector<std::string> flops_notes() const;

 private:
  StringTable strings_;
  absl::flat_hash_map<int64_t, size_t> step_index_;
  std::vector<StepSpan> steps_;
  std::vector<DeviceWork> work_;
  std::vector<MemorySample> memory_;
  std::vector<HostSpan> host_;
  bool host_reserved_ = false;  // ReserveHostSpans (Finish trims)
  std::vector<DeviceAnnotation> annotations_;
  std::vector<std::string> devices_;
  std::map<std::string, DeviceInfo> device_info_;
  std::vector<NodeCost> costs_;
  Recording recording_;
  RankInfo rank_;
  std::vector<CollectiveTag> tags_;
  std::vector<std::pair<std::string, std::string>>
      flops_notes_;  // source, note
};

}  // namespace tfprof

#endif  // TFPROF_PROFILER_MODEL_ACTIVITY_H_
