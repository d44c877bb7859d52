// Unit tests of the stats model: each rule of how tfprof computes statistics
// (reference section 7), on small hand-written inputs.
#include "profiler/model/model.h"

#include <catch2/catch.hpp>
#include <mutex>

#include "google/protobuf/text_format.h"
#include "google/protobuf/util/message_differencer.h"
#include "profiler/load/profile_reader.h"
#include "profiler/model/string_table.h"
#include "tests/test_util.h"

namespace tfprof {
namespace {

constexpr char kGraph[] = R"pb(
  node {
    name: "w"
    op: "VariableV2"
    attr {
      key: "shape"
      value {
        shape {
          dim { size: 3 }
          dim { size: 4 }
        }
      }
    }
  }
  node {
    name: "s"
    op: "VariableV2"
    attr {
      key: "shape"
      value { shape {} }
    }
  }
  node {
    name: "u"
    op: "Placeholder"
    attr {
      key: "shape"
      value {
        shape {
          dim { size: -1 }
          dim { size: 4 }
        }
      }
    }
  }
  node {
    name: "x"
    op: "Const"
    attr {
      key: "_output_shapes"
      value {
        list {
          shape {
            dim { size: 2 }
            dim { size: 3 }
          }
        }
      }
    }
  }
  node { name: "mm" op: "MatMul" input: "x" input: "w:0" input: "^s" }
)pb";

Model GraphModel() {
  Model m;
  m.AddGraph(testing::ParseTextProto<tfcore::GraphDef>(kGraph));
  return m;
}

TEST_CASE("Graph nodes get shapes, parameters, inputs and op types") {
  Model m = GraphModel();
  REQUIRE(m.size() == 5);
  CHECK(m.Find("w")->Parameters() == 12);
  CHECK(m.Find("s")->shape == std::vector<int64_t>{1});  // scalar
  CHECK(m.Find("s")->Parameters() == 1);
  CHECK(m.Find("u")->Parameters() == 0);  // incomplete shape
  CHECK(m.Find("x")->Parameters() == 0);
  const GraphNode* mm = m.Find("mm");
  REQUIRE(mm->inputs.size() == 3);
  CHECK(mm->inputs.at(1).index == 1);
  CHECK(*mm->inputs.at(1).name == "w");
  CHECK(*mm->inputs.at(2).name == "s");  // control input, '^' stripped
  CHECK(mm->inputs.at(1).slot == 0);
  CHECK(std::set<std::string>(mm->op_types.begin(), mm->op_types.end()) ==
        std::set<std::string>{"MatMul"});
  REQUIRE(m.Find("x")->OutputShape(0) != nullptr);
  CHECK(*m.Find("x")->OutputShape(0) == std::vector<int64_t>{2, 3});
}

TEST_CASE("Time: cpu on canonical devices, accelerator on stream:all") {
  Model m = GraphModel();
  auto rm = testing::ParseTextProto<tfcore::RunMetadata>(R"pb(
    step_stats {
      dev_stats {
        device: "/job:localhost/replica:0/task:0/device:GPU:0"
        node_stats {
          node_name: "mm"
          all_start_micros: 100
          op_end_rel_micros: 20
        }
        node_stats { node_name: "x" all_start_micros: 90 op_end_rel_micros: 0 }
      }
      dev_stats {
        device: "/device:GPU:0/stream:all"
        node_stats {
          node_name: "mm:MatMul"
          all_start_micros: 110
          op_end_rel_micros: 50
        }
      }
      dev_stats {
        device: "/device:GPU:0/stream:7"
        node_stats {
          node_name: "mm:MatMul"
          all_start_micros: 110
          op_end_rel_micros: 50
        }
      }
    })pb");
  REQUIRE(m.AddRunMeta(0, rm).ok());
  const GraphNode* mm = m.Find("mm");
  CHECK(mm->canonical_device() ==
        "/job:localhost/replica:0/task:0/device:gpu:0");
  CHECK(mm->host_device() == "/job:localhost/replica:0/task:0/device:cpu:0");
  CHECK(mm->op_types.count(mm->canonical_device()) == 1);
  NodeStats s = mm->Stats(0);
  CHECK(s.cpu_exec_micros == 20);
  CHECK(s.accelerator_exec_micros == 50);
  CHECK(s.exec_micros == 70);
  CHECK(s.run_count == 1);  // only canonical devices count runs
  const StepExec* e = mm->FindExec(0);
  REQUIRE(e != nullptr);
  CHECK(m.Detail(*e).devices.size() == 3);
  CHECK(m.Detail(*e).all_start_micros == 100);
  CHECK(m.Detail(*e).latest_end_micros == 160);
  // A zero duration is rounded up to 1us.
  CHECK(m.Find("x")->Stats(0).cpu_exec_micros == 1);
  CHECK_FALSE(m.miss_accelerator_stream());
  CHECK(m.run_coverage() == Approx(2.0 / 5.0));
}

TEST_CASE(
    "Repeated runs in one step add up; other canonical devices are dropped") {
  Model m = GraphModel();
  auto rm = testing::ParseTextProto<tfcore::RunMetadata>(R"pb(
    step_stats {
      dev_stats {
        device: "/job:a/replica:0/task:0/cpu:0"
        node_stats { node_name: "mm" all_start_micros: 10 op_end_rel_micros: 5 }
        node_stats { node_name: "mm" all_start_micros: 20 op_end_rel_micros: 7 }
      }
      dev_stats {
        device: "/job:b/replica:0/task:0/cpu:0"
        node_stats {
          node_name: "mm"
          all_start_micros: 30
          op_end_rel_micros: 100
        }
      }
    })pb");
  REQUIRE(m.AddRunMeta(0, rm).ok());
  NodeStats s = m.Find("mm")->Stats(0);
  CHECK(s.run_count == 2);
  CHECK(s.cpu_exec_micros == 12);
}

TEST_CASE("Memory comes from the canonical device only") {
  Model m = GraphModel();
  auto rm = testing::ParseTextProto<tfcore::RunMetadata>(R"pb(
    step_stats {
      dev_stats {
        device: "/job:localhost/replica:0/task:0/device:GPU:0"
        node_stats {
          node_name: "mm"
          all_start_micros: 100
          op_end_rel_micros: 20
          memory {
            allocator_name: "GPU_0_bfc"
            total_bytes: 1000
            peak_bytes: 800
            live_bytes: 300
            allocator_bytes_in_use: 5000
            allocation_records { alloc_micros: 101 alloc_bytes: 1000 }
          }
          memory {
            allocator_name: "cpu"
            total_bytes: 10
            peak_bytes: 5
            allocator_bytes_in_use: 99999
          }
          output {
            slot: 0
            tensor_description {
              allocation_description {
                requested_bytes: 40
                allocated_bytes: 64
                ptr: 1234
              }
            }
          }
          output {
            slot: 1
            tensor_description {}
          }
          memory_stats { temp_memory_size: 7 persistent_memory_size: 3 }
        }
      }
      dev_stats {
        device: "/device:GPU:0/stream:all"
        node_stats {
          node_name: "mm"
          all_start_micros: 110
          op_end_rel_micros: 50
          memory { allocator_name: "GPU_0_bfc" total_bytes: 1000000 }
        }
      }
    })pb");
  REQUIRE(m.AddRunMeta(0, rm).ok());
  const StepExec* e = m.Find("mm")->FindExec(0);
  REQUIRE(e != nullptr);
  const ExecDetail detail = m.Detail(*e);
  REQUIRE(detail.memory_execs.size() == 1);
  const MemoryExec& mem = detail.memory_execs[0];
  CHECK(mem.allocator_bytes_in_use == 5000);  // GPU allocators only
  CHECK(mem.output_bytes == 64);              // max(allocated, requested)
  CHECK(mem.accelerator_temp_bytes == 7);     // device is not a cpu
  CHECK(mem.accelerator_persistent_bytes == 3);
  CHECK(mem.requested_bytes == 1000 + 10 + 7 + 3);
  CHECK(mem.peak_bytes == 800 + 5 + 7 + 3);
  CHECK(mem.residual_bytes == 300 + 3);
  CHECK(mem.memory_micros == 120);
  REQUIRE(detail.allocations.size() == 1);
  CHECK(detail.allocations[0].alloc_bytes == 1000);
  NodeStats s = m.Find("mm")->Stats(0);
  CHECK(s.requested_bytes == 1020);
  CHECK(s.output_bytes == 64);
}

TEST_CASE("Host memory stats go to host temp/persistent") {
  Model m = GraphModel();
  auto rm = testing::ParseTextProto<tfcore::RunMetadata>(R"pb(
    step_stats {
      dev_stats {
        device: "/job:localhost/replica:0/task:0/cpu:0"
        node_stats {
          node_name: "x"
          all_start_micros: 5
          op_end_rel_micros: 1
          memory_stats { temp_memory_size: 11 persistent_memory_size: 13 }
        }
      }
    })pb");
  REQUIRE(m.AddRunMeta(0, rm).ok());
  const ExecDetail detail = m.Detail(*m.Find("x")->FindExec(0));
  REQUIRE(detail.memory_execs.size() == 1);
  const MemoryExec& mem = detail.memory_execs[0];
  CHECK(mem.host_temp_bytes == 11);
  CHECK(mem.host_persistent_bytes == 13);
  CHECK(mem.residual_bytes == 13);
}

TEST_CASE("Multi-step averages divide by the steps a node ran in") {
  Model m = GraphModel();
  auto step = [](int micros, bool with_x) {
    std::string s = R"pb(step_stats { dev_stats {
                           device: "/job:l/replica:0/task:0/cpu:0"
                           node_stats { node_name: "mm" all_start_micros: 10
                                        op_end_rel_micros:)pb" +
                    std::to_string(micros) + " }";
    if (with_x)
      s += R"pb(node_stats {
                  node_name: "x"
                  all_start_micros: 10
                  op_end_rel_micros: 9
                })pb";
    return s + " } }";
  };
  REQUIRE(m.AddRunMeta(
               0, testing::ParseTextProto<tfcore::RunMetadata>(step(10, true)))
              .ok());
  REQUIRE(m.AddRunMeta(
               1, testing::ParseTextProto<tfcore::RunMetadata>(step(21, false)))
              .ok());
  REQUIRE(m.AddRunMeta(
               2, testing::ParseTextProto<tfcore::RunMetadata>(step(30, false)))
              .ok());
  CHECK(m.steps() == std::set<int64_t>{0, 1, 2});
  CHECK(m.Find("mm")->Stats(-1).cpu_exec_micros == (10 + 21 + 30) / 3);
  CHECK(m.Find("x")->Stats(-1).cpu_exec_micros == 9);  // ran in 1 step only
  CHECK(m.Find("x")->Stats(1).cpu_exec_micros == 0);
  CHECK(m.Find("mm")->Stats(1).cpu_exec_micros == 21);
}

