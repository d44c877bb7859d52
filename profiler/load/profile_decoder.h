// The ProfileProto decoder behind profile_reader.h: turns the fields of a
// serialized tensorflow.tfprof.ProfileProto straight into a Model, one
// top-level field at a time, without protobuf message objects. Two decoders
// can share one file's fields (the second absorbed by the first at the end).
// Used by profile_reader.cc, and by tests that compare its two ways of
// encoding step records.
#ifndef TFPROF_PROFILER_LOAD_PROFILE_DECODER_H_
#define TFPROF_PROFILER_LOAD_PROFILE_DECODER_H_

#include <algorithm>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "profiler/base/parallel.h"
#include "profiler/base/wire.h"
#include "profiler/model/detail_encoder.h"
#include "profiler/model/model.h"
#include "profiler/model/model_builder.h"
#include "profiler/model/string_table.h"

namespace tfprof {

// Field numbers of tfprof_log.proto.
namespace pf {
enum ProfileProto {
  kNodes = 1,
  kHasTrace = 2,
  kSteps = 3,
  kIdToString = 4,
  kMissAcceleratorStream = 5
};
enum ProfileNode {
  kName = 1,
  kInputs = 2,
  kOutputs = 3,
  kShape = 4,
  kOpTypes = 5,
  kCanonicalDevice = 6,
  kHostDevice = 7,
  kFloatOps = 8,
  kOp = 9,
  kTrace = 10,
  kAttrs = 11,
  kExecs = 12,
  kId = 13,
  kSrcOutputIndex = 14,
  kOutputShapes = 15,
  kInputShapes = 16
};
enum ExecProfile {
  kRunCount = 1,
  kAllStart = 2,
  kLatestEnd = 3,
  kAcceleratorExecs = 4,
  kCpuExecs = 5,
  kDevices = 6,
  kMemoryExecs = 7,
  kAllocations = 11
};
}  // namespace pf

// Decodes ProfileProto fields into a Model (through ModelBuilder). Two decoders
// may work on one file at once: the second interns its strings into the
// first's model and hands its nodes and records to it (Absorb) at the end.
class ProfileDecoder {
 public:
  // A decoder whose model will be the result.
  ProfileDecoder() : interner_(builder_.strings(), &strings_mu_) {}
  // A decoder working beside `owner`, which will absorb it.
  explicit ProfileDecoder(ProfileDecoder* owner)
      : interner_(owner->builder_.strings(), &owner->strings_mu_) {}
  ProfileDecoder(const ProfileDecoder&) = delete;
  ProfileDecoder& operator=(const ProfileDecoder&) = delete;

  // Decodes one top-level field whose tag was just read from `r`; `seq` is
  // its place among the file's fields (of two nodes with one key the later
  // one stays). False if the field is malformed.
  bool Field(uint32_t field, int wt, wire::Reader* r, int64_t seq) {
    // A known field with an unexpected wire type is skipped as unknown (as
    // protobuf's own parser does) and remembered: Finish() then refuses
    // the file as another message.
    const int expected =
        field == pf::kNodes || field == pf::kIdToString ? wire::kBytes
        : field == pf::kHasTrace || field == pf::kMissAcceleratorStream
            ? wire::kVarint
            : -1;
    if (expected >= 0 && wt != expected) {
      wrong_type_field_ = field;
      field = 0;
    }
    switch (field) {
      case pf::kNodes:
        saw_known_ = true;
        {
          Entry en;
          return ReadEntry(r, true, &en) && Node(en, seq);
        }
      case pf::kHasTrace:
        saw_known_ = true;
        builder_.SetHasCodeTraces(r->Bool());
        return r->ok();
      case pf::kSteps:
        saw_known_ = true;
        r->RepeatedInt64(wt, [this](int64_t s) { builder_.AddStep(s); });
        return r->ok();
      case pf::kIdToString: {
        saw_known_ = true;
        wire::Reader e = r->Sub();
        int64_t key = 0;
        std::string_view value;
        uint32_t f;
        int w;
        while (e.Next(&f, &w)) {
          if (f == 1 && w == wire::kVarint) {
            key = e.Int64();
          } else if (f == 2 && w == wire::kBytes) {
            value = e.Bytes();
          } else {
            e.Skip(w);
          }
        }
        if (!e.ok() || !r->ok()) return false;
        builder_.SetIdString(key, std::string(value));
        return true;
      }
      case pf::kMissAcceleratorStream:
        saw_known_ = true;
        builder_.SetMissAcceleratorStream(r->Bool());
        return r->ok();
      default:
        saw_unknown_ = true;
        r->Skip(wt);
        return r->ok();
    }
  }

