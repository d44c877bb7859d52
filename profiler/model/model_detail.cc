// The model's encoded step details (model.h's ExecDetail): how one
// execution's record is written into the model's arena and read back.
#include <algorithm>
#include <cstring>
#include <string>
#include <utility>

#include "profiler/base/saturate.h"
#include "profiler/base/wire.h"
#include "profiler/model/model.h"

namespace tfprof {
namespace {

constexpr size_t kArenaChunk = 1 << 20;

// Every interval's time, summed.
int64_t SumTimes(const std::vector<DeviceTimes>& v) {
  int64_t total = 0;
  for (const DeviceTimes& d : v) {
    for (const TimeInterval& t : d.times) SatInc(&total, t.duration_micros);
  }
  return total;
}

}  // namespace

const uint8_t* Model::StoreFramed(std::string_view body) {
  // The varint length, then the body, written into the arena at once.
  uint8_t length[10];
  size_t n = 0;
  for (uint64_t v = body.size();; v >>= 7) {
    length[n++] = static_cast<uint8_t>(v >= 0x80 ? (v & 0x7f) | 0x80 : v);
    if (v < 0x80) break;
  }
  const size_t size = n + body.size();
  if (arena_.empty() || arena_.back().size - arena_.back().used < size) {
    ArenaChunk c;
    c.size = std::max(kArenaChunk, size);
    c.data = std::make_unique<uint8_t[]>(c.size);
    arena_.push_back(std::move(c));
  }
  ArenaChunk& c = arena_.back();
  uint8_t* at = c.data.get() + c.used;
  std::memcpy(at, length, n);
  std::memcpy(at + n, body.data(), body.size());
  c.used += size;
  arena_used_ += size;
  return at;
}

namespace {

// Times are written as differences (from `base`, the step's earliest
// start, then from the previous one), so that they take a byte or two.
int64_t Delta(int64_t value, int64_t from) {
  return static_cast<int64_t>(static_cast<uint64_t>(value) -
                              static_cast<uint64_t>(from));
}
int64_t Undelta(int64_t delta, int64_t from) {
  return static_cast<int64_t>(static_cast<uint64_t>(from) +
                              static_cast<uint64_t>(delta));
}

// Writes varints into a buffer sized beforehand for the most they can take
// (ten bytes each): no capacity check per byte.
class VarintSink {
 public:
  explicit VarintSink(char* at) : begin_(at), at_(at) {}
  void Put(uint64_t v) {
    while (v >= 0x80) {
      *at_++ = static_cast<char>(v | 0x80);
      v >>= 7;
    }
    *at_++ = static_cast<char>(v);
  }
  std::string_view Written() const {
    return std::string_view(begin_, static_cast<size_t>(at_ - begin_));
  }

