// The streaming ProfileProto loader against protobuf's own parser: the same
// model from the same bytes, on the corpus and on generated profiles, with
// tiny read blocks, through a pipe, with repeated keys, unexpected wire types
// and truncation at every offset.
#include "profiler/load/profile_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <set>
#include <thread>

#include "google/protobuf/util/message_differencer.h"
#include "profiler/base/wire.h"
#include "profiler/load/loader.h"
#include "profiler/load/profile_decoder.h"
#include "tests/test_util.h"
#include "tools/synthetic_profile.h"

namespace tfprof {
namespace {

using google::protobuf::util::MessageDifferencer;

std::string Generated(int64_t nodes, int64_t steps) {
  GenOptions o;
  o.nodes = nodes;
  o.steps = steps;
  o.depth = 4;
  o.seed = 7;
  std::string out;
  GenerateProfile(o, [&out](const std::string& piece) { out += piece; });
  return out;
}

// What protobuf makes of the bytes, and what our loader makes of them, as
// ProfileProtos. The model keeps each step's device list sorted and unique,
// as TensorFlow writes it, and so are op types; the comparison treats them
// as sets.
void ExpectSameAsProtobuf(const std::string& bytes, const Model& model) {
  tfpb::ProfileProto expected;
  REQUIRE(expected.ParseFromString(bytes));
  const tfpb::ProfileProto actual = model.ToProfileProto();
  MessageDifferencer d;
  d.TreatAsSet(tfpb::ExecProfile::descriptor()->FindFieldByName("devices"));
  d.TreatAsSet(tfpb::ProfileNode::descriptor()->FindFieldByName("op_types"));
  std::string diff;
  d.ReportDifferencesToString(&diff);
  const bool same = d.Compare(expected, actual);
  INFO(diff.substr(0, 2000));
  CHECK(same);
}

// The load hands the model its nodes in name order (sorted while the names
// are claimed): they must be the model's nodes, each once, in the order of
// their names sorted here.
void ExpectNameOrder(const Model& model) {
  std::vector<std::string> names;
  std::set<const GraphNode*> nodes;
  for (const auto& n : model.nodes()) {
    names.push_back(n->name);
    nodes.insert(n.get());
  }
  std::sort(names.begin(), names.end());
  const std::vector<const GraphNode*>& by_name = model.NodesByName();
  REQUIRE(by_name.size() == names.size());
  std::set<const GraphNode*> seen;
  for (size_t i = 0; i < by_name.size(); ++i) {
    REQUIRE(nodes.count(by_name[i]) == 1);
    CHECK(seen.insert(by_name[i]).second);
    CHECK(by_name[i]->name == names[i]);
  }
}

absl::StatusOr<Model> LoadFile(const std::string& path, size_t block = 0) {
  auto r = ReadProfileProtoFile(path, nullptr, block);
  if (!r.ok()) return r.status();
  return std::move(r->model);
}

TEST_CASE("Streaming load equals protobuf's parse: corpus profiles") {
  const std::string c = testing::CorpusFile("shiyudian-resnet-tf-dist/");
  for (const char* f : {"profile_0_tiny", "profile_0", "profile_100"}) {
    INFO(f);
    const std::string bytes = testing::ReadFile(c + f);
    auto m = LoadFile(c + f);
    REQUIRE(m.ok());
    ExpectSameAsProtobuf(bytes, *m);
  }
}

TEST_CASE("Streaming load equals protobuf's parse: generated profiles") {
  const std::string dir = testing::TempDir();
  const std::string bytes = Generated(3000, 5);
  testing::WriteFile(dir + "/p", bytes);
  auto m = LoadFile(dir + "/p");
  REQUIRE(m.ok());
  CHECK(m->size() == 3000);
  CHECK(m->steps().size() == 5);
  ExpectSameAsProtobuf(bytes, *m);
  ExpectNameOrder(*m);
  // Node entries straddle every kind of block boundary.
  for (size_t block : {size_t{1}, size_t{7}, size_t{4093}}) {
    INFO("block " << block);
    auto small = LoadFile(dir + "/p", block);
    REQUIRE(small.ok());
    ExpectSameAsProtobuf(bytes, *small);
  }
}

TEST_CASE("A large load gives the model its nodes in name order") {
  // Enough nodes for the names to be sorted on a second thread; the first
  // 100 names again under new keys (dropped from the order).
  const std::string dir = testing::TempDir();
  std::string bytes = Generated(40000, 1);
  tfpb::ProfileProto parsed;
  REQUIRE(parsed.ParseFromString(bytes));
  tfpb::ProfileProto copies;
  int copied = 0;
  for (const auto& [key, node] : parsed.nodes()) {
    if (copied++ == 100) break;
    (*copies.mutable_nodes())[key + 1000000] = node;
  }
  bytes += copies.SerializeAsString();
  testing::WriteFile(dir + "/p", bytes);
  auto m = LoadFile(dir + "/p");
  REQUIRE(m.ok());
  REQUIRE(m->size() == 40000);
  CHECK(m->HasNameOrder());  // the load's, not sorted at first use
  ExpectNameOrder(*m);
  // Moving the model keeps the order with the nodes.
  Model moved = std::move(*m);
  CHECK(moved.HasNameOrder());
  ExpectNameOrder(moved);
}

TEST_CASE("Streaming load reads from a pipe") {
  const std::string dir = testing::TempDir();
  const std::string bytes = Generated(500, 3);
  const std::string fifo = dir + "/fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  std::thread writer([&] {
    const int fd = ::open(fifo.c_str(), O_WRONLY);
    size_t done = 0;
    while (fd >= 0 && done < bytes.size()) {
      const ssize_t w = ::write(fd, bytes.data() + done,
                                std::min<size_t>(bytes.size() - done, 999));
      if (w <= 0) break;
      done += static_cast<size_t>(w);
    }
    if (fd >= 0) ::close(fd);
  });
  auto m = LoadFile(fifo, 4096);
  writer.join();
  REQUIRE(m.ok());
  ExpectSameAsProtobuf(bytes, *m);
}