  // Whether step records in TensorFlow's usual order are encoded straight
  // from the file (on by default; off, every record takes the general
  // path: for tests that compare the two).
  void set_direct_records(bool on) { direct_ = on; }
  // How many step records took the direct way so far.
  int64_t direct_records() const { return direct_records_; }

  // Takes over the nodes and step records `other` (made with this decoder
  // as its owner) decoded.
  void Absorb(ProfileDecoder&& other) {
    saw_known_ = saw_known_ || other.saw_known_;
    saw_unknown_ = saw_unknown_ || other.saw_unknown_;
    if (wrong_type_field_ == 0) wrong_type_field_ = other.wrong_type_field_;
    nameless_ += other.nameless_;
    absorbed_ = pending_.size();
    pending_.reserve(pending_.size() + other.pending_.size());
    for (Pending& p : other.pending_) {
      p.inputs_at += inputs_.size();
      p.slots_at += slots_.size();
      pending_.push_back(std::move(p));
    }
    inputs_.insert(inputs_.end(), other.inputs_.begin(), other.inputs_.end());
    slots_.insert(slots_.end(), other.slots_.begin(), other.slots_.end());
    std::vector<Pending>().swap(other.pending_);
    std::vector<std::pair<int32_t, int64_t>>().swap(other.inputs_);
    std::vector<std::pair<int64_t, int32_t>>().swap(other.slots_);
    builder_.TakeRecords(&other.model_);
  }

  absl::StatusOr<Model> Finish(const std::string& source) {
    if (!saw_known_ && saw_unknown_) {
      return absl::InvalidArgumentError(absl::StrCat(
          source,
          ": not a tensorflow.tfprof.ProfileProto (none of its fields are "
          "present)"));
    }
    // Another message read as one (a RunMetadata, a MetaGraphDef) fills
    // the map with nameless nodes, or puts a message where a flag goes.
    if (wrong_type_field_ != 0 ||
        (!pending_.empty() && nameless_ == pending_.size())) {
      return absl::InvalidArgumentError(absl::StrCat(
          source, ": not a tensorflow.tfprof.ProfileProto (",
          wrong_type_field_ != 0 ? absl::StrCat("its field ", wrong_type_field_,
                                                " has the wrong wire type")
                                 : "none of its nodes has a name",
          "); a RunMetadata goes to --run_meta_path, a GraphDef to "
          "--graph_path, an OpLog to --op_log_path"));
    }
    SortPending();
    // A name seen twice keeps its first node (in key order); keys[i] is
    // pending_[i]'s key, and target[i] the node its key stands for.
    std::vector<int64_t> keys(pending_.size());
    std::vector<const GraphNode*> target(pending_.size());
    std::vector<Pending*> kept;
    kept.reserve(pending_.size());
    builder_.ReserveNames(pending_.size());
    // Every view walks the nodes in name order: they are sorted on the
    // second core while this one claims the names (the model would sort
    // them at the first query otherwise), then the unclaimed dropped.
    std::vector<const GraphNode*> by_name;
    const bool parallel = pending_.size() >= kParallelMinItems;
    RunBoth(
        parallel,
        [&] {
          for (size_t i = 0; i < pending_.size(); ++i) {
            Pending& p = pending_[i];
            keys[i] = p.key;
            const GraphNode* holder = builder_.ClaimName(p.node.get());
            if (holder == p.node.get()) kept.push_back(&p);
            target[i] = holder;
          }
        },
        [&] {
          by_name.reserve(pending_.size());
          for (const Pending& p : pending_) by_name.push_back(p.node.get());
          Model::SortByName(&by_name, /*parallel=*/false);
        });
    if (kept.size() < pending_.size()) {
      absl::flat_hash_set<const GraphNode*> dropped;
      for (size_t i = 0; i < pending_.size(); ++i) {
        if (target[i] != pending_[i].node.get()) {
          dropped.insert(pending_[i].node.get());
        }
      }
      by_name.erase(std::remove_if(by_name.begin(), by_name.end(),
                                   [&](const GraphNode* g) {
                                     return dropped.contains(g);
                                   }),
                    by_name.end());
    }
    // Keys are often consecutive: then a key's place is its distance from
    // the first.
    const bool dense =
        keys.empty() || static_cast<uint64_t>(keys.back()) -
                                static_cast<uint64_t>(keys.front()) ==
                            keys.size() - 1;
    builder_.AdoptNodes(kept.size());
    const auto link = [&](size_t begin, size_t end) {
      for (size_t i = begin; i < end; ++i) {
        Link(keys, dense, target, kept[i], i);
      }
    };
    const size_t half = kept.size() / 2;
    RunBoth(
        kept.size() >= kParallelMinItems, [&] { link(0, half); },
        [&] { link(half, kept.size()); });
    pending_.clear();
    builder_.Adopted();
    builder_.SetNameOrder(std::move(by_name));
    return std::move(model_);
  }

