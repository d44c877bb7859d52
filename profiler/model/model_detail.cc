// The model's encoded step details (model.h's ExecDetail): how one
// execution's record is written into the model's arena and read back.
#include <algorithm>
#include <cstring>
#include <string>
#include <utility>

#include "profiler/base/saturate.h"
#include "profiler/base/wire.h"
#include "profiler/model/detail_encoder.h"
#include "profiler/model/model.h"

namespace tfprof {
namespace {

constexpr size_t kArenaChunk = 1 << 20;

}  // namespace

Model::Model() = default;
Model::Model(Model&&) noexcept = default;
Model& Model::operator=(Model&&) noexcept = default;
Model::~Model() = default;

const uint8_t* Model::StoreFramed(std::string_view body) {
  // The varint length, then the body, written into the arena at once.
  char length[10];
  const size_t n =
      static_cast<size_t>(wire::PutVarintAt(length, body.size()) - length);
  const size_t size = n + body.size();
  if (arena_.empty() || arena_.back().size - arena_.back().used < size) {
    ArenaChunk c;
    c.size = std::max(kArenaChunk, size);
    // (Not zeroed: every byte is written before it is read.)
    c.data.reset(new uint8_t[c.size]);
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
// start, then from the previous one: DetailEncoder), so that they take a
// byte or two.
int64_t Undelta(int64_t delta, int64_t from) {
  return static_cast<int64_t>(static_cast<uint64_t>(from) +
                              static_cast<uint64_t>(delta));
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
  const auto id = [this, ids](std::string_view s) {
    return ids != nullptr ? ids->Id(s) : strings_.Id(s);
  };
  if (encoder_ == nullptr) encoder_ = std::make_unique<DetailEncoder>();
  DetailEncoder& out = *encoder_;
  out.Start(d.all_start_micros);
  out.SetLatestEnd(d.latest_end_micros);
  const auto times = [&](DetailEncoder::Part part,
                         const std::vector<DeviceTimes>& list) {
    for (const DeviceTimes& dev : list) {
      out.BeginDevice(part, id(dev.device));
      for (const TimeInterval& t : dev.times) {
        out.AddInterval(part, t.start_micros, t.duration_micros);
      }
    }
  };
  // (Device strings are interned in the order they are stored.)
  times(DetailEncoder::kAccelerator, d.accelerator_execs);
  times(DetailEncoder::kCpu, d.cpu_execs);
  for (std::string_view dev : d.devices) out.AddDevice(id(dev));
  for (const MemoryExec& m : d.memory_execs) out.AddMemory(m);
  for (const Allocation& a : d.allocations) out.AddAllocation(a);
  times(DetailEncoder::kOther, d.other_execs);
  if (out.Close(exec)) StoreEncoded(out, exec);
}

void Model::StoreEncoded(const DetailEncoder& encoder, StepExec* exec) {
  exec->detail = StoreFramed(encoder.Bytes());
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
  // (The form: detail_encoder.h.)
  const int64_t base = wire::UnZigZag(r.Int64());
  d->all_start_micros = base;
  GetTimes(&r, base, strings_, &d->accelerator_execs);
  GetTimes(&r, base, strings_, &d->cpu_execs);
  const uint64_t n_dev = static_cast<uint64_t>(r.Int64());
  for (uint64_t i = 0; i < n_dev && r.ok(); ++i) {
    const uint64_t id = static_cast<uint64_t>(r.Int64());
    if (id >= strings_.size()) {
      r.Fail();  // (the times after it are not read from a wrong place)
      break;
    }
    d->devices.push_back(strings_.Get(static_cast<uint32_t>(id)));
  }
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
  GetTimes(&r, base, strings_, &d->other_execs);
  if (r.ok()) d->latest_end_micros = Undelta(wire::UnZigZag(r.Int64()), base);
}

ExecDetail Model::Detail(const StepExec& exec) const {
  ExecDetail d;
  DetailInto(exec, &d);
  return d;
}

}  // namespace tfprof