TEST_CASE("Repeated keys: the last one read wins, as in protobuf maps") {
  // Two entries for node key 5 and, inside the second, two for step 3.
  tfpb::ProfileProto a, b;
  auto& n1 = (*a.mutable_nodes())[5];
  n1.set_name("first");
  n1.set_id(5);
  auto& n2 = (*b.mutable_nodes())[5];
  n2.set_name("second");
  n2.set_id(5);
  (*n2.mutable_execs())[3].set_run_count(1);
  tfpb::ProfileProto c;
  auto& n3 = (*c.mutable_nodes())[5];
  n3.set_name("second");
  n3.set_id(5);
  (*n3.mutable_execs())[3].set_run_count(9);
  // c's node merges into b's entry only if they were one message; as map
  // entries the last whole entry wins.
  const std::string bytes =
      a.SerializeAsString() + b.SerializeAsString() + c.SerializeAsString();
  auto m = DecodeProfileProto(bytes, "test");
  REQUIRE(m.ok());
  REQUIRE(m->size() == 1);
  CHECK(m->Find("second") != nullptr);
  CHECK(m->Find("second")->FindExec(3)->run_count == 9);
  ExpectSameAsProtobuf(bytes, *m);
}

// A length-delimited field and a varint field, in the wire format.
std::string LenField(uint32_t field, const std::string& bytes) {
  std::string s;
  wire::PutVarint(&s, (field << 3) | wire::kBytes);
  wire::PutVarint(&s, bytes.size());
  return s + bytes;
}
std::string VarintField(uint32_t field, uint64_t v) {
  std::string s;
  wire::PutVarint(&s, (field << 3) | wire::kVarint);
  wire::PutVarint(&s, v);
  return s;
}

// A ProfileProto of one node per record, each node's record at step 1
// the given ExecProfile bytes.
std::string NodesWithRecords(const std::vector<std::string>& records) {
  std::string out;
  for (size_t i = 0; i < records.size(); ++i) {
    const std::string exec_entry = VarintField(1, 1) + LenField(2, records[i]);
    const std::string node = LenField(1, "n" + std::to_string(i)) +
                             VarintField(13, i) + LenField(12, exec_entry);
    out += LenField(1, VarintField(1, i) + LenField(2, node));
  }
  return out;
}

// Decodes `bytes` on one decoder, its step records encoded directly from
// the file where they allow it or all through an ExecDetail.
absl::StatusOr<Model> DecodeRecords(const std::string& bytes, bool direct,
                                    int64_t* direct_records) {
  ProfileDecoder decoder;
  decoder.set_direct_records(direct);
  wire::Reader r(bytes);
  uint32_t f;
  int wt;
  int64_t seq = 0;
  while (r.Next(&f, &wt)) {
    if (!decoder.Field(f, wt, &r, seq++)) {
      return absl::InvalidArgumentError("corrupt");
    }
  }
  *direct_records = decoder.direct_records();
  return decoder.Finish("test");
}

