// Float ops of PyTorch operators from their recorded shapes (both rules),
// checked against counts worked out by hand; the peak table and how a
// device picks its row; the nested-record rule on a small trace written
// here; fractional and run-level check limits.
#include "profiler/views/flops.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "profiler/advise/gates.h"
#include "profiler/importers/kineto/torch_flops.h"
#include "profiler/load/loader.h"
#include "profiler/model/device_peaks.h"
#include "profiler/render/render_json_csv.h"
#include "profiler/render/summary.h"
#include "profiler/views/views.h"
#include "tests/corpus_util.h"
#include "tests/test_util.h"

namespace tfprof {
namespace {

using trace_internal::OpFamily;
using trace_internal::TorchFlops;
using trace_internal::TorchOpArgs;

TorchOpArgs Args(std::vector<std::vector<int64_t>> dims,
                 std::vector<std::string> types,
                 std::vector<std::string> values = {}) {
  TorchOpArgs a;
  a.dims = std::move(dims);
  a.types = std::move(types);
  a.values = std::move(values);
  a.values.resize(a.dims.size());
  return a;
}

const char kBf16[] = "c10::BFloat16";

TEST_CASE("Matrix products: 2mkn, batched 2bmkn, both rules") {
  // mm: [64, 1000] x [1000, 2048] (ResNet's linear layer, backward).
  auto r =
      TorchFlops("aten::mm", Args({{64, 1000}, {1000, 2048}}, {kBf16, kBf16}));
  CHECK(r.pytorch == 262144000);  // 2 x 64 x 1000 x 2048
  CHECK(r.extended == 262144000);
  CHECK(r.family == OpFamily::kMatmul);
  CHECK(r.dtype == Dtype::kBf16);
  // Bytes: both operands and the [64, 2048] result, 2 bytes each.
  CHECK(r.bytes == 2 * (64 * 1000 + 1000 * 2048 + 64 * 2048));
  // addmm: the bias is input 0; the product is inputs 1 and 2.
  r = TorchFlops("aten::addmm", Args({{1000}, {64, 2048}, {2048, 1000}, {}, {}},
                                     {kBf16, kBf16, kBf16, "Scalar", "Scalar"},
                                     {"", "", "", "1", "1"}));
  CHECK(r.pytorch == 2LL * 64 * 2048 * 1000);
  CHECK(r.extended == r.pytorch);
  // bmm and baddbmm: [4, 8, 16] x [4, 16, 32].
  r = TorchFlops("aten::bmm",
                 Args({{4, 8, 16}, {4, 16, 32}}, {"float", "float"}));
  CHECK(r.pytorch == 2 * 4 * 8 * 16 * 32);
  CHECK(r.extended == 2 * 4 * 8 * 16 * 32);
  CHECK(r.dtype == Dtype::kFp32);
  r = TorchFlops("aten::baddbmm", Args({{4, 8, 32}, {4, 8, 16}, {4, 16, 32}},
                                       {"float", "float", "float"}));
  CHECK(r.pytorch == 2 * 4 * 8 * 16 * 32);
  // linear over a [8, 1024, 1024] input and a [4096, 1024] weight: not in
  // PyTorch's set.
  r = TorchFlops("aten::linear",
                 Args({{8, 1024, 1024}, {4096, 1024}, {}}, {kBf16, kBf16, ""}));
  CHECK(r.pytorch == -1);
  CHECK(r.extended == 2LL * 8 * 1024 * 1024 * 4096);
  // matmul broadcasts its batch dims: [2, 1, 3, 4] @ [5, 4, 6] is 2 x 5
  // products of 3x4 by 4x6.
  r = TorchFlops("aten::matmul",
                 Args({{2, 1, 3, 4}, {5, 4, 6}}, {"float", "float"}));
  CHECK(r.extended == 2 * 10 * 3 * 4 * 6);
  r = TorchFlops("aten::matmul", Args({{7}, {7}}, {"float", "float"}));
  CHECK(r.extended == 14);  // a dot product
  r = TorchFlops("aten::matmul", Args({{3, 4}, {5, 6}}, {"float", "float"}));
  CHECK(r.extended == -1);  // the shapes do not multiply
}

TEST_CASE("Element-wise mul and add: one per element of the first operand") {
  auto r = TorchFlops(
      "aten::mul", Args({{8, 1024, 1}, {8, 1024, 1024}}, {"float", "float"}));
  CHECK(r.pytorch == 8 * 1024);
  CHECK(r.extended == 8 * 1024);
  CHECK(r.family == OpFamily::kElementwise);
  // A 0-dim tensor counts one; a scalar first operand counts nothing.
  CHECK(TorchFlops("aten::add", Args({{}, {}}, {"float", "Scalar"})).pytorch ==
        1);
  CHECK(TorchFlops("aten::mul", Args({{}, {4}}, {"Scalar", "float"})).pytorch ==
        0);
  // In-place variants are not in PyTorch's set.
  CHECK(
      TorchFlops("aten::add_", Args({{4}, {4}}, {"float", "float"})).pytorch ==
      -1);
}

TEST_CASE("Convolutions: PyTorch's conv2d formula and the extended ones") {
  // ResNet-50's first layer: 64 x 3 x 224 x 224, 64 filters 7 x 7, stride
  // 2, padding 3: a 112 x 112 output. 2 x 64 x 112 x 112 x 7 x 7 x 3 x 64.
  const int64_t first = 15105785856;
  auto r =
      TorchFlops("aten::conv2d",
                 Args({{64, 3, 224, 224}, {64, 3, 7, 7}, {}, {}, {}, {}, {}},
                      {"float", "float", "", "ScalarList", "ScalarList",
                       "ScalarList", "Scalar"},
                      {"", "", "", "[2, 2]", "[3, 3]", "[1, 1]", "1"}));
  CHECK(r.pytorch == first);
  CHECK(r.extended == first);
  CHECK(r.family == OpFamily::kConv);
  // cuDNN's entry point keeps padding before stride; fp32 with allow_tf32
  // runs on TF32 tensor cores.
  r = TorchFlops(
      "aten::cudnn_convolution",
      Args({{64, 3, 224, 224}, {64, 3, 7, 7}, {}, {}, {}, {}, {}, {}, {}},
           {"float", "float", "ScalarList", "ScalarList", "ScalarList",
            "Scalar", "Scalar", "Scalar", "Scalar"},
           {"", "", "[3, 3]", "[2, 2]", "[1, 1]", "1", "True", "False",
            "True"}));
  CHECK(r.pytorch == -1);
  CHECK(r.extended == first);
  CHECK(r.dtype == Dtype::kTf32);
  // Grouped: 8 x 32 x 10 x 10, 64 filters of 8 channels 3 x 3, 4 groups,
  // padding 1: 2 x 8 x 10 x 10 x 3 x 3 x 32 x 64 / 4 either way.
  const std::vector<std::string> types = {
      kBf16, kBf16, "", "ScalarList", "ScalarList", "ScalarList", "Scalar"};
  r = TorchFlops("aten::conv2d",
                 Args({{8, 32, 10, 10}, {64, 8, 3, 3}, {}, {}, {}, {}, {}},
                      types, {"", "", "", "[1, 1]", "[1, 1]", "[1, 1]", "4"}));
  CHECK(r.pytorch == 7372800);
  CHECK(r.extended == 7372800);
  // padding='same' (a string: PyTorch's with_flops counts 0).
  r = TorchFlops("aten::conv2d",
                 Args({{8, 32, 10, 10}, {64, 8, 3, 3}, {}, {}, {}, {}, {}},
                      types, {"", "", "", "[1, 1]", "same", "[1, 1]", "4"}));
  CHECK(r.pytorch == 0);
  CHECK(r.extended == 7372800);
  // conv1d over 2 x 4 x 100 with 6 filters of 4 x 5, stride 2, no padding:
  // 48 outputs, 2 x 2 x 48 x 6 x 4 x 5.
  r = TorchFlops("aten::conv1d",
                 Args({{2, 4, 100}, {6, 4, 5}, {}, {}, {}, {}, {}},
                      {"float", "float", "", "ScalarList", "ScalarList",
                       "ScalarList", "Scalar"},
                      {"", "", "", "[2]", "[0]", "[1]", "1"}));
  CHECK(r.extended == 2 * 2 * 48 * 6 * 4 * 5);
  CHECK(r.pytorch == -1);
  // Transposed: each input point meets the whole filter, 2 x N x 10 x 10 x
  // (32 x 16 x 3 x 3).
  r = TorchFlops(
      "aten::conv_transpose2d",
      Args({{2, 32, 10, 10}, {32, 16, 3, 3}, {}, {}, {}, {}, {}, {}},
           {"float", "float", "", "ScalarList", "ScalarList", "ScalarList",
            "Scalar", "ScalarList"},
           {"", "", "", "[2, 2]", "[1, 1]", "[1, 1]", "1", "[1, 1]"}));
  CHECK(r.extended == 2 * 2 * 100 * (32 * 16 * 9));
}

TEST_CASE("Convolution backward: each gradient costs the forward's float ops") {
  // grad [64, 2048, 7, 7], input [64, 512, 7, 7], weight 1x1 2048 x 512:
  // the forward is 2 x 64 x 7 x 7 x 2048 x 512 = 6576668672.
  const int64_t forward = 6576668672;
  auto args = [](const char* mask) {
    return Args({{64, 2048, 7, 7},
                 {64, 512, 7, 7},
                 {2048, 512, 1, 1},
                 {},
                 {},
                 {},
                 {},
                 {},
                 {},
                 {},
                 {}},
                {kBf16, kBf16, kBf16, "ScalarList", "ScalarList", "ScalarList",
                 "ScalarList", "Scalar", "ScalarList", "Scalar", "ScalarList"},
                {"", "", "", "[0]", "[1, 1]", "[0, 0]", "[1, 1]", "False",
                 "[0, 0]", "1", mask});
  };
  auto r =
      TorchFlops("aten::convolution_backward", args("[True, True, False]"));
  CHECK(r.extended == 2 * forward);
  CHECK(r.pytorch == -1);
  CHECK(r.family == OpFamily::kConvBackward);
  // The first layer needs no input gradient.
  CHECK(TorchFlops("aten::convolution_backward", args("[False, True, False]"))
            .extended == forward);
  // Outputs: the input's and the weight's gradients.
  CHECK(r.bytes == 2 * (64 * 2048 * 49 + 64 * 512 * 49 + 2048 * 512 +
                        64 * 512 * 49 + 2048 * 512));
}

TEST_CASE("Attention: grouped-query heads, different query and key lengths") {
  // 2 sequences, 8 query heads over 2 key/value heads, 128 queries against
  // 256 keys, head dims 64 (q, k) and 32 (v).
  // Forward: 2 b h_q s_q s_k (d_qk + d_v) = 2 x 2 x 8 x 128 x 256 x 96.
  const int64_t forward = 100663296;
  // Backward: 2 b h_q s_q s_k (3 d_qk + 2 d_v) = ... x 256.
  const int64_t backward = 268435456;
  const std::vector<int64_t> q = {2, 8, 128, 64}, k = {2, 2, 256, 64},
                             v = {2, 2, 256, 32};
  auto r = TorchFlops(
      "aten::_scaled_dot_product_cudnn_attention",
      Args({q, k, v, {}, {}, {}, {}, {}, {}},
           {kBf16, kBf16, kBf16, "", "Scalar", "Scalar", "Scalar", "Scalar",
            "Scalar"},
           {"", "", "", "", "True", "0.", "True", "False", "0.125"}));
  CHECK(r.extended == forward);
  CHECK(r.pytorch == -1);
  CHECK(r.causal);  // recorded; not discounted
  CHECK(r.family == OpFamily::kAttention);
  // Output [2, 8, 128, 32] besides the inputs.
  CHECK(r.bytes == 2 * (2 * 8 * 128 * 64 + 2 * 2 * 256 * 64 + 2 * 2 * 256 * 32 +
                        2 * 8 * 128 * 32));
  const std::vector<int64_t> out = {2, 8, 128, 32};
  r = TorchFlops("aten::_scaled_dot_product_flash_attention_backward",
                 Args({out, q, k, v, out, {2, 8, 128}},
                      {kBf16, kBf16, kBf16, kBf16, kBf16, "float"}));
  CHECK(r.extended == backward);
  CHECK_FALSE(r.causal);
  // The kernels' own entry points take (batch, seq, heads, dim).
  const std::vector<int64_t> qs = {2, 128, 8, 64}, ks = {2, 256, 2, 64},
                             vs = {2, 256, 2, 32};
  r = TorchFlops("aten::_flash_attention_forward",
                 Args({qs, ks, vs, {}, {}}, {kBf16, kBf16, kBf16, "", ""}));
  CHECK(r.extended == forward);
  r = TorchFlops(
      "aten::_efficient_attention_backward",
      Args({{2, 128, 8, 32}, qs, ks, vs}, {kBf16, kBf16, kBf16, kBf16}));
  CHECK(r.extended == backward);
  // Variable-length batches (cumulative lengths given): no count.
  r = TorchFlops("aten::_flash_attention_forward",
                 Args({{300, 8, 64}, {300, 2, 64}, {300, 2, 64}, {3}, {3}},
                      {kBf16, kBf16, kBf16, "int", "int"}));
  CHECK(r.extended == -1);
}

TEST_CASE("The peak table: formulas, rows and how devices pick them") {
  const PeakRow* h200 = nullptr;
  for (const PeakRow& r : PeakTable()) {
    INFO(r.name);
    CHECK(std::string(r.source).size() > 20);
    CHECK(RowPeakFlops(r, PeakClass::kHalf) > 0);
    CHECK(RowBandwidth(r) > 0);
    if (std::string(r.name) == "NVIDIA H200") h200 = &r;
  }
  REQUIRE(h200 != nullptr);
  // 4096 FLOP/cycle/SM x 132 SMs x 1.83 GHz.
  CHECK(RowPeakFlops(*h200, PeakClass::kHalf) ==
        Approx(989.4e12).epsilon(1e-4));
  CHECK(RowPeakFlops(*h200, PeakClass::kFp8) ==
        Approx(1978.9e12).epsilon(1e-4));
  auto pick = [](const std::string& name, int64_t units = 0, int cc = 0,
                 int minor = 0, int64_t clock_khz = 0, int64_t bw = 0) {
    DeviceInfo d;
    d.name = name;
    d.units = units;
    d.cc_major = cc;
    d.cc_minor = minor;
    d.clock_khz = clock_khz;
    d.bytes_per_sec = bw;
    int64_t u = 0;
    std::string note;
    const PeakRow* r = MatchPeakRow(d, &u, &note);
    return r == nullptr ? std::string("none") : std::string(r->name);
  };
  CHECK(pick("NVIDIA H200", 132) == "NVIDIA H200");
  CHECK(pick("NVIDIA H200 NVL") == "NVIDIA H200 NVL");
  CHECK(pick("NVIDIA H100 80GB HBM3", 132) == "NVIDIA H100 SXM");
  CHECK(pick("NVIDIA H100 PCIe", 114) == "NVIDIA H100 PCIe");
  CHECK(pick("NVIDIA H100 NVL") == "NVIDIA H100 NVL");
  CHECK(pick("NVIDIA A100-SXM4-80GB") == "NVIDIA A100 SXM4 80GB");
  CHECK(pick("NVIDIA A100-SXM4-40GB") == "NVIDIA A100 SXM4 40GB");
  CHECK(pick("NVIDIA A100 80GB PCIe") == "NVIDIA A100 PCIe 80GB");
  CHECK(pick("NVIDIA A100-PCIE-40GB") == "NVIDIA A100 PCIe 40GB");
  CHECK(pick("NVIDIA A10") == "NVIDIA A10");
  CHECK(pick("NVIDIA A10G") == "NVIDIA A10G");
  CHECK(pick("Tesla T4") == "NVIDIA T4");
  CHECK(pick("NVIDIA L4") == "NVIDIA L4");
  CHECK(pick("NVIDIA L40S") == "NVIDIA L40S");
  CHECK(pick("Tesla V100-SXM2-16GB") == "NVIDIA V100 SXM2");
  CHECK(pick("Tesla V100-PCIE-32GB") == "NVIDIA V100 PCIe");
  CHECK(pick("NVIDIA B200") == "NVIDIA B200");
  CHECK(pick("NVIDIA GB200") == "NVIDIA GB200");
  CHECK(pick("AMD Instinct MI300X") == "AMD Instinct MI300X");
  CHECK(pick("AMD Instinct MI250X/MI250", 110) ==
        "AMD Instinct MI250X (one GCD)");
  CHECK(pick("NVIDIA GeForce RTX 4090", 128) == "none");
  // No name (older XSpaces): compute capability and SMs, then the recorded
  // clock and bandwidth tell the variants apart.
  CHECK(pick("", 80, 7, 0, 1530000, 898048000000) == "NVIDIA V100 SXM2");
  CHECK(pick("", 80, 7, 0, 1380000, 900000000000) == "NVIDIA V100 PCIe");
  CHECK(pick("", 132, 9, 0, 1980000, 4814304000000) == "NVIDIA H200");
  CHECK(pick("", 132, 9, 0, 1980000, 3352000000000) == "NVIDIA H100 SXM");
  CHECK(pick("", 30, 7, 5) == "none");
  // A MIG slice: the row's per-SM rate and clock over the slice's SMs.
  DeviceInfo mig;
  mig.name = "NVIDIA A100-SXM4-40GB MIG 3g.20gb";
  mig.units = 42;
  int64_t units = 0;
  std::string note;
  const PeakRow* r = MatchPeakRow(mig, &units, &note);
  REQUIRE(r != nullptr);
  CHECK(units == 42);
  CHECK(RowPeakFlops(*r, PeakClass::kHalf, units) ==
        Approx(2048.0 * 42 * 1.41e9));
  CHECK(note.find("42") != std::string::npos);
}

TEST_CASE("g3doc/flops.md lists every row of the peak table with its peaks") {
  const std::string doc =
      testing::ReadFile(testing::SourceDir() + "/g3doc/flops.md");
  for (const PeakRow& r : PeakTable()) {
    INFO(r.name);
    CHECK(doc.find(absl::StrCat("| ", r.name, " |")) != std::string::npos);
    CHECK(doc.find(absl::StrFormat("%.1f", RowPeakFlops(r, PeakClass::kHalf) /
                                               1e12)) != std::string::npos);
  }
}

// A PyTorch trace of one step: autocast's outer fp32 conv2d around its
// casts of the inputs and the bf16 one that ran (conv2d > convolution >
// cudnn_convolution, which launched the kernel), a linear over addmm, and an
// mm with an element-wise mul inside it.
std::string NestedTrace() {
  auto op = [](const std::string& name, int ts, int dur,
               const std::string& args) {
    return absl::StrCat(R"({"ph": "X", "cat": "cpu_op", "name": ")", name,
                        R"(", "pid": 1, "tid": 1, "ts": )", ts, R"(, "dur": )",
                        dur, R"(, "args": {)", args, "}}");
  };
  const std::string conv_f =
      R"("Input Dims": [[8, 3, 32, 32], [16, 3, 3, 3], [], [], [], [], []], "Input type": ["float", "float", "", "ScalarList", "ScalarList", "ScalarList", "Scalar"], "Concrete Inputs": ["", "", "", "[1, 1]", "[1, 1]", "[1, 1]", "1"])";
  std::string conv_b = conv_f;
  conv_b.replace(conv_b.find("\"float\", \"float\""), 16,
                 "\"c10::BFloat16\", \"c10::BFloat16\"");
  const std::string convolution =
      R"("Input Dims": [[8, 3, 32, 32], [16, 3, 3, 3], [], [], [], [], [], [], []], "Input type": ["c10::BFloat16", "c10::BFloat16", "", "ScalarList", "ScalarList", "ScalarList", "Scalar", "ScalarList", "Scalar"], "Concrete Inputs": ["", "", "", "[1, 1]", "[1, 1]", "[1, 1]", "False", "[0, 0]", "1"])";
  const std::string cudnn =
      R"("External id": 9, "Input Dims": [[8, 3, 32, 32], [16, 3, 3, 3], [], [], [], [], [], [], []], "Input type": ["c10::BFloat16", "c10::BFloat16", "ScalarList", "ScalarList", "ScalarList", "Scalar", "Scalar", "Scalar", "Scalar"], "Concrete Inputs": ["", "", "[1, 1]", "[1, 1]", "[1, 1]", "1", "True", "False", "True"])";
  const std::string linear =
      R"("Input Dims": [[8, 64], [10, 64], [10]], "Input type": ["c10::BFloat16", "c10::BFloat16", "c10::BFloat16"])";
  const std::string addmm =
      R"("Input Dims": [[10], [8, 64], [64, 10], [], []], "Input type": ["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "Scalar", "Scalar"])";
  const std::string mm =
      R"("Input Dims": [[32, 64], [64, 16]], "Input type": ["float", "float"])";
  const std::string mul =
      R"("Input Dims": [[32, 64], []], "Input type": ["float", "Scalar"])";
  return absl::StrCat(
      R"({"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA H200", "numSms": 132, "computeMajor": 9, "computeMinor": 0}], "record_shapes": 1, "with_flops": 1, "traceEvents": [
)",
      R"({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#3", "pid": 1, "tid": 1, "ts": 1000, "dur": 1000},
)",
      op("aten::conv2d", 1010, 100, conv_f), ",\n",
      op("aten::_to_copy", 1012, 5, ""), ",\n",
      op("aten::conv2d", 1020, 80, conv_b), ",\n",
      op("aten::convolution", 1030, 60, convolution), ",\n",
      op("aten::cudnn_convolution", 1040, 40, cudnn), ",\n",
      R"({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 1050, "dur": 5, "args": {"correlation": 77}},
)",
      R"({"ph": "X", "cat": "kernel", "name": "conv_kernel", "pid": 0, "tid": 7, "ts": 1100, "dur": 200, "args": {"correlation": 77, "device": 0, "stream": 7}},
)",
      op("aten::linear", 1200, 100, linear), ",\n",
      op("aten::addmm", 1210, 50, addmm), ",\n",
      // addmm launches two kernels, 30us and 10us.
      R"({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 1215, "dur": 5, "args": {"correlation": 78}},
{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 1225, "dur": 5, "args": {"correlation": 79}},
{"ph": "X", "cat": "kernel", "name": "gemm_kernel", "pid": 0, "tid": 7, "ts": 1300, "dur": 30, "args": {"correlation": 78, "device": 0, "stream": 7}},
{"ph": "X", "cat": "kernel", "name": "bias_kernel", "pid": 0, "tid": 7, "ts": 1340, "dur": 10, "args": {"correlation": 79, "device": 0, "stream": 7}},
)",
      op("aten::mm", 1400, 100, mm), ",\n", op("aten::mul", 1410, 20, mul),
      "\n]}\n");
}