 private:
  char* const begin_;
  char* at_;
};

// The most varints a list of device times is written as.
size_t TimesVarints(const std::vector<DeviceTimes>& list) {
  size_t n = 1;
  for (const DeviceTimes& d : list) n += 2 + 2 * d.times.size();
  return n;
}

// The most varints StoreExec writes for `d`.
size_t DetailVarints(const ExecDetail& d) {
  size_t n = 2 + TimesVarints(d.accelerator_execs) + TimesVarints(d.cpu_execs) +
             TimesVarints(d.other_execs);
  n += 1;
  for (const MemoryExec& m : d.memory_execs) {
    n += 2 + kMemoryExecFields + 3 * m.output_memory.size();
  }
  n += 1 + 2 * d.allocations.size() + 1 + d.devices.size();
  return n;
}

// `id` gives a device string's id in the model's string table.
template <typename IdOf>
void PutTimes(const std::vector<DeviceTimes>& list, int64_t base,
              const IdOf& id, VarintSink* out) {
  out->Put(list.size());
  for (const DeviceTimes& d : list) {
    out->Put(id(d.device));
    out->Put(d.times.size());
    int64_t prev = base;
    for (const TimeInterval& t : d.times) {
      out->Put(wire::ZigZag(Delta(t.start_micros, prev)));
      out->Put(wire::ZigZag(t.duration_micros));
      prev = t.start_micros;
    }
  }
}

// Reads a list of device times into `list`, reusing the vectors of the
// entries it holds (a reader of many records allocates once, not per
// record); `list` ends with exactly the entries read.
void GetTimes(wire::Reader* r, int64_t base, const StringTable& strings,
              std::vector<DeviceTimes>* list) {
  const uint64_t n = static_cast<uint64_t>(r->Int64());
  size_t used = 0;
  for (uint64_t i = 0; i < n && r->ok(); ++i) {
    const uint64_t id = static_cast<uint64_t>(r->Int64());
    if (id >= strings.size()) {
      r->Fail();
      break;
    }
    if (used == list->size()) list->emplace_back();
    DeviceTimes& d = (*list)[used++];
    d.device = strings.Get(static_cast<uint32_t>(id));
    d.times.clear();
    const uint64_t m = static_cast<uint64_t>(r->Int64());
    int64_t prev = base;
    for (uint64_t j = 0; j < m && r->ok(); ++j) {
      TimeInterval t;
      t.start_micros = Undelta(wire::UnZigZag(r->Int64()), prev);
      t.duration_micros = wire::UnZigZag(r->Int64());
      prev = t.start_micros;
      d.times.push_back(t);
    }
  }
  list->resize(used);
}

}  // namespace

void Model::StoreExec(const ExecDetail& d, StepExec* exec,
                      SharedInterner* ids) {
  exec->accelerator_micros = SumTimes(d.accelerator_execs);
  exec->cpu_micros = SumTimes(d.cpu_execs);
  exec->requested_bytes = exec->peak_bytes = exec->residual_bytes =
      exec->output_bytes = 0;
  for (const MemoryExec& m : d.memory_execs) {
    SatInc(&exec->requested_bytes, m.requested_bytes);
    SatInc(&exec->peak_bytes, m.peak_bytes);
    SatInc(&exec->residual_bytes, m.residual_bytes);
    SatInc(&exec->output_bytes, m.output_bytes);
  }
  if (d.all_start_micros == 0 && d.latest_end_micros == 0 &&
      d.accelerator_execs.empty() && d.cpu_execs.empty() &&
      d.memory_execs.empty() && d.allocations.empty() && d.devices.empty() &&
      d.other_execs.empty()) {
    exec->detail = nullptr;
    return;
  }
  const auto id = [this, ids](std::string_view s) {
    return ids != nullptr ? ids->Id(s) : strings_.Id(s);
  };
  const size_t bound = 10 * DetailVarints(d);
  if (seal_buffer_.size() < bound) seal_buffer_.resize(bound);
  VarintSink out(seal_buffer_.data());
  const int64_t base = d.all_start_micros;
  out.Put(wire::ZigZag(base));
  out.Put(wire::ZigZag(Delta(d.latest_end_micros, base)));
  PutTimes(d.accelerator_execs, base, id, &out);
  PutTimes(d.cpu_execs, base, id, &out);
  out.Put(d.memory_execs.size());
  for (const MemoryExec& m : d.memory_execs) {
    uint64_t mask = 0;
    for (int i = 0; i < kMemoryExecFields; ++i) {
      if (m.*kMemoryExecField[i] != 0) mask |= uint64_t{1} << i;
    }
    out.Put(mask);
    for (int i = 0; i < kMemoryExecFields; ++i) {
      if (mask & (uint64_t{1} << i)) {
        // Field 0 is a time (memory_micros).
        const int64_t v = m.*kMemoryExecField[i];
        out.Put(wire::ZigZag(i == 0 ? Delta(v, base) : v));
      }
    }
    out.Put(m.output_memory.size());
    for (const OutputMemory& o : m.output_memory) {
      out.Put(wire::ZigZag(o.slot));
      out.Put(wire::ZigZag(o.bytes));
      out.Put(o.ptr);
    }
  }
  out.Put(d.allocations.size());
  int64_t prev = base;
  for (const Allocation& a : d.allocations) {
    out.Put(wire::ZigZag(Delta(a.alloc_micros, prev)));
    out.Put(wire::ZigZag(a.alloc_bytes));
    prev = a.alloc_micros;
  }
  out.Put(d.devices.size());
  for (std::string_view dev : d.devices) out.Put(id(dev));
  PutTimes(d.other_execs, base, id, &out);
  exec->detail = StoreFramed(out.Written());
  // (A record of very many intervals does not keep its scratch.)
  if (seal_buffer_.size() > (size_t{1} << 20)) std::string().swap(seal_buffer_);
}

void Model::DetailInto(const StepExec& exec, ExecDetail* d) const {
  // The time lists keep their vectors for GetTimes to reuse.
  d->all_start_micros = d->latest_end_micros = 0;
  d->memory_execs.clear();
  d->allocations.clear();
  d->devices.clear();
  if (exec.detail == nullptr) {
    d->Clear();
    return;
  }
  // The length prefix is at most 5 bytes; the arena always holds the rest.
  wire::Reader len(exec.detail, exec.detail + 10);
  uint64_t size = 0;
  len.Varint(&size);
  wire::Reader r(len.pos(), len.pos() + size);
  const int64_t base = wire::UnZigZag(r.Int64());
  d->all_start_micros = base;
  d->latest_end_micros = Undelta(wire::UnZigZag(r.Int64()), base);
  GetTimes(&r, base, strings_, &d->accelerator_execs);
  GetTimes(&r, base, strings_, &d->cpu_execs);
  const uint64_t n_mem = static_cast<uint64_t>(r.Int64());
  for (uint64_t i = 0; i < n_mem && r.ok(); ++i) {
    MemoryExec m;
    const uint64_t mask = static_cast<uint64_t>(r.Int64());
    for (int f = 0; f < kMemoryExecFields; ++f) {
      if (mask & (uint64_t{1} << f)) {
        const int64_t v = wire::UnZigZag(r.Int64());
        m.*kMemoryExecField[f] = f == 0 ? Undelta(v, base) : v;
      }
    }
    const uint64_t n_out = static_cast<uint64_t>(r.Int64());
    for (uint64_t j = 0; j < n_out && r.ok(); ++j) {
      OutputMemory o;
      o.slot = static_cast<int32_t>(wire::UnZigZag(r.Int64()));
      o.bytes = wire::UnZigZag(r.Int64());
      o.ptr = static_cast<uint64_t>(r.Int64());
      m.output_memory.push_back(o);
    }
    d->memory_execs.push_back(std::move(m));
  }
  const uint64_t n_alloc = static_cast<uint64_t>(r.Int64());
  int64_t prev = base;
  for (uint64_t i = 0; i < n_alloc && r.ok(); ++i) {
    Allocation a;
    a.alloc_micros = Undelta(wire::UnZigZag(r.Int64()), prev);
    a.alloc_bytes = wire::UnZigZag(r.Int64());
    prev = a.alloc_micros;
    d->allocations.push_back(a);
  }
  const uint64_t n_dev = static_cast<uint64_t>(r.Int64());
  for (uint64_t i = 0; i < n_dev && r.ok(); ++i) {
    const uint64_t id = static_cast<uint64_t>(r.Int64());
    if (id >= strings_.size()) {
      r.Fail();  // (the times after it are not read from a wrong place)
      break;
    }
    d->devices.push_back(strings_.Get(static_cast<uint32_t>(id)));
  }
  GetTimes(&r, base, strings_, &d->other_execs);
}

ExecDetail Model::Detail(const StepExec& exec) const {
  ExecDetail d;
  DetailInto(exec, &d);
  return d;
}

}  // namespace tfprof