struct BothWays {
  Model direct;          // records encoded directly where they allow it
  int64_t direct_n = 0;  // how many did
};
void ExpectSameRecords(const Model& direct, const Model& general, size_t n);

// Decodes a ProfileProto of NodesWithRecords both ways and checks that
// every node's record came out the same.
BothWays DecodeBothWays(const std::string& bytes) {
  BothWays both;
  int64_t general_n = 0;
  auto direct = DecodeRecords(bytes, true, &both.direct_n);
  auto general = DecodeRecords(bytes, false, &general_n);
  REQUIRE(direct.ok());
  REQUIRE(general.ok());
  CHECK(general_n == 0);
  ExpectSameRecords(*direct, *general, direct->size());
  both.direct = std::move(*direct);
  return both;
}

// Each of the first `n` nodes' record at step 1 is the same in both models:
// the same sums and the same bytes, device ids included.
void ExpectSameRecords(const Model& direct, const Model& general, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const std::string name = "n" + std::to_string(i);
    INFO(name);
    const StepExec* a = direct.Find(name)->FindExec(1);
    const StepExec* b = general.Find(name)->FindExec(1);
    REQUIRE(a != nullptr);
    REQUIRE(b != nullptr);
    CHECK(a->run_count == b->run_count);
    CHECK(a->accelerator_micros == b->accelerator_micros);
    CHECK(a->cpu_micros == b->cpu_micros);
    CHECK(a->requested_bytes == b->requested_bytes);
    CHECK(a->peak_bytes == b->peak_bytes);
    CHECK(a->residual_bytes == b->residual_bytes);
    CHECK(a->output_bytes == b->output_bytes);
    REQUIRE((a->detail == nullptr) == (b->detail == nullptr));
    if (a->detail == nullptr) continue;
    wire::Reader la(a->detail, a->detail + 10), lb(b->detail, b->detail + 10);
    uint64_t na = 0, nb = 0;
    la.Varint(&na);
    lb.Varint(&nb);
    REQUIRE(na == nb);
    CHECK(std::string(reinterpret_cast<const char*>(la.pos()), na) ==
          std::string(reinterpret_cast<const char*>(lb.pos()), nb));
  }
}