TEST_CASE("Nested records: each computation once, or PyTorch's own way") {
  const std::string dir = testing::TempDir();
  testing::WriteFile(dir + "/nested.pt.trace.json", NestedTrace());
  InputPaths paths;
  paths.trace_path = dir + "/nested.pt.trace.json";
  auto loaded = LoadProfile(paths);
  REQUIRE(loaded.ok());
  const Model& m = (*loaded)->model;
  // The convolution: 8 x 16 outputs of 32 x 32, each 3 x 3 x 3: 2 x 8 x 32
  // x 32 x 16 x 27.
  const int64_t conv = 2LL * 8 * 32 * 32 * 16 * 27;
  const int64_t linear = 2 * 8 * 64 * 10, mm = 2 * 32 * 64 * 16;
  const int64_t mul = 32 * 64;
  auto op_flops = [&](const std::string& rule) {
    Views views(&m, nullptr);
    Options o;
    o.max_depth = 100;
    o.select = {Attr::kFloatOps};
    o.flops_rule = rule;
    absl::StatusOr<ResultTree> r = views.Query(ViewKind::kOp, o);
    REQUIRE(r.ok());
    std::map<std::string, int64_t> rows;
    for (size_t c : r->root().children) {
      rows[r->nodes[c].name] = r->nodes[c].self.float_ops;
    }
    return rows;
  };
  {
    // A view says which rule its float ops follow.
    Views views(&m, nullptr);
    Options o;
    o.select = {Attr::kFloatOps};
    o.flops_rule = "pytorch";
    absl::StatusOr<ResultTree> r = views.Query(ViewKind::kOp, o);
    REQUIRE(r.ok());
    CHECK(RenderJson(*r).find("\"flops_rule\": \"pytorch\"") !=
          std::string::npos);
    CHECK(std::find(r->notes.begin(), r->notes.end(),
                    "float_ops by the pytorch rule (-flops_rule)") !=
          r->notes.end());
  }
  // PyTorch's rule: both conv2d records count (as key_averages does), the
  // linear layer only through addmm, mm and mul on their own.
  auto py = op_flops("pytorch");
  CHECK(py["aten::conv2d"] == 2 * conv);
  CHECK(py["aten::cudnn_convolution"] == 0);
  CHECK(py["aten::addmm"] == linear);
  CHECK(py["aten::linear"] == 0);
  CHECK(py["aten::mm"] == mm);
  CHECK(py["aten::mul"] == mul);
  // The extended rule: the convolution once, on the record that ran it; a
  // mul inside the mm does not stop the mm from counting.
  auto ext = op_flops("extended");
  CHECK(ext["aten::conv2d"] == 0);
  CHECK(ext["aten::convolution"] == 0);
  CHECK(ext["aten::cudnn_convolution"] == conv);
  CHECK(ext["aten::addmm"] == linear);
  CHECK(ext["aten::linear"] == 0);
  CHECK(ext["aten::mm"] == mm);
  CHECK(ext["aten::mul"] == mul);
  const ProfileSummary s = Summarize(m);
  CHECK(s.flops.flops_per_step == conv + linear + mm + mul);
  CHECK(s.flops.flops_set == "extended rule");
  // Most of the float ops are bf16: the H200's bf16 peak, one device.
  CHECK(s.flops.peak.dtype == Dtype::kBf16);
  CHECK(s.flops.peak.flops == Approx(4096.0 * 132 * 1.83e9));
  // The step's wall time is its ProfilerStep's 1000us.
  REQUIRE(s.flops.mfu.has_value());
  CHECK(*s.flops.mfu == Approx(static_cast<double>(conv + linear + mm + mul) /
                               (1e-3 * 4096.0 * 132 * 1.83e9)));
  // The kernel carries its launching op's float ops.
  Views views(&m, nullptr);
  Options o;
  o.select = {Attr::kFloatOps, Attr::kAcceleratorFlopRate};
  absl::StatusOr<ResultTree> k = views.Query(ViewKind::kKernel, o);
  REQUIRE(k.ok());
  std::map<std::string, const ResultNode*> kernels;
  for (size_t c : k->root().children) kernels[k->nodes[c].name] = &k->nodes[c];
  REQUIRE(kernels.size() == 3);
  const ResultNode& kernel = *kernels.at("conv_kernel");
  CHECK(kernel.self.float_ops == conv);
  REQUIRE(kernel.flops != nullptr);
  CHECK(kernel.flops->flop_rate == Approx(conv / 200e-6));
  CHECK_FALSE(kernel.flops->split);
  // An op that launched two kernels: its float ops split by their time.
  CHECK(kernels.at("gemm_kernel")->self.float_ops == linear * 3 / 4);
  CHECK(kernels.at("bias_kernel")->self.float_ops == linear / 4);
  CHECK(kernels.at("gemm_kernel")->flops->split);
  CHECK(k->root().total.float_ops == conv + linear);
  bool said = false;
  for (const std::string& n : k->notes) {
    said = said || n.find("split over them by their time") != std::string::npos;
  }
  CHECK(said);
  // The header says how it was recorded.
  CHECK(m.activity().recording().with_flops);
  CHECK(m.activity().recording().record_shapes);
}