 private:
  struct Pending {
    int64_t key = 0;
    int64_t seq = 0;
    std::unique_ptr<GraphNode> node;
    // The node's entries of the inputs map (index -> source key) and of
    // src_output_index (source key -> slot): ranges of the decoder's
    // inputs_ and slots_ (one array each rather than two per node, so that
    // nothing is left behind in the heap among the model's nodes once they
    // are linked).
    size_t inputs_at = 0, inputs_n = 0;
    size_t slots_at = 0, slots_n = 0;
  };

  // pending_ in key order, of one key only the last read.
  void SortPending() {
    const auto before = [](const Pending& a, const Pending& b) {
      return a.key != b.key ? a.key < b.key : a.seq < b.seq;
    };
    // The owner's nodes, then those it absorbed: each part is often in
    // order already (files are written in key order).
    const auto mid = pending_.begin() + static_cast<std::ptrdiff_t>(absorbed_);
    const auto sort = [&](auto b, auto e) {
      if (!std::is_sorted(b, e, before)) std::sort(b, e, before);
    };
    RunBoth(
        pending_.size() >= kParallelMinItems,
        [&] { sort(pending_.begin(), mid); },
        [&] { sort(mid, pending_.end()); });
    std::inplace_merge(pending_.begin(), mid, pending_.end(), before);
    pending_.resize(KeepLast(pending_.begin(), pending_.size(),
                             [](const Pending& p) { return p.key; }));
  }

  // Gives a kept node its inputs (their keys looked up in the sorted,
  // unique `keys`, consecutive if `dense`) and sorted shapes, and makes it
  // the model's index-th node.
  void Link(const std::vector<int64_t>& keys, bool dense,
            const std::vector<const GraphNode*>& target, Pending* p,
            size_t index) {
    GraphNode* node = p->node.get();
    if (p->inputs_n > 0) {
      const auto inputs =
          inputs_.begin() + static_cast<ptrdiff_t>(p->inputs_at);
      const auto slots = slots_.begin() + static_cast<ptrdiff_t>(p->slots_at);
      const auto inputs_end =
          inputs + static_cast<ptrdiff_t>(SortKeepLast(inputs, p->inputs_n));
      const auto slots_end =
          slots + static_cast<ptrdiff_t>(SortKeepLast(slots, p->slots_n));
      node->inputs.reserve(static_cast<size_t>(inputs_end - inputs));
      for (auto in = inputs; in != inputs_end; ++in) {
        const auto [at, src] = *in;
        size_t at_key;
        if (dense) {
          if (src < keys.front() || src > keys.back()) continue;  // no node
          at_key = static_cast<size_t>(src - keys.front());
        } else {
          auto k = std::lower_bound(keys.begin(), keys.end(), src);
          if (k == keys.end() || *k != src) continue;  // not a node
          at_key = static_cast<size_t>(k - keys.begin());
        }
        const GraphNode* from = target[at_key];
        int32_t slot = -1;
        auto s = std::lower_bound(
            slots, slots_end, src,
            [](const auto& e, int64_t key) { return e.first < key; });
        if (s != slots_end && s->first == src) slot = s->second;
        node->inputs.push_back(NodeInput{at, slot, &from->name, from});
      }
    }
    if (!node->output_shapes().empty()) {
      SortKeepLast(node->mutable_output_shapes());
    }
    if (!node->stored_input_shapes().empty()) {
      SortKeepLast(node->mutable_stored_input_shapes());
    }
    builder_.Adopt(index, std::move(p->node));
  }