TEST_CASE("Step records: the direct encoding equals the general one") {
  using tfpb::ExecProfile;
  const std::string gpu = "/job:w/replica:0/task:0/device:GPU:0";
  const std::string stream = gpu + "/stream:all";
  const std::string cpu = "/job:w/replica:0/task:0/device:CPU:0";
  const auto times = [](ExecProfile* e, bool accelerator,
                        const std::string& dev, int n, int64_t t0) {
    auto& list =
        accelerator ? *e->mutable_accelerator_execs() : *e->mutable_cpu_execs();
    for (int i = 0; i < n; ++i) {
      auto* t = list[dev].add_times();
      t->add_int64_values(t0 + 7 * i);
      t->add_int64_values(3 + i % 5);
    }
  };
  // As TensorFlow writes them: every part, in field order.
  ExecProfile full;
  full.set_run_count(2);
  full.set_all_start_micros(1600000000000000);
  full.set_latest_end_micros(1600000000000900);
  times(&full, true, stream, 2, 1600000000000010);
  times(&full, false, cpu, 1, 1600000000000000);
  full.add_devices(cpu);
  full.add_devices(stream);
  auto* m = full.add_memory_execs();
  m->set_memory_micros(1600000000000800);
  m->set_requested_bytes(4096);
  m->set_peak_bytes(4096);
  m->set_output_bytes(-5);
  (*m->mutable_output_memory())[2].set_bytes(64);
  (*m->mutable_output_memory())[0].set_ptr(123456789);
  for (int i = 0; i < 3; ++i) {
    auto* a = full.add_allocations();
    a->set_alloc_micros(1600000000000100 + 10 * i);
    a->set_alloc_bytes(i == 2 ? -512 : 256);
  }
  // Counts past one byte's worth (the encoder widens the count it kept a
  // byte for).
  ExecProfile many;
  many.set_all_start_micros(5);
  times(&many, true, stream, 300, 6);
  for (int i = 0; i < 200; ++i)
    many.add_devices("d" + std::to_string(1000 + i));
  for (int i = 0; i < 130; ++i) many.add_memory_execs()->set_peak_bytes(i);
  for (int i = 0; i < 140; ++i) many.add_allocations()->set_alloc_bytes(i);
  // Parts out of order (merged messages are concatenations).
  ExecProfile start, cpu_part, acc_part, dev_z, dev_a, cpu_again;
  start.set_all_start_micros(1000);
  times(&cpu_part, false, cpu, 2, 1001);
  times(&acc_part, true, stream, 1, 1002);
  times(&cpu_again, false, cpu, 1, 1500);
  dev_z.add_devices("z");
  dev_a.add_devices("a");
  const auto ser = [](const ExecProfile& e) { return e.SerializeAsString(); };
  // Tuples packed, unpacked, short and long; unknown fields; a known field
  // of another wire type.
  const std::string tuple_packed = LenField(1, LenField(1, "\x05\x02"));
  const std::string tuple_loose =
      LenField(1, VarintField(1, 9) + VarintField(1, 4) + VarintField(1, 8));
  const std::string tuple_short = LenField(1, VarintField(1, 11));
  const std::string odd_times =
      LenField(1, "cpu") +
      LenField(2, tuple_packed + tuple_loose + tuple_short + LenField(1, ""));
  const std::string odd = VarintField(2, 3) + LenField(5, odd_times) +
                          VarintField(9, 77) + LenField(3, "x") +
                          LenField(6, "cpu") + LenField(6, "cpu");
  const std::vector<std::string> usual = {ser(full), ser(many), odd, "",
                                          VarintField(1, 4)};
  const std::vector<std::string> unusual = {
      ser(cpu_part) + ser(start),                   // the start after times
      ser(start) + ser(cpu_part) + ser(acc_part),   // a part after a later one
      ser(start) + ser(cpu_part) + ser(cpu_again),  // a device twice
      ser(dev_z) + ser(dev_a),                      // devices unsorted
      ser(start) + ser(acc_part) + ser(cpu_part) + ser(dev_a) + ser(dev_a),
      ser(dev_z) + ser(start)};  // the start after devices
  std::vector<std::string> records = usual;
  records.insert(records.end(), unusual.begin(), unusual.end());
  const std::string bytes = NodesWithRecords(records);
  const BothWays both = DecodeBothWays(bytes);
  const Model* direct = &both.direct;
  // The usual records (and the last unusual one, in order but for a
  // device repeated at once) took the direct way; the others fell back.
  CHECK(both.direct_n == static_cast<int64_t>(usual.size()) + 1);
  // Protobuf's parse, where the model keeps all a record holds (it keeps
  // two values a tuple, a device once, no unknown fields).
  const std::string kept =
      NodesWithRecords({ser(full), ser(many), "", VarintField(1, 4), unusual[0],
                        unusual[1], unusual[2], unusual[3], unusual[5]});
  auto kept_direct = DecodeProfileProto(kept, "test");
  REQUIRE(kept_direct.ok());
  ExpectSameAsProtobuf(kept, *kept_direct);
  // Spot checks against the records themselves.
  const ExecDetail d = direct->Detail(*direct->Find("n1")->FindExec(1));
  REQUIRE(d.accelerator_execs.size() == 1);
  CHECK(d.accelerator_execs[0].times.size() == 300);
  CHECK(d.accelerator_execs[0].times[299].start_micros == 6 + 7 * 299);
  CHECK(d.devices.size() == 200);
  CHECK(d.memory_execs.size() == 130);
  CHECK(d.memory_execs[129].peak_bytes == 129);
  CHECK(d.allocations.size() == 140);
  CHECK(d.allocations[139].alloc_bytes == 139);
  CHECK(direct->Find("n3")->FindExec(1)->detail == nullptr);  // empty
  CHECK(direct->Find("n4")->FindExec(1)->run_count == 4);
}