TEST_CASE("Float ops scale with runs, unrun nodes keep the static count") {
  Model m = GraphModel();
  auto log = testing::ParseTextProto<tfpb::OpLogProto>(R"pb(
    log_entries { name: "mm" float_ops: 100 types: "_trainable_variables" }
    log_entries { name: "x" float_ops: 5 }
    log_entries { name: "nope" float_ops: 5 })pb");
  m.AddOpLog(log);
  CHECK(m.Find("mm")->Stats(-1).float_ops == 100);
  CHECK(m.Find("mm")->op_types.count("_trainable_variables") == 1);
  auto rm = testing::ParseTextProto<tfcore::RunMetadata>(R"pb(
    step_stats {
      dev_stats {
        device: "/job:l/replica:0/task:0/cpu:0"
        node_stats { node_name: "mm" all_start_micros: 10 op_end_rel_micros: 1 }
        node_stats { node_name: "mm" all_start_micros: 20 op_end_rel_micros: 1 }
      }
    })pb");
  REQUIRE(m.AddRunMeta(0, rm).ok());
  CHECK(m.Find("mm")->Stats(0).float_ops == 200);
  CHECK(m.Find("nope") == nullptr);
}

TEST_CASE("RunMetadata-only nodes are created, bookkeeping names skipped") {
  Model m;
  auto rm = testing::ParseTextProto<tfcore::RunMetadata>(R"pb(
    step_stats {
      dev_stats {
        device: "/job:l/replica:0/task:0/cpu:0"
        node_stats { node_name: "_SOURCE" all_start_micros: 1 }
        node_stats { node_name: "RecvTensor" all_start_micros: 1 }
        node_stats { node_name: "MEMCPYHtoD" all_start_micros: 1 }
        node_stats {
          node_name: "eager/op:Foo"
          all_start_micros: 1
          op_end_rel_micros: 4
        }
      }
    })pb");
  REQUIRE(m.AddRunMeta(0, rm).ok());
  REQUIRE(m.size() == 1);
  const GraphNode* n = m.Find("eager/op");
  REQUIRE(n != nullptr);
  CHECK(n->op == "eager/op");
  CHECK(n->Stats(0).cpu_exec_micros == 4);
}