  // Of each run of neighbours among the n from `begin` with one key(x),
  // keeps the last, moved to the front; returns how many are kept.
  template <typename It, typename Key>
  static size_t KeepLast(It begin, size_t n, Key key) {
    size_t out = 0;
    for (size_t i = 0; i < n; ++i) {
      if (i + 1 < n && key(begin[i + 1]) == key(begin[i])) continue;
      if (out != i) begin[out] = std::move(begin[i]);
      ++out;
    }
    return out;
  }
  // Sorts the n elements from `begin` by key(x); of equal keys the last one
  // read stays, as when protobuf parses a map. Returns how many are left
  // (at the front).
  template <typename It, typename Key>
  static size_t SortKeepLast(It begin, size_t n, Key key) {
    if (n < 2) return n;
    std::stable_sort(
        begin, begin + static_cast<ptrdiff_t>(n),
        [&key](const auto& a, const auto& b) { return key(a) < key(b); });
    return KeepLast(begin, n, key);
  }
  // The same for map entries (key: .first).
  template <typename It>
  static size_t SortKeepLast(It begin, size_t n) {
    return SortKeepLast(begin, n, [](const auto& e) { return e.first; });
  }
  template <typename T>
  static void SortKeepLast(std::vector<T>* v) {
    v->resize(SortKeepLast(v->begin(), v->size()));
  }

  // A map entry: an integer or string key (field 1) and a value (field 2)
  // that is either length-delimited or a varint.
  struct Entry {
    uint64_t key = 0;
    std::string_view key_bytes;
    std::string_view value;
    uint64_t value_varint = 0;
  };
  // The entry that is the next field of `r`.
  static bool ReadEntry(wire::Reader* r, bool value_is_bytes, Entry* out) {
    wire::Reader e = r->Sub();
    if (!r->ok()) return false;
    *out = Entry();
    uint32_t f;
    int w;
    while (e.Next(&f, &w)) {
      if (f == 1 && w == wire::kVarint) {
        out->key = static_cast<uint64_t>(e.Int64());
      } else if (f == 1 && w == wire::kBytes) {
        out->key_bytes = e.Bytes();
      } else if (f == 2 && value_is_bytes && w == wire::kBytes) {
        out->value = e.Bytes();
      } else if (f == 2 && !value_is_bytes && w == wire::kVarint) {
        out->value_varint = static_cast<uint64_t>(e.Int64());
      } else {
        e.Skip(w);
      }
    }
    return e.ok();
  }

  static bool ReadTuple(std::string_view bytes, std::vector<int64_t>* out) {
    wire::Reader t(bytes);
    uint32_t f;
    int w;
    while (t.Next(&f, &w)) {
      if (f == 1) {
        t.RepeatedInt64(w, [out](int64_t v) { out->push_back(v); });
      } else {
        t.Skip(w);
      }
    }
    return t.ok();
  }