TEST_CASE(
    "An unknown GPU gives no MFU, with the hint; --peak_flops gives one") {
  const std::string dir = testing::TempDir();
  std::string trace = NestedTrace();
  trace.replace(trace.find("NVIDIA H200"), 11, "NVIDIA Hx999");
  testing::WriteFile(dir + "/unknown.pt.trace.json", trace);
  InputPaths paths;
  paths.trace_path = dir + "/unknown.pt.trace.json";
  auto loaded = LoadProfile(paths);
  REQUIRE(loaded.ok());
  const Model& m = (*loaded)->model;
  ProfileSummary s = Summarize(m);
  CHECK_FALSE(s.flops.mfu.has_value());
  CHECK(MfuText(s.flops) ==
        "MFU: n/a (unknown GPU 'NVIDIA Hx999'; pass --peak_flops)");
  CHECK(RenderSummary(s, nullptr)
            .find("MFU:         n/a (unknown GPU 'NVIDIA Hx999'; pass "
                  "--peak_flops)") != std::string::npos);
  CHECK(RenderSummaryJson(s).find("\"mfu\": null") != std::string::npos);
  PeakOverride o;
  o.flops = 100e12;
  s = Summarize(m, o);
  REQUIRE(s.flops.mfu.has_value());
  CHECK(*s.flops.mfu ==
        Approx(static_cast<double>(s.flops.flops_per_step) / (1e-3 * 100e12)));
  CHECK(s.flops.peak.source == "--peak_flops x 1 device");
  // The user's peak is no element type's: the text names its source alone.
  CHECK(MfuText(s.flops).find("dense peak") == std::string::npos);
  CHECK(MfuText(s.flops).find("of 100 TFLOP/s (--peak_flops x 1 device)") !=
        std::string::npos);
  // A gate on an unknown MFU fails and says why; with a peak it compares.
  auto gate = EvaluateGates(m, {*ParseCondition("mfu >= 0.01")}, -1);
  REQUIRE(gate.ok());
  CHECK_FALSE((*gate)[0].passed);
  CHECK((*gate)[0].message ==
        "FAIL mfu = n/a (unknown GPU 'NVIDIA Hx999'; pass --peak_flops) "
        "(limit >= 1.00%, run)");
  const double mfu = *s.flops.mfu;
  gate = EvaluateGates(m,
                       {*ParseCondition(absl::StrCat("mfu >= ", mfu * 0.99)),
                        *ParseCondition(absl::StrCat("mfu >= ", mfu * 1.01))},
                       -1, GateBase(), o);
  REQUIRE(gate.ok());
  CHECK((*gate)[0].passed);
  CHECK_FALSE((*gate)[1].passed);
  CHECK((*gate)[0].value == Approx(mfu));
}