TEST_CASE("RunMetadata without step stats is an error") {
  Model m;
  CHECK_FALSE(m.AddRunMeta(0, tfcore::RunMetadata()).ok());
  CHECK(m.steps().empty());
}

TEST_CASE("GPU scheduling without stream:all is flagged") {
  Model m;
  auto rm = testing::ParseTextProto<tfcore::RunMetadata>(R"pb(
    step_stats {
      dev_stats {
        device: "/device:GPU:0"
        node_stats { node_name: "a" all_start_micros: 1 op_end_rel_micros: 1 }
      }
    })pb");
  REQUIRE(m.AddRunMeta(0, rm).ok());
  CHECK(m.miss_accelerator_stream());
}

TEST_CASE("Checkpoint variables become an op type") {
  Model m = GraphModel();
  m.AddCheckpointVariables({"w", "missing"});
  CHECK(m.Find("w")->op_types.count(kCheckpointVariableType) == 1);
}

TEST_CASE("Call stacks resolve ids and legacy inline strings") {
  Model m = GraphModel();
  auto log = testing::ParseTextProto<tfpb::OpLogProto>(R"pb(
    id_to_string { key: 1 value: "/a/model.py" }
    id_to_string { key: 2 value: "build" }
    log_entries {
      name: "mm"
      code_def {
        traces { file_id: 1 lineno: 7 function_id: 2 func_start_line: 3 }
      }
    }
    log_entries {
      name: "x"
      code_def {
        traces { file: "old.py" lineno: 9 function: "f" line: "x = 1" }
      }
    })pb");
  m.AddOpLog(log);
  CHECK(m.has_code_traces());
  auto frames = m.CallStack(*m.Find("mm"));
  REQUIRE(frames.size() == 1);
  CHECK(frames[0].file == "/a/model.py");
  CHECK(frames[0].function == "build");
  CHECK(frames[0].lineno == 7);
  CHECK(frames[0].func_start_line == 3);
  auto old = m.CallStack(*m.Find("x"));
  REQUIRE(old.size() == 1);
  CHECK(old[0].file == "old.py");
  CHECK(old[0].line == "x = 1");
}