  // A `nodes` map entry: key (field 1) and the ProfileNode (field 2).
  bool Node(const Entry& en, int64_t seq) {
    const int64_t key = static_cast<int64_t>(en.key);
    uint32_t f;
    int w;

    execs_scratch_.clear();
    Pending p;
    p.key = key;
    p.seq = seq;
    p.inputs_at = inputs_.size();
    p.slots_at = slots_.size();
    p.node = std::make_unique<GraphNode>();
    wire::Reader r(en.value);
    while (r.Next(&f, &w)) {
      if (f <= pf::kInputShapes && f != pf::kShape && f != pf::kOutputs &&
          w != (f == pf::kFloatOps || f == pf::kId ? wire::kVarint
                                                   : wire::kBytes)) {
        f = 0;  // an unexpected wire type: skipped as unknown
      }
      if (!NodeField(f, w, &r, &p) || !r.ok()) return false;
    }
    if (!r.ok()) return false;
    GraphNode* node = p.node.get();
    // A trace without frames counts as none.
    if (!node->code().empty() && !HasFrames(node->code())) {
      node->mutable_code()->clear();
    }
    SetExecs(node);
    if (node->name.empty()) ++nameless_;
    pending_.push_back(std::move(p));
    return true;
  }

  // One field `f` (wire type `w`) of a ProfileNode, read from `r` into the
  // pending node; false if it is corrupt.
  bool NodeField(uint32_t f, int w, wire::Reader* r, Pending* p) {
    GraphNode* node = p->node.get();
    switch (f) {
      case pf::kName:
        node->name = std::string(r->Bytes());
        break;
      case pf::kOp:
        node->op = std::string(r->Bytes());
        break;
      case pf::kCanonicalDevice:
        node->set_canonical_device(interner_.Intern(r->Bytes()));
        break;
      case pf::kHostDevice:
        node->set_host_device(interner_.Intern(r->Bytes()));
        break;
      case pf::kFloatOps:
        node->float_ops = r->Int64();
        break;
      case pf::kId:
        node->id = r->Int64();
        break;
      case pf::kShape:
        r->RepeatedInt64(w, [node](int64_t d) { node->shape.push_back(d); });
        break;
      case pf::kOpTypes:
        node->op_types.insert(interner_.Intern(r->Bytes()));
        break;
      case pf::kTrace:
        // Repeated occurrences of a message field merge, which for the wire
        // format is concatenation.
        if (std::string_view trace = r->Bytes(); !trace.empty()) {
          node->mutable_code()->append(trace);
        }
        break;
      case pf::kAttrs: {
        std::string_view a = r->Bytes();
        std::string* attrs = node->mutable_attrs();
        wire::PutVarint(attrs, (pf::kAttrs << 3) | wire::kBytes);
        wire::PutVarint(attrs, a.size());
        attrs->append(a);
        break;
      }
      case pf::kInputs:
      case pf::kSrcOutputIndex:
        return IndexEntry(f, r, p);
      case pf::kOutputShapes:
      case pf::kInputShapes:
        return ShapeEntry(f, r, node);
      case pf::kExecs: {
        Entry en;
        if (!ReadEntry(r, true, &en)) return false;
        StepExec exec;
        exec.step = static_cast<int64_t>(en.key);
        if (!DirectExec(en.value, &exec) && !Exec(en.value, &exec)) {
          return false;
        }
        execs_scratch_.push_back(exec);
        break;
      }
      default:
        r->Skip(w);
    }
    return true;
  }

  // An entry of the inputs or src_output_index maps.
  bool IndexEntry(uint32_t f, wire::Reader* r, Pending* p) {
    Entry en;
    if (!ReadEntry(r, false, &en)) return false;
    if (f == pf::kInputs) {
      ++p->inputs_n;
      inputs_.emplace_back(static_cast<int32_t>(en.key),
                           static_cast<int64_t>(en.value_varint));
    } else {
      ++p->slots_n;
      slots_.emplace_back(static_cast<int64_t>(en.key),
                          static_cast<int32_t>(en.value_varint));
    }
    return true;
  }

  // An entry of the output_shapes or input_shapes maps.
  bool ShapeEntry(uint32_t f, wire::Reader* r, GraphNode* node) {
    Entry en;
    if (!ReadEntry(r, true, &en)) return false;
    std::vector<int64_t> dims;
    if (!ReadTuple(en.value, &dims)) return false;
    (f == pf::kOutputShapes ? node->mutable_output_shapes()
                            : node->mutable_stored_input_shapes())
        ->emplace_back(static_cast<int32_t>(en.key), std::move(dims));
    return true;
  }