// An op type's rate divides the float ops by the time of its nodes that
// have float ops: an mm without recorded shapes (no float ops) ran 100us
// as well, which is no part of the counted computation.
TEST_CASE("An op row's FLOP rate leaves out the time of its nodes without") {
  const std::string mm =
      R"("Input Dims": [[32, 64], [64, 16]], "Input type": ["float", "float"])";
  const std::string trace = absl::StrCat(
      R"({"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA H200", "numSms": 132, "computeMajor": 9, "computeMinor": 0}], "record_shapes": 1, "traceEvents": [
{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 1000, "dur": 1000},
{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 1010, "dur": 50, "args": {)",
      mm, R"(}},
{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 1020, "dur": 5, "args": {"correlation": 80}},
{"ph": "X", "cat": "kernel", "name": "mm_kernel", "pid": 0, "tid": 7, "ts": 1100, "dur": 100, "args": {"correlation": 80, "device": 0, "stream": 7}},
{"ph": "X", "cat": "cpu_op", "name": "aten::linear", "pid": 1, "tid": 1, "ts": 1300, "dur": 100, "args": {}},
{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 1310, "dur": 50, "args": {}},
{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 1320, "dur": 5, "args": {"correlation": 81}},
{"ph": "X", "cat": "kernel", "name": "mm_kernel", "pid": 0, "tid": 7, "ts": 1400, "dur": 100, "args": {"correlation": 81, "device": 0, "stream": 7}}
]}
)");
  const std::string dir = testing::TempDir();
  testing::WriteFile(dir + "/rate.pt.trace.json", trace);
  InputPaths paths;
  paths.trace_path = dir + "/rate.pt.trace.json";
  auto loaded = LoadProfile(paths);
  REQUIRE(loaded.ok());
  Views views(&(*loaded)->model, nullptr);
  Options o;
  o.select = {Attr::kAcceleratorMicros, Attr::kFloatOps,
              Attr::kAcceleratorFlopRate};
  absl::StatusOr<ResultTree> r = views.Query(ViewKind::kOp, o);
  REQUIRE(r.ok());
  const ResultNode* row = nullptr;
  for (size_t c : r->root().children) {
    if (r->nodes[c].name == "aten::mm") row = &r->nodes[c];
  }
  REQUIRE(row != nullptr);
  CHECK(row->self.accelerator_exec_micros == 200);
  CHECK(row->self.float_ops == 2 * 32 * 64 * 16);
  REQUIRE(row->flops != nullptr);
  CHECK(row->flops->rate_micros == 100);
  CHECK(row->flops->flop_rate == Approx(2.0 * 32 * 64 * 16 / 100e-6));
}

