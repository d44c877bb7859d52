#include "profiler/model/activity.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "profiler/base/saturate.h"

namespace tfprof {

void Activity::AddStepSpan(int64_t step, int64_t start_ns, int64_t end_ns) {
  auto [it, inserted] = step_index_.emplace(step, steps_.size());
  if (inserted) {
    steps_.push_back(StepSpan{step, start_ns, end_ns});
    return;
  }
  StepSpan& s = steps_[it->second];
  s.start_ns = std::min(s.start_ns, start_ns);
  s.end_ns = std::max(s.end_ns, end_ns);
}

void Activity::AddDevice(std::string_view device) {
  auto it = std::lower_bound(devices_.begin(), devices_.end(), device);
  if (it == devices_.end() || *it != device) devices_.emplace(it, device);
}

void Activity::Finish() {
  // Room reserved for host spans and left unused (a TF timeline reserves
  // one per complete event) is given back.
  if (host_reserved_) host_.shrink_to_fit();
  host_reserved_ = false;
  std::sort(
      steps_.begin(), steps_.end(),
      [](const StepSpan& a, const StepSpan& b) { return a.step < b.step; });
  step_index_.clear();
  for (size_t i = 0; i < steps_.size(); ++i) step_index_[steps_[i].step] = i;
  std::stable_sort(work_.begin(), work_.end(),
                   [](const DeviceWork& a, const DeviceWork& b) {
                     return a.start_ns < b.start_ns;
                   });
  std::stable_sort(host_.begin(), host_.end(),
                   [](const HostSpan& a, const HostSpan& b) {
                     return a.start_ns < b.start_ns;
                   });
  std::stable_sort(annotations_.begin(), annotations_.end(),
                   [](const DeviceAnnotation& a, const DeviceAnnotation& b) {
                     return a.start_ns < b.start_ns;
                   });
  std::stable_sort(memory_.begin(), memory_.end(),
                   [](const MemorySample& a, const MemorySample& b) {
                     if (a.allocator != b.allocator) {
                       return a.allocator < b.allocator;
                     }
                     return a.time_ns < b.time_ns;
                   });
  std::sort(tags_.begin(), tags_.end(),
            [](const CollectiveTag& a, const CollectiveTag& b) {
              if (a.name != b.name) return a.name < b.name;
              return a.start_ns < b.start_ns;
            });
  int64_t in_use = 0;
  for (size_t i = 0; i < memory_.size(); ++i) {
    MemorySample& m = memory_[i];
    if (i == 0 || memory_[i - 1].allocator != m.allocator) in_use = 0;
    if (m.bytes_in_use == MemorySample::kNotRecorded) {
      m.bytes_in_use = SatAdd(in_use, m.bytes);
    }
    in_use = m.bytes_in_use;
  }
}

void Activity::MergeWork(std::vector<DeviceWork> work) {
  auto by_start = [](const DeviceWork& a, const DeviceWork& b) {
    return a.start_ns < b.start_ns;
  };
  std::stable_sort(work.begin(), work.end(), by_start);
  const size_t middle = work_.size();
  work_.insert(work_.end(), work.begin(), work.end());
  std::inplace_merge(work_.begin(), work_.begin() + middle, work_.end(),
                     by_start);
}

void Activity::Shift(int64_t ns) {
  if (ns == 0) return;
  for (StepSpan& s : steps_) {
    s.start_ns = SatAdd(s.start_ns, ns);
    s.end_ns = SatAdd(s.end_ns, ns);
  }
  for (DeviceWork& w : work_) {
    w.start_ns = SatAdd(w.start_ns, ns);
    if (w.launch_ns != DeviceWork::kNoLaunch) {
      w.launch_ns = SatAdd(w.launch_ns, ns);
    }
  }
  for (HostSpan& h : host_) h.start_ns = SatAdd(h.start_ns, ns);
  for (DeviceAnnotation& a : annotations_) {
    a.start_ns = SatAdd(a.start_ns, ns);
  }
  for (MemorySample& m : memory_) m.time_ns = SatAdd(m.time_ns, ns);
  for (CollectiveTag& t : tags_) t.start_ns = SatAdd(t.start_ns, ns);
  rank_.base_ns = SatAdd(rank_.base_ns, -ns);
}

std::vector<std::string> Activity::flops_notes() const {
  std::vector<std::string> sources;  // in the order first seen
  for (const auto& [source, note] : flops_notes_) {
    if (std::find(sources.begin(), sources.end(), source) == sources.end()) {
      sources.push_back(source);
    }
  }
  std::vector<std::string> out;
  if (sources.size() <= 1) {
    for (const auto& [source, note] : flops_notes_) out.push_back(note);
    return out;
  }
  // Each distinct note once, with the sources that have it.
  std::vector<std::pair<std::string, std::vector<std::string>>> by_note;
  for (const auto& entry : flops_notes_) {
    const std::string& source = entry.first;
    const std::string& note = entry.second;
    auto it = std::find_if(by_note.begin(), by_note.end(),
                           [&](const auto& e) { return e.first == note; });
    if (it == by_note.end()) {
      by_note.emplace_back(note, std::vector<std::string>{source});
    } else if (std::find(it->second.begin(), it->second.end(), source) ==
               it->second.end()) {
      it->second.push_back(source);
    }
  }
  const bool ranks = std::all_of(
      sources.begin(), sources.end(),
      [](const std::string& s) { return s.rfind("rank ", 0) == 0; });
  for (const auto& [note, from] : by_note) {
    const std::string whose =
        from.size() == sources.size() && ranks
            ? absl::StrCat("each of the ", sources.size(), " ranks")
            : absl::StrJoin(from, ", ");
    out.push_back(absl::StrCat(whose, ": ", note));
  }
  return out;
}

}  // namespace tfprof
