// Writes one node's step record in the model's encoded form (read back by
// Model::DetailInto in model_detail.cc): the one writer of that form, used
// by Model::StoreExec and by decoders that turn a file's records into it
// without an ExecDetail in between.
#ifndef TFPROF_PROFILER_MODEL_DETAIL_ENCODER_H_
#define TFPROF_PROFILER_MODEL_DETAIL_ENCODER_H_

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "profiler/base/saturate.h"
#include "profiler/base/wire.h"
#include "profiler/model/model.h"

namespace tfprof {

// The form: zigzag varints of the earliest start (the base other times are
// written relative to), then the parts in Part's order, each its count of
// entries and the entries, then the latest end. A list of times is, per
// device, its string id, its count of intervals and each interval's start
// (relative to the one before, the first to the base) and duration.
//
// Usage: Start(all_start); the parts' entries in Part's order (a list's
// devices in increasing order of their strings, devices increasing and
// unique), SetLatestEnd at any time; then Close, and store Bytes(). An
// entry of a part before the current one fails the record (ok() is false:
// a decoder then builds an ExecDetail and StoreExec orders it).
class DetailEncoder {
 public:
  enum Part { kAccelerator, kCpu, kDevices, kMemory, kAllocations, kOther };
  static constexpr int kParts = 6;

  // Begins a record whose times are written relative to `all_start` (the
  // step's earliest start).
  // Nothing of an earlier record (finished or given up) carries over.
  void Start(int64_t all_start) {
    if (bytes_.size() > kKeepBytes) std::string().swap(bytes_);
    used_ = 0;
    Room(kBaseRoom + 16);
    used_ = kBaseRoom;
    base_ = all_start;
    latest_ = 0;
    part_ = -1;
    count_ = 0;
    device_open_ = false;
    device_count_ = 0;
    any_ = false;
    ok_ = true;
    accelerator_micros_ = cpu_micros_ = 0;
    requested_ = peak_ = residual_ = output_ = 0;
  }
  void SetLatestEnd(int64_t latest_end) { latest_ = latest_end; }
  // False if an entry came after a later part's.
  bool ok() const { return ok_; }

  // The next device of a list of times (kAccelerator, kCpu or kOther), by
  // its id in the model's strings.
  void BeginDevice(Part list, uint32_t device_id) {
    Enter(list);
    CloseDevice();
    ++count_;
    Room(6);
    Put(device_id);
    device_open_ = true;
    device_at_ = used_++;  // the device's count of intervals
    device_count_ = 0;
    prev_ = base_;
  }
  // An interval of the list's current device.
  void AddInterval(Part list, int64_t start, int64_t duration) {
    if (list != part_ || !device_open_) {
      ok_ = false;
      return;
    }
    Room(20);
    Put(wire::ZigZag(Delta(start, prev_)));
    Put(wire::ZigZag(duration));
    prev_ = start;
    ++device_count_;
    if (list == kAccelerator) SatInc(&accelerator_micros_, duration);
    if (list == kCpu) SatInc(&cpu_micros_, duration);
  }
  void AddDevice(uint32_t device_id) {
    Enter(kDevices);
    ++count_;
    Room(5);
    Put(device_id);
  }
  // One execution's memory (its output_memory sorted by slot, unique).
  void AddMemory(const MemoryExec& m) {
    Enter(kMemory);
    ++count_;
    Room(10 * (2 + kMemoryExecFields + 3 * m.output_memory.size()));
    uint64_t mask = 0;
    for (int i = 0; i < kMemoryExecFields; ++i) {
      if (m.*kMemoryExecField[i] != 0) mask |= uint64_t{1} << i;
    }
    Put(mask);
    for (int i = 0; i < kMemoryExecFields; ++i) {
      if (mask & (uint64_t{1} << i)) {
        const int64_t v = m.*kMemoryExecField[i];  // field 0 is a time
        Put(wire::ZigZag(i == 0 ? Delta(v, base_) : v));
      }
    }
    Put(m.output_memory.size());
    for (const OutputMemory& o : m.output_memory) {
      Put(wire::ZigZag(o.slot));
      Put(wire::ZigZag(o.bytes));
      Put(o.ptr);
    }
    SatInc(&requested_, m.requested_bytes);
    SatInc(&peak_, m.peak_bytes);
    SatInc(&residual_, m.residual_bytes);
    SatInc(&output_, m.output_bytes);
  }
  void AddAllocation(const Allocation& a) {
    Enter(kAllocations);
    ++count_;
    Room(20);
    Put(wire::ZigZag(Delta(a.alloc_micros, prev_)));
    Put(wire::ZigZag(a.alloc_bytes));
    prev_ = a.alloc_micros;
  }