// A kernel row's FLOP rate divides by its nanoseconds per step, not by the
// whole microseconds its row shows (off by up to 1% for a kernel of tens of
// microseconds a step).
TEST_CASE("Kernel rows' FLOP rates use their nanoseconds") {
  InputPaths p;
  p.trace_path = testing::CorpusFile("gpu-h200-2026/jax_lm_nocb.xplane.pb.gz");
  auto loaded = LoadProfile(p);
  REQUIRE(loaded.ok());
  Views views(&(*loaded)->model, nullptr);
  Options o;
  o.max_depth = 1000;
  o.select = {Attr::kFloatOps, Attr::kAcceleratorFlopRate};
  absl::StatusOr<ResultTree> k = views.Query(ViewKind::kKernel, o);
  REQUIRE(k.ok());
  int rated = 0, apart = 0;
  for (size_t c : k->root().children) {
    const ResultNode& n = k->nodes[c];
    if (n.flops == nullptr || n.kernel == nullptr || n.self.float_ops <= 0) {
      continue;
    }
    INFO(n.name);
    const double steps = static_cast<double>(n.kernel->steps * n.kernel->ranks);
    const double ns_per_step = static_cast<double>(n.kernel->total_ns) / steps;
    const double flops = static_cast<double>(n.self.float_ops);
    CHECK(n.flops->flop_rate == Approx(flops / (ns_per_step * 1e-9)));
    const double by_micros =
        flops / (static_cast<double>(n.self.accelerator_exec_micros) * 1e-6);
    apart += std::abs(by_micros / n.flops->flop_rate - 1) > 1e-3;
    ++rated;
  }
  CHECK(rated >= 10);
  CHECK(apart >= 1);  // where whole microseconds would have differed
}