TEST_CASE("The model round-trips through ProfileProto") {
  Model m = GraphModel();
  m.AddOpLog(testing::ParseTextProto<tfpb::OpLogProto>(R"pb(
    id_to_string { key: 1 value: "f.py" }
    log_entries {
      name: "mm"
      float_ops: 3
      code_def { traces { file_id: 1 lineno: 2 } }
    })pb"));
  REQUIRE(m.AddRunMeta(
               4, testing::ParseTextProto<tfcore::RunMetadata>(R"pb(
                 step_stats {
                   dev_stats {
                     device: "/job:localhost/replica:0/task:0/device:GPU:0"
                     node_stats {
                       node_name: "mm"
                       all_start_micros: 100
                       op_end_rel_micros: 20
                       memory {
                         allocator_name: "GPU_0_bfc"
                         total_bytes: 10
                         allocation_records { alloc_micros: 1 alloc_bytes: 10 }
                       }
                     }
                   }
                   dev_stats {
                     device: "/device:GPU:0/stream:all"
                     node_stats {
                       node_name: "mm"
                       all_start_micros: 110
                       op_end_rel_micros: 50
                     }
                   }
                 })pb"))
              .ok());
  tfpb::ProfileProto p = m.ToProfileProto();
  auto back = ModelFromProfileProto(p);
  REQUIRE(back.ok());
  CHECK(google::protobuf::util::MessageDifferencer::Equals(
      back->ToProfileProto(), p));
  const GraphNode* mm = back->Find("mm");
  REQUIRE(mm != nullptr);
  CHECK(mm->Stats(4).exec_micros == 70);
  CHECK(mm->Stats(4).requested_bytes == 10);
  CHECK(*mm->inputs.at(1).name == "w");
  CHECK(back->steps() == std::set<int64_t>{4});
  CHECK(back->has_code_traces());
}

}  // namespace
// The table's ids do not depend on which strings were asked for lately:
// more distinct strings than it remembers, asked for in turn, from copies
// and from the table's own storage, and strings that share a prefix.
TEST_CASE("string table: one id per distinct string, in first-seen order") {
  StringTable t;
  const std::vector<std::string> words = {"/gpu:0/stream:7",
                                          "/gpu:0/stream:1",
                                          "/gpu:0",
                                          "",
                                          "/gpu:0/stream:7x",
                                          "cpu",
                                          "/gpu:1"};
  for (int round = 0; round < 3; ++round) {
    for (size_t i = 0; i < words.size(); ++i) {
      const std::string copy = words[i];
      CHECK(t.Id(copy) == i);
      CHECK(t.Id(t.Get(static_cast<uint32_t>(i))) == i);
      CHECK(t.Get(static_cast<uint32_t>(i)) == words[i]);
    }
    for (size_t i = words.size(); i-- > 0;) CHECK(t.Id(words[i]) == i);
  }
  CHECK(t.size() == words.size());
  CHECK(t.Intern("cpu") == t.Intern(std::string("cpu")));
}

// Interned strings keep their address while the table grows and when it
// moves; a moved-from table is empty and takes new strings.
TEST_CASE("string table: addresses hold through growth and moves") {
  StringTable t;
  const std::string* first = t.Intern("node/with/a/name/longer/than/sso");
  const std::string* short_one = t.Intern("a");
  for (int i = 0; i < 50000; ++i) t.Id("n" + std::to_string(i));
  CHECK(t.Intern("node/with/a/name/longer/than/sso") == first);
  CHECK(t.Intern("a") == short_one);
  StringTable moved(std::move(t));
  CHECK(moved.size() == 50002);
  CHECK(moved.Id("n49999") == 50001);
  CHECK(&moved.Get(0) == first);
  CHECK(moved.Intern("a") == short_one);
  CHECK(t.size() == 0);  // NOLINT(bugprone-use-after-move): documented state
  CHECK(t.Id("fresh") == 0);
  CHECK(t.Get(0) == "fresh");
  t = std::move(moved);
  CHECK(t.Id("n123") == 125);
  CHECK(&t.Get(1) == short_one);
  CHECK(moved.size() == 0);  // NOLINT(bugprone-use-after-move)
}

// An empty view without data (a map entry that has no key) is the empty
// string, in both tables' quick checks of recent strings (found by the
// profile_proto fuzzer under UBSan: memcmp was handed a null pointer).
TEST_CASE("string tables: an empty view without data is the empty string") {
  StringTable t;
  const uint32_t empty = t.Id("");
  CHECK(t.Id(std::string_view()) == empty);
  std::mutex mu;
  SharedInterner shared(&t, &mu);
  CHECK(shared.Id("") == empty);
  CHECK(shared.Id(std::string_view()) == empty);
  CHECK(*shared.Intern(std::string_view()) == "");
}

// Op types: one kept in place, several sorted without repeats; the same
// answers either way.
TEST_CASE("op types: one type or several, sorted and distinct") {
  StringTable t;
  OpTypes types;
  CHECK(types.empty());
  CHECK(types.size() == 0);
  CHECK(types.begin() == types.end());
  types.insert(t.Intern("MatMul"));
  types.insert(t.Intern("MatMul"));
  CHECK(types.size() == 1);
  CHECK(types.count("MatMul"));
  CHECK_FALSE(types.count("Add"));
  types.insert(t.Intern("_trainable_variables"));
  types.insert(t.Intern("Add"));
  types.insert(t.Intern("MatMul"));
  CHECK(std::vector<std::string>(types.begin(), types.end()) ==
        std::vector<std::string>{"Add", "MatMul", "_trainable_variables"});
  CHECK(types.count("Add"));
  CHECK(types.count("_trainable_variables"));
  CHECK_FALSE(types.count("Mul"));
  CHECK_FALSE(types.empty());
}

// Shapes, attributes and call stacks read as empty on a node that has none
// (and reading them does not make room for them); written ones read back.
TEST_CASE("node details: empty until written") {
  GraphNode node;
  CHECK(node.output_shapes().empty());
  CHECK(node.stored_input_shapes().empty());
  CHECK(node.attrs().empty());
  CHECK(node.code().empty());
  CHECK(node.OutputShape(0) == nullptr);
  CHECK(&node.code() == &GraphNode().code());  // the one shared empty record
  node.mutable_output_shapes()->emplace_back(1, std::vector<int64_t>{4, 5});
  *node.mutable_code() = "stack";
  CHECK(node.OutputShape(0) == nullptr);
  REQUIRE(node.OutputShape(1) != nullptr);
  CHECK(*node.OutputShape(1) == std::vector<int64_t>{4, 5});
  CHECK(node.code() == "stack");
  CHECK(node.attrs().empty());
  CHECK(&node.code() != &GraphNode().code());
}

}  // namespace tfprof