TEST_CASE("Step records: a record given up leaves nothing to the next") {
  // Each pair: a record the direct way gives up on with a device's times
  // still open (its keys out of order), then one it takes.
  using tfpb::ExecProfile;
  const auto with_times = [](bool accelerator, const std::string& dev, int n) {
    ExecProfile e;
    auto& list =
        accelerator ? *e.mutable_accelerator_execs() : *e.mutable_cpu_execs();
    for (int i = 0; i < n; ++i) {
      auto* t = list[dev].add_times();
      t->add_int64_values(100 + i);
      t->add_int64_values(1);
    }
    return e.SerializeAsString();
  };
  ExecProfile devices, memory;
  devices.add_devices("x");
  devices.add_devices("y");
  memory.add_memory_execs()->set_peak_bytes(5);
  const std::vector<std::string> records = {
      with_times(false, "b", 1) + with_times(false, "a", 1),
      devices.SerializeAsString(),
      with_times(true, "b", 1) + with_times(true, "a", 1),
      memory.SerializeAsString(),
      with_times(false, "b", 200) + with_times(false, "a", 1),
      with_times(false, "c", 1)};
  const std::string bytes = NodesWithRecords(records);
  const BothWays both = DecodeBothWays(bytes);
  const Model* direct = &both.direct;
  CHECK(both.direct_n == 3);
  const ExecDetail d = direct->Detail(*direct->Find("n1")->FindExec(1));
  CHECK(d.devices == std::vector<std::string_view>{"x", "y"});
  CHECK(direct->Detail(*direct->Find("n3")->FindExec(1)).devices.empty());
  ExpectSameAsProtobuf(bytes, *direct);
}

// The offsets at which the top-level fields of `bytes` begin (all are
// length-delimited in these tests).
std::vector<size_t> FieldStarts(const std::string& bytes) {
  std::vector<size_t> starts;
  wire::Reader r(bytes);
  const uint8_t* base = reinterpret_cast<const uint8_t*>(bytes.data());
  uint32_t f;
  int w;
  while (true) {
    const size_t at = static_cast<size_t>(r.pos() - base);
    if (!r.Next(&f, &w)) break;
    starts.push_back(at);
    r.Skip(w);
  }
  return starts;
}

// Every load shares its nodes out to two decoders: 16 at a time, to
// whichever thread is free in a large batch; in turn, on one thread, in
// small batches (4093-byte blocks) and on one core. So these small files
// take the two decoders' path too (65536-byte blocks: both threads).
TEST_CASE("Two decoders: repeated keys across the halves, the last wins") {
  const std::string dir = testing::TempDir();
  std::string bytes = Generated(3000, 5);
  tfpb::ProfileProto parsed;
  REQUIRE(parsed.ParseFromString(bytes));
  // Later entries for keys early, midway and late in the file, each one
  // changed, and one of them twice.
  tfpb::ProfileProto later;
  int64_t changed = 0;
  for (const auto& [key, node] : parsed.nodes()) {
    if (key % 700 != 3) continue;
    tfpb::ProfileNode n = node;
    n.set_float_ops(node.float_ops() + 1000 + key);
    (*later.mutable_nodes())[key] = n;
    ++changed;
  }
  REQUIRE(changed >= 4);
  tfpb::ProfileProto last;
  const int64_t again = later.nodes().begin()->first;
  (*last.mutable_nodes())[again] = later.nodes().begin()->second;
  (*last.mutable_nodes())[again].set_float_ops(7);
  bytes += later.SerializeAsString() + last.SerializeAsString();
  testing::WriteFile(dir + "/p", bytes);
  for (size_t block : {size_t{4093}, size_t{65536}, size_t{0}}) {
    INFO("block " << block);
    auto m = LoadFile(dir + "/p", block);
    REQUIRE(m.ok());
    ExpectSameAsProtobuf(bytes, *m);
    const tfpb::ProfileProto out = m->ToProfileProto();
    CHECK(out.nodes().at(again).float_ops() == 7);
  }
}

TEST_CASE("Two decoders: a name used twice keeps its first key's node") {
  // Every node's name again under a new key at the end of the file: the
  // model keeps the first ones, as the one-decoder load does.
  const std::string dir = testing::TempDir();
  std::string bytes = Generated(2000, 3);
  tfpb::ProfileProto parsed;
  REQUIRE(parsed.ParseFromString(bytes));
  tfpb::ProfileProto copies;
  for (const auto& [key, node] : parsed.nodes()) {
    tfpb::ProfileNode n = node;
    n.set_float_ops(123456);
    (*copies.mutable_nodes())[key + 1000000] = n;
  }
  bytes = copies.SerializeAsString() + bytes;
  testing::WriteFile(dir + "/p", bytes);
  auto one = DecodeProfileProto(bytes, "p");
  auto two = LoadFile(dir + "/p", 4093);
  REQUIRE(one.ok());
  REQUIRE(two.ok());
  REQUIRE(two->size() == 2000);
  for (const auto& node : two->nodes()) CHECK(node->float_ops != 123456);
  // (Handed over by the load, not sorted at first use, on one thread too.)
  CHECK(one->HasNameOrder());
  CHECK(two->HasNameOrder());
  ExpectNameOrder(*one);
  ExpectNameOrder(*two);
  CHECK(
      MessageDifferencer::Equals(one->ToProfileProto(), two->ToProfileProto()));
}