TEST_CASE("Without float ops there is no MFU, and a gate on it fails") {
  const std::string dir = testing::TempDir();
  testing::WriteFile(
      dir + "/none.pt.trace.json",
      R"({"deviceProperties": [{"id": 0, "name": "NVIDIA H200", "numSms": 132}], "traceEvents": [
{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 100, "dur": 100},
{"ph": "X", "cat": "cpu_op", "name": "aten::relu", "pid": 1, "tid": 1, "ts": 110, "dur": 20},
{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 115, "dur": 5, "args": {"correlation": 5}},
{"ph": "X", "cat": "kernel", "name": "relu_kernel", "pid": 0, "tid": 7, "ts": 130, "dur": 10, "args": {"correlation": 5, "device": 0, "stream": 7}}
]})");
  InputPaths paths;
  paths.trace_path = dir + "/none.pt.trace.json";
  auto loaded = LoadProfile(paths);
  REQUIRE(loaded.ok());
  const ProfileSummary s = Summarize((*loaded)->model);
  CHECK(s.flops.flops_per_step == 0);
  CHECK_FALSE(s.flops.mfu.has_value());
  CHECK(MfuText(s.flops) == "MFU: n/a (no float ops)");
  CHECK(RenderSummaryJson(s).find("\"mfu\": null") != std::string::npos);
  auto gate =
      EvaluateGates((*loaded)->model, {*ParseCondition("mfu >= 0")}, -1);
  REQUIRE(gate.ok());
  CHECK_FALSE((*gate)[0].passed);
  CHECK((*gate)[0].message.find("n/a (no float ops)") != std::string::npos);
}

