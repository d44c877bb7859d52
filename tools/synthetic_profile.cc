#include "tools/synthetic_profile.h"

#include <random>

#include "absl/strings/str_cat.h"
#include "profiler/base/protos.h"

namespace tfprof {

void GenerateProfile(const GenOptions& options,
                     const std::function<void(const std::string&)>& sink) {
  std::mt19937_64 rng(options.seed);
  const char* ops[] = {"MatMul",   "Conv2D",     "Add",     "Relu", "Const",
                       "Identity", "VariableV2", "BiasAdd", "Mul",  "Sum"};
  const std::string cpu = "/job:worker/replica:0/task:0/device:cpu:0";
  const std::string gpu = "/job:worker/replica:0/task:0/device:gpu:0";
  const std::string stream = "/device:gpu:0/stream:all";

  // A message's serialization is the concatenation of its fields', so the
  // header and each node are serialized on their own.
  {
    tfpb::ProfileProto header;
    header.set_has_trace(true);
    for (int64_t s = 0; s < options.steps; ++s) header.add_steps(s);
    (*header.mutable_id_to_string())[0] = "none";
    (*header.mutable_id_to_string())[1] = "/src/model.py";
    (*header.mutable_id_to_string())[2] = "/src/layers.py";
    for (int f = 0; f < 50; ++f) {
      (*header.mutable_id_to_string())[10 + f] = absl::StrCat("function_", f);
    }
    sink(header.SerializeAsString());
  }
  const int64_t start = 1600000000000000;
  tfpb::ProfileProto part;
  for (int64_t i = 0; i < options.nodes; ++i) {
    part.Clear();
    tfpb::ProfileNode& n = (*part.mutable_nodes())[i];
    std::string name = "model";
    for (int64_t d = 0; d < options.depth; ++d) {
      name += absl::StrCat("/block", (i >> (2 * (options.depth - d))) % 4);
    }
    name += absl::StrCat("/op", i);
    const char* const* op_ptr = &ops[rng() % 10];
    const char* op = *op_ptr;
    n.set_name(name);
    n.set_op(op);
    n.set_id(i);
    n.add_op_types(op);
    if (std::string(op) == "VariableV2") {
      n.add_shape(static_cast<int64_t>(rng() % 512 + 1));
      n.add_shape(static_cast<int64_t>(rng() % 512 + 1));
      n.add_op_types("_trainable_variables");
    }
    if (i > 0) (*n.mutable_inputs())[0] = static_cast<int64_t>(rng() % i);
    if (i > 1) (*n.mutable_inputs())[1] = static_cast<int64_t>(rng() % i);
    (*n.mutable_output_shapes())[0].add_int64_values(32);
    n.set_float_ops(static_cast<int64_t>(rng() % 100000));
    // Call stacks as a model builder makes them: the training script, the
    // model function of the outermost block, the layer function of the
    // innermost block, and the line of the library that creates this op
    // type, so that stacks share most frames.
    auto* trace = n.mutable_trace();
    const int64_t outer = (i >> (2 * options.depth)) % 4;
    const int64_t inner = (i >> 2) % 16;
    const int64_t op_index = static_cast<int64_t>(op_ptr - ops);
    const int64_t frames[4][3] = {
        {1, 100, 10},                              // train.py main
        {1, 20 + outer, 11 + outer},               // model.py block function
        {2, 40 + inner, 20 + inner % 10},          // layers.py layer function
        {2, 200 + 10 * op_index, 40 + op_index}};  // the op's library line
    for (const auto& f : frames) {
      auto* tr = trace->add_traces();
      tr->set_file_id(f[0]);
      tr->set_lineno(static_cast<int32_t>(f[1]));
      tr->set_function_id(f[2]);
    }
    const bool on_gpu = rng() % 2 == 0;
    n.set_canonical_device(on_gpu ? gpu : cpu);
    n.set_host_device(cpu);
    n.add_op_types(n.canonical_device());
    for (int64_t s = 0; s < options.steps; ++s) {
      if (rng() % 10 == 0) continue;  // not every node runs every step
      auto& e = (*n.mutable_execs())[s];
      const int64_t t0 =
          start + s * 1000000 + static_cast<int64_t>(rng() % 900000);
      const int64_t dur = static_cast<int64_t>(rng() % 500 + 1);
      e.set_run_count(1);
      e.set_all_start_micros(t0);
      e.set_latest_end_micros(t0 + dur);
      auto* ct = (*e.mutable_cpu_execs())[n.canonical_device()].add_times();
      ct->add_int64_values(t0);
      ct->add_int64_values(dur);
      if (on_gpu) {
        auto* at = (*e.mutable_accelerator_execs())[stream].add_times();
        at->add_int64_values(t0 + 2);
        at->add_int64_values(dur / 2 + 1);
        e.add_devices(stream);  // sorted, as TensorFlow writes them
      }
      e.add_devices(n.canonical_device());
      auto* m = e.add_memory_execs();
      m->set_memory_micros(t0 + dur);
      m->set_requested_bytes(static_cast<int64_t>(rng() % 1000000));
      m->set_peak_bytes(m->requested_bytes());
      m->set_residual_bytes(static_cast<int64_t>(rng() % 1000));
      m->set_output_bytes(static_cast<int64_t>(rng() % 100000));
    }
    sink(part.SerializeAsString());
  }
}

}  // namespace tfprof