TEST_CASE("Two decoders: the first corrupt node in the file is named") {
  const std::string dir = testing::TempDir();
  const std::string good = Generated(3000, 2);
  const std::vector<size_t> starts = FieldStarts(good);
  REQUIRE(starts.size() > 3000);
  // Corrupt nodes: their entry's bytes after the tag and length become
  // a varint that never ends.
  const auto corrupt = [&](std::string* bytes, size_t field) {
    const size_t begin = starts[field] + 3;  // past tag and length
    for (size_t i = begin; i < starts[field + 1]; ++i) (*bytes)[i] = '\xff';
  };
  // The later one alone, then both, at distances that put the two in one
  // batch's two halves for some of them.
  std::vector<std::pair<std::string, size_t>> cases;
  for (size_t apart : {20, 40, 60, 80, 200}) {
    std::string later = good;
    corrupt(&later, 1150 + apart);
    cases.emplace_back(later, 1150 + apart);
    corrupt(&later, 1150);
    cases.emplace_back(later, 1150);
  }
  for (const auto& [bytes, field] : cases) {
    testing::WriteFile(dir + "/bad", bytes);
    for (size_t block : {size_t{4093}, size_t{65536}}) {
      INFO("field " << field << " block " << block);
      auto m = LoadFile(dir + "/bad", block);
      REQUIRE_FALSE(m.ok());
      CHECK(std::string(m.status().message()) ==
            dir + "/bad: not a binary tensorflow.tfprof.ProfileProto " +
                "(corrupt or truncated near byte " +
                std::to_string(starts[field]) + ")");
    }
  }
}

// What `save` writes: maps in key order, so the same profile gives the same
// bytes in any process, and a saved profile loaded again saves the same.
TEST_CASE("Saved profiles are the same bytes every time") {
  const std::string path =
      testing::CorpusFile("shiyudian-resnet-tf-dist/profile_0");
  auto m = LoadFile(path);
  REQUIRE(m.ok());
  const std::string saved = m->SerializedProfileProto();
  ExpectSameAsProtobuf(saved, *m);
  // The nodes' keys, in the order written, rise.
  wire::Reader r(saved);
  uint32_t f;
  int w;
  int64_t last = -1, nodes = 0;
  bool rising = true;
  while (r.Next(&f, &w)) {
    if (f != 1) {
      r.Skip(w);
      continue;
    }
    wire::Reader entry = r.Sub();
    uint32_t ef;
    int ew;
    REQUIRE(entry.Next(&ef, &ew));
    REQUIRE(ef == 1);
    const int64_t key = entry.Int64();
    rising = rising && key > last;
    last = key;
    ++nodes;
  }
  CHECK(nodes == static_cast<int64_t>(m->size()));
  CHECK(rising);
  auto again = DecodeProfileProto(saved, "saved");
  REQUIRE(again.ok());
  CHECK(again->SerializedProfileProto() == saved);
}

TEST_CASE("A top-level group longer than the read block is skipped") {
  // Field 20 as an (obsolete) group of 5000 varint fields, then a node: the
  // group is read whole however small the blocks, and skipped as the
  // in-memory decode skips it.
  tfpb::ProfileProto p;
  (*p.mutable_nodes())[1].set_name("after");
  std::string group = "\xa3\x01";  // field 20, start group
  for (int i = 0; i < 5000; ++i) group += std::string("\x08\x7f", 2);
  group += "\xa4\x01";  // field 20, end group
  const std::string bytes = group + p.SerializeAsString();
  const std::string dir = testing::TempDir();
  testing::WriteFile(dir + "/group", bytes);
  for (size_t block : {size_t{64}, size_t{1}, size_t{0}}) {
    INFO("block " << block);
    auto m = LoadFile(dir + "/group", block);
    REQUIRE(m.ok());
    CHECK(m->Find("after") != nullptr);
    CHECK(m->SerializedProfileProto() ==
          DecodeProfileProto(bytes, "group")->SerializedProfileProto());
  }
  // Cut inside the group: an error, as for protobuf.
  testing::WriteFile(dir + "/cut", group.substr(0, 6000));
  CHECK_FALSE(LoadFile(dir + "/cut", 64).ok());
}