TEST_CASE("check limits keep their fractions; run terms take no regex") {
  auto c = ParseCondition("params >= 0.35");
  REQUIRE(c.ok());
  CHECK(c->limit == 0.35);
  CHECK(ParseCondition("mfu >= 35%")->limit == Approx(0.35));
  CHECK(ParseCondition("flops_per_step > 1.5t")->limit == 1.5e12);
  CHECK(ParseCondition("flop_rate >= 3e14")->limit == 3e14);
  CHECK(ParseCondition("mfu >= 2.5E-2")->limit == Approx(0.025));
  CHECK(ParseCondition("mfu <= base*1.1")->kind == LimitKind::kBaseTimes);
  for (const char* bad : {"mfu[conv.*] >= 0.3", "significant(mfu) == 0",
                          "flop_rate? > 1", "mfu >= 35ms"}) {
    INFO(bad);
    CHECK_FALSE(ParseCondition(bad).ok());
  }
  // TensorFlow's test run has 451 parameters: a fractional limit is not
  // rounded to a whole one.
  auto loaded = LoadProfile(testing::TfTestData());
  REQUIRE(loaded.ok());
  auto r = EvaluateGates(
      (*loaded)->model,
      {*ParseCondition("params <= 450.6"), *ParseCondition("params >= 450.6"),
       *ParseCondition("params >= 0.35")},
      -1);
  REQUIRE(r.ok());
  CHECK_FALSE((*r)[0].passed);
  CHECK((*r)[0].message ==
        "FAIL params = 451 (limit <= 450.6, 32 nodes): over by 0.4 (0.1%)");
  CHECK((*r)[1].passed);
  CHECK((*r)[2].passed);
}

}  // namespace
}  // namespace tfprof