  // The node's executions by step (of repeated steps the last one read
  // stays), exactly sized.
  void SetExecs(GraphNode* node) {
    std::vector<StepExec>& execs = execs_scratch_;
    execs.resize(SortKeepLast(execs.begin(), execs.size(),
                              [](const StepExec& e) { return e.step; }));
    node->execs.assign(execs.begin(), execs.end());
  }

  static bool HasFrames(std::string_view code) {
    wire::Reader r(code);
    uint32_t f;
    int w;
    while (r.Next(&f, &w)) {
      if (f == 1) return true;
      r.Skip(w);
    }
    return false;
  }

  bool Times(const Entry& en, std::vector<DeviceTimes>* list) {
    const std::string_view dev = *interner_.Intern(en.key_bytes);
    auto it = std::lower_bound(
        list->begin(), list->end(), dev,
        [](const DeviceTimes& d, std::string_view s) { return d.device < s; });
    if (it == list->end() || it->device != dev) {
      DeviceTimes fresh{dev, {}};
      if (!spare_times_.empty()) {
        fresh.times = std::move(spare_times_.back());
        spare_times_.pop_back();
      }
      it = list->insert(it, std::move(fresh));
    }
    it->times.clear();  // a repeated key: the last entry wins
    std::vector<TimeInterval>* times = &it->times;
    return ForEachInterval(en.value, [times](int64_t start, int64_t duration) {
      times->push_back(TimeInterval{start, duration});
    });
  }

  // Calls f(start, duration) for each tuple of an ExecTime (its first two
  // values; 0 for those it lacks); false if it is corrupt.
  template <typename F>
  static bool ForEachInterval(std::string_view exec_time, F f) {
    wire::Reader et(exec_time);
    uint32_t f1;
    int w1;
    while (et.Next(&f1, &w1)) {
      if (f1 != 1 || w1 != wire::kBytes) {
        et.Skip(w1);
        continue;
      }
      wire::Reader t = et.Sub();
      int64_t v[2] = {0, 0};
      size_t k = 0;
      uint32_t f2;
      int w2;
      while (t.Next(&f2, &w2)) {
        if (f2 == 1) {
          t.RepeatedInt64(w2, [&](int64_t x) {
            if (k < 2) v[k] = x;
            ++k;
          });
        } else {
          t.Skip(w2);
        }
      }
      if (!t.ok()) return false;
      f(v[0], v[1]);
    }
    return et.ok();
  }

  bool Memory(std::string_view bytes, MemoryExec* m) {
    wire::Reader r(bytes);
    uint32_t f;
    int w;
    while (r.Next(&f, &w)) {
      if (f >= 1 && f <= kMemoryExecFields && w == wire::kVarint) {
        m->*kMemoryExecField[f - 1] = r.Int64();
      } else if (f == 11 && w == wire::kBytes) {
        Entry en;
        if (!ReadEntry(&r, true, &en)) return false;
        OutputMemory o;
        o.slot = static_cast<int32_t>(en.key);
        wire::Reader mr(en.value);
        uint32_t mf;
        int mw;
        while (mr.Next(&mf, &mw)) {
          if (mf == 1 && mw == wire::kVarint) {
            o.bytes = mr.Int64();
          } else if (mf == 2 && mw == wire::kVarint) {
            o.ptr = static_cast<uint64_t>(mr.Int64());
          } else {
            mr.Skip(mw);
          }
        }
        if (!mr.ok()) return false;
        m->output_memory.push_back(o);
      } else {
        r.Skip(w);
      }
    }
    m->output_memory.resize(
        SortKeepLast(m->output_memory.begin(), m->output_memory.size(),
                     [](const OutputMemory& o) { return o.slot; }));
    return r.ok();
  }