TEST_CASE("Known fields of an unexpected wire type are skipped") {
  tfpb::ProfileProto p;
  auto& n = (*p.mutable_nodes())[1];
  n.set_name("n");
  n.set_float_ops(3);
  std::string node = n.SerializeAsString();
  // Field 1 (name) again as a varint, field 8 (float_ops) as bytes, and
  // field 4 (shape) as a fixed32: all unknown to protobuf's parser.
  node += std::string("\x08\x05", 2) + std::string("\x42\x01x", 3) +
          std::string("\x25\x01\x02\x03\x04", 5);
  std::string entry = std::string("\x08\x01", 2) + "\x12" +
                      std::string(1, static_cast<char>(node.size())) + node;
  const std::string bytes =
      "\x0a" + std::string(1, static_cast<char>(entry.size())) + entry;
  auto m = DecodeProfileProto(bytes, "test");
  REQUIRE(m.ok());
  REQUIRE(m->Find("n") != nullptr);
  CHECK(m->Find("n")->float_ops == 3);
  CHECK(m->Find("n")->shape.empty());
}

TEST_CASE("Truncation at every offset: an error exactly when protobuf fails") {
  const std::string bytes = testing::ReadFile(
      testing::CorpusFile("shiyudian-resnet-tf-dist/profile_0_tiny"));
  int errors = 0;
  for (size_t n = 1; n < bytes.size(); ++n) {
    const std::string cut = bytes.substr(0, n);
    tfpb::ProfileProto p;
    const bool protobuf_ok = p.ParseFromString(cut);
    auto m = DecodeProfileProto(cut, "cut");
    INFO("length " << n);
    REQUIRE(m.ok() == protobuf_ok);
    if (m.ok()) {
      ExpectSameAsProtobuf(cut, *m);
    } else {
      ++errors;
      CHECK(std::string(m.status().message()).find("cut: not a binary") == 0);
    }
  }
  CHECK(errors > 0);
}

TEST_CASE("A file of only whitespace is refused as empty") {
  // A binary profile cut after its first byte (0x0a) would otherwise parse
  // as an empty text ProfileProto.
  const std::string dir = testing::TempDir();
  for (const std::string& text : {std::string("\n"), std::string(" \n\t\n")}) {
    testing::WriteFile(dir + "/blank", text);
    auto r = ReadProfileProtoFile(dir + "/blank");
    REQUIRE_FALSE(r.ok());
    CHECK(std::string(r.status().message()) ==
          dir + "/blank: empty file (only whitespace), not a ProfileProto");
    InputPaths in;
    in.profile_path = dir + "/blank";
    CHECK_FALSE(LoadProfile(in).ok());
  }
}

TEST_CASE("A length past the end of the file is an error, not an allocation") {
  const std::string dir = testing::TempDir();
  // Field 1 claiming 2^40 - 1 bytes.
  testing::WriteFile(dir + "/huge",
                     std::string("\x0a\xff\xff\xff\xff\xff\x1f", 7));
  auto m = LoadFile(dir + "/huge");
  REQUIRE_FALSE(m.ok());
  CHECK(std::string(m.status().message()).find("truncated") !=
        std::string::npos);
}

TEST_CASE("Text-format ProfileProtos are handed back to the text parser") {
  const std::string dir = testing::TempDir();
  tfpb::ProfileProto p;
  (*p.mutable_nodes())[0].set_name("a");
  testing::WriteFile(dir + "/text", p.DebugString());
  auto r = ReadProfileProtoFile(dir + "/text");
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == absl::StatusCode::kFailedPrecondition);
  // The loader then parses it as text.
  InputPaths in;
  in.profile_path = dir + "/text";
  auto loaded = LoadProfile(in);
  REQUIRE(loaded.ok());
  CHECK((*loaded)->model.Find("a") != nullptr);
}

}  // namespace
}  // namespace tfprof