  // Ends the record and writes its sums into `exec`; false if it holds
  // nothing (then there is nothing to store: exec->detail is null).
  bool Close(StepExec* exec) {
    exec->accelerator_micros = accelerator_micros_;
    exec->cpu_micros = cpu_micros_;
    exec->requested_bytes = requested_;
    exec->peak_bytes = peak_;
    exec->residual_bytes = residual_;
    exec->output_bytes = output_;
    exec->detail = nullptr;
    Enter(kParts);
    Room(10);
    Put(wire::ZigZag(Delta(latest_, base_)));
    // The base goes right before the parts, in the room kept for it.
    char head[10];
    const size_t n = static_cast<size_t>(
        wire::PutVarintAt(head, wire::ZigZag(base_)) - head);
    begin_ = kBaseRoom - n;
    std::memcpy(&bytes_[begin_], head, n);
    return any_ || base_ != 0 || latest_ != 0;
  }
  // After Close: the record's bytes.
  std::string_view Bytes() const {
    return std::string_view(bytes_.data() + begin_, used_ - begin_);
  }

 private:
  static constexpr size_t kBaseRoom = 10;
  // (A record of very many intervals does not keep its memory.)
  static constexpr size_t kKeepBytes = size_t{1} << 20;

  static int64_t Delta(int64_t value, int64_t from) {
    return static_cast<int64_t>(static_cast<uint64_t>(value) -
                                static_cast<uint64_t>(from));
  }
  // Makes room for `n` more bytes.
  void Room(size_t n) {
    if (bytes_.size() < used_ + n) {
      bytes_.resize(std::max({bytes_.size() * 2, used_ + n, size_t{256}}));
    }
  }
  void Put(uint64_t v) {
    char* data = bytes_.data();
    used_ = static_cast<size_t>(wire::PutVarintAt(data + used_, v) - data);
  }
  // Moves on to part `p` (kParts: past the last), writing the counts of
  // the current one and of those skipped.
  void Enter(int p) {
    if (p != part_) NextPart(p);
  }
  void NextPart(int p) {
    if (p < part_) {
      ok_ = false;
      return;
    }
    if (part_ >= 0) {
      CloseDevice();
      Patch(count_at_, count_);
      any_ = any_ || count_ > 0;
    }
    Room(static_cast<size_t>(p - part_));
    for (int skipped = part_ + 1; skipped < p; ++skipped) Put(0);
    part_ = p;
    if (p < kParts) {
      count_at_ = used_++;
      count_ = 0;
      prev_ = base_;
    }
  }
  // Writes `v` into the byte kept for it at `at`, moving what follows when
  // it takes more than one.
  void Patch(size_t at, uint64_t v) {
    if (v < 0x80) {
      bytes_[at] = static_cast<char>(v);
      return;
    }
    char tmp[10];
    const size_t n = static_cast<size_t>(wire::PutVarintAt(tmp, v) - tmp);
    Room(n - 1);
    char* data = bytes_.data();
    std::memmove(data + at + n, data + at + 1, used_ - at - 1);
    std::memcpy(data + at, tmp, n);
    used_ += n - 1;
  }
  void CloseDevice() {
    if (!device_open_) return;
    Patch(device_at_, device_count_);
    device_open_ = false;
  }

  std::string bytes_;  // [begin_, used_) the record, after Close
  size_t used_ = 0;
  size_t begin_ = 0;
  int64_t base_ = 0;
  int64_t latest_ = 0;
  int part_ = -1;        // the part being written
  size_t count_at_ = 0;  // where its count goes
  uint64_t count_ = 0;   // its entries so far
  bool device_open_ = false;
  size_t device_at_ = 0;  // where the current device's count goes
  uint64_t device_count_ = 0;
  int64_t prev_ = 0;  // the time the next one is written relative to
  bool any_ = false;  // an entry in any part
  bool ok_ = true;
  int64_t accelerator_micros_ = 0;
  int64_t cpu_micros_ = 0;
  int64_t requested_ = 0, peak_ = 0, residual_ = 0, output_ = 0;
};

}  // namespace tfprof

#endif  // TFPROF_PROFILER_MODEL_DETAIL_ENCODER_H_