  // Empties scratch_ for the next record, keeping its vectors' memory (a
  // record's lists are as many allocations as its devices otherwise).
  void ClearScratch() {
    ExecDetail& d = scratch_;
    for (std::vector<DeviceTimes>* list :
         {&d.accelerator_execs, &d.cpu_execs}) {
      for (DeviceTimes& t : *list) {
        t.times.clear();
        spare_times_.push_back(std::move(t.times));
      }
    }
    for (MemoryExec& m : d.memory_execs) {
      m.output_memory.clear();
      spare_outputs_.push_back(std::move(m.output_memory));
    }
    d.Clear();
  }

  // The fields of an ExecProfile with a wire type other than theirs are
  // read as unknown (0).
  static uint32_t ExecField(uint32_t f, int w) {
    const bool varint =
        f == pf::kRunCount || f == pf::kAllStart || f == pf::kLatestEnd;
    if ((varint && w != wire::kVarint) ||
        (!varint && f <= pf::kAllocations && w != wire::kBytes)) {
      return 0;
    }
    return f;
  }

  static bool ReadAllocation(wire::Reader* r, Allocation* rec) {
    wire::Reader a = r->Sub();
    uint32_t af;
    int aw;
    while (a.Next(&af, &aw)) {
      if (af == 1 && aw == wire::kVarint) {
        rec->alloc_micros = a.Int64();
      } else if (af == 2 && aw == wire::kVarint) {
        rec->alloc_bytes = a.Int64();
      } else {
        a.Skip(aw);
      }
    }
    return a.ok() && r->ok();
  }

  // One entry of accelerator_execs or cpu_execs, written to `list` of the
  // encoder; false if its device does not come after the list's last one
  // (`*last`) or it is corrupt.
  bool DirectTimes(const Entry& en, DetailEncoder::Part list,
                   const std::string** last) {
    const SharedInterner::Known dev = interner_.Find(en.key_bytes);
    if (*last != nullptr && !(**last < *dev.str)) return false;
    *last = dev.str;
    encoder_.BeginDevice(list, dev.id);
    return ForEachInterval(en.value,
                           [this, list](int64_t start, int64_t duration) {
                             encoder_.AddInterval(list, start, duration);
                           });
  }

  // Encodes an ExecProfile straight into the model's record when its
  // fields come in field-number order, its maps' keys and its devices in
  // increasing order (as TensorFlow writes them). False otherwise or if it
  // is corrupt: Exec then reads it again (interning the same strings in
  // the same order, so the model is the same either way).
  bool DirectExec(std::string_view bytes, StepExec* exec) {
    if (!direct_) return false;
    DetailEncoder& out = encoder_;
    out.Start(0);
    bool written = false;  // any part (Start would clear it)
    int64_t latest = 0;
    const std::string* last_list[2] = {nullptr, nullptr};
    const std::string* last_device = nullptr;
    wire::Reader r(bytes);
    uint32_t f;
    int w;
    while (r.Next(&f, &w)) {
      f = ExecField(f, w);
      switch (f) {
        case pf::kRunCount:
          exec->run_count = r.Int64();
          break;
        case pf::kAllStart:
          if (written) return false;
          out.Start(r.Int64());
          break;
        case pf::kLatestEnd:
          latest = r.Int64();
          break;
        case pf::kAcceleratorExecs:
        case pf::kCpuExecs: {
          const bool accelerator = f == pf::kAcceleratorExecs;
          Entry en;
          written = true;
          if (!ReadEntry(&r, true, &en) ||
              !DirectTimes(en,
                           accelerator ? DetailEncoder::kAccelerator
                                       : DetailEncoder::kCpu,
                           &last_list[accelerator ? 0 : 1])) {
            return false;
          }
          break;
        }
        case pf::kDevices: {
          written = true;
          const SharedInterner::Known dev = interner_.Find(r.Bytes());
          if (dev.str == last_device) break;  // repeated: kept once
          if (last_device != nullptr && *dev.str < *last_device) return false;
          last_device = dev.str;
          out.AddDevice(dev.id);
          break;
        }
        case pf::kMemoryExecs: {
          written = true;
          MemoryExec& m = memory_scratch_;
          std::vector<OutputMemory> outputs = std::move(m.output_memory);
          outputs.clear();
          m = MemoryExec();
          m.output_memory = std::move(outputs);
          if (!Memory(r.Bytes(), &m)) return false;
          out.AddMemory(m);
          break;
        }
        case pf::kAllocations: {
          written = true;
          Allocation rec;
          if (!ReadAllocation(&r, &rec)) return false;
          out.AddAllocation(rec);
          break;
        }
        default:
          r.Skip(w);
      }
      if (!r.ok()) return false;
    }
    if (!r.ok() || !out.ok()) return false;  // (ok: parts in order)
    out.SetLatestEnd(latest);
    if (out.Close(exec)) builder_.StoreEncoded(out, exec);
    ++direct_records_;
    return true;
  }

  bool Exec(std::string_view bytes, StepExec* exec) {
    ExecDetail& d = scratch_;
    ClearScratch();
    wire::Reader r(bytes);
    uint32_t f;
    int w;
    while (r.Next(&f, &w)) {
      f = ExecField(f, w);
      switch (f) {
        case pf::kRunCount:
        case pf::kAllStart:
        case pf::kLatestEnd: {
          const int64_t v = r.Int64();
          if (f == pf::kRunCount) exec->run_count = v;
          if (f == pf::kAllStart) d.all_start_micros = v;
          if (f == pf::kLatestEnd) d.latest_end_micros = v;
          break;
        }
        case pf::kAcceleratorExecs:
        case pf::kCpuExecs: {
          Entry en;
          if (!ReadEntry(&r, true, &en) ||
              !Times(en, f == pf::kAcceleratorExecs ? &d.accelerator_execs
                                                    : &d.cpu_execs)) {
            return false;
          }
          break;
        }
        case pf::kDevices: {
          const std::string_view dev = *interner_.Intern(r.Bytes());
          auto it = std::lower_bound(d.devices.begin(), d.devices.end(), dev);
          if (it == d.devices.end() || *it != dev) d.devices.insert(it, dev);
          break;
        }
        case pf::kMemoryExecs: {
          MemoryExec m;
          if (!spare_outputs_.empty()) {
            m.output_memory = std::move(spare_outputs_.back());
            spare_outputs_.pop_back();
          }
          if (!Memory(r.Bytes(), &m)) return false;
          d.memory_execs.push_back(std::move(m));
          break;
        }
        case pf::kAllocations: {
          Allocation rec;
          if (!ReadAllocation(&r, &rec)) return false;
          d.allocations.push_back(rec);
          break;
        }
        default:
          r.Skip(w);
      }
      if (!r.ok()) return false;
    }
    if (!r.ok()) return false;
    builder_.StoreDetail(d, exec, &interner_);
    return true;
  }

  Model model_;
  ModelBuilder builder_{&model_};  // the way into model_
  std::mutex strings_mu_;          // guards model_.strings_ while two decode
  SharedInterner interner_;
  std::vector<Pending> pending_;
  std::vector<std::pair<int32_t, int64_t>> inputs_;  // Pending::inputs_at
  std::vector<std::pair<int64_t, int32_t>> slots_;   // Pending::slots_at
  // Where the nodes of an absorbed decoder begin in pending_.
  size_t absorbed_ = 0;
  bool direct_ = true;  // see set_direct_records
  int64_t direct_records_ = 0;
  DetailEncoder encoder_;  // DirectExec's
  MemoryExec memory_scratch_;
  ExecDetail scratch_;
  // Emptied vectors of earlier records, for the next ones (ClearScratch).
  std::vector<std::vector<TimeInterval>> spare_times_;
  std::vector<std::vector<OutputMemory>> spare_outputs_;
  std::vector<StepExec> execs_scratch_;
  bool saw_known_ = false;
  bool saw_unknown_ = false;
  // A known top-level field met with another wire type (0: none), and the
  // nodes without a name: signs of another message read as a ProfileProto.
  uint32_t wrong_type_field_ = 0;
  size_t nameless_ = 0;
};

}  // namespace tfprof

#endif  // TFPROF_PROFILER_LOAD_PROFILE_DECODER_H_
