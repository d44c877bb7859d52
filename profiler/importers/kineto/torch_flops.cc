#include "profiler/importers/kineto/torch_flops.h"

#include <algorithm>
#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "profiler/base/saturate.h"

namespace tfprof {
namespace trace_internal {
namespace {

using Dims = std::vector<int64_t>;

// --- Reading the arguments.

// Bytes per element of a recorded tensor type; 0 for a non-tensor.
int64_t ElementBytes(absl::string_view type) {
  const Dtype d = DtypeFromTorch(std::string_view(type.data(), type.size()));
  if (d != Dtype::kInt) return DtypeBytes(d);
  if (type == "long int" || type == "long") return 8;
  if (type == "int") return 4;
  if (type == "short int" || type == "short") return 2;
  return 1;  // bool, (un)signed char
}

// Whether input i is a tensor: its recorded type is an element type, or
// (older traces record no types) it has dims.
bool IsTensor(const TorchOpArgs& a, size_t i) {
  if (a.types.empty()) return i < a.dims.size() && !a.dims[i].empty();
  return i < a.types.size() && i < a.dims.size() &&
         DtypeFromTorch(a.types[i]) != Dtype::kUnknown;
}

absl::string_view ValueAt(const TorchOpArgs& a, size_t i) {
  return i < a.values.size() ? absl::string_view(a.values[i])
                             : absl::string_view();
}

// "[2, 2]" (or a bare "2") -> {2, 2}; nullopt for anything else.
std::optional<Dims> IntList(absl::string_view text) {
  absl::string_view s = absl::StripAsciiWhitespace(text);
  const bool bracketed = absl::ConsumePrefix(&s, "[");
  if (bracketed && !absl::ConsumeSuffix(&s, "]")) return std::nullopt;
  Dims out;
  if (absl::StripAsciiWhitespace(s).empty()) {
    if (bracketed) return out;
    return std::nullopt;
  }
  for (absl::string_view part : absl::StrSplit(s, ',')) {
    int64_t v;
    if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(part), &v)) {
      return std::nullopt;
    }
    out.push_back(v);
  }
  return out;
}

std::optional<int64_t> IntValue(absl::string_view text) {
  int64_t v;
  if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(text), &v)) {
    return std::nullopt;
  }
  return v;
}

// "[True, True, False]" -> {1, 1, 0}.
std::vector<bool> BoolList(absl::string_view text) {
  absl::string_view s = absl::StripAsciiWhitespace(text);
  absl::ConsumePrefix(&s, "[");
  absl::ConsumeSuffix(&s, "]");
  std::vector<bool> out;
  for (absl::string_view part : absl::StrSplit(s, ',', absl::SkipEmpty())) {
    out.push_back(absl::StripAsciiWhitespace(part) == "True");
  }
  return out;
}

int64_t Numel(const Dims& d, size_t from = 0) {
  int64_t n = 1;
  for (size_t i = from; i < d.size(); ++i)
    n = SatMul(n, std::max<int64_t>(d[i], 0));
  return n;
}

// Bytes of every tensor input of the record.
int64_t InputBytes(const TorchOpArgs& a) {
  int64_t bytes = 0;
  for (size_t i = 0; i < a.dims.size() && i < a.types.size(); ++i) {
    if (!IsTensor(a, i)) continue;
    bytes = SatAdd(bytes, SatMul(Numel(a.dims[i]), ElementBytes(a.types[i])));
  }
  return bytes;
}

Dtype DtypeAt(const TorchOpArgs& a, size_t i) {
  return i < a.types.size() ? DtypeFromTorch(a.types[i]) : Dtype::kUnknown;
}

// The result for a computation on operand `first` with `flops` and outputs
// of `output_elements` elements of the operand's type.
TorchOpFlops Result(OpFamily family, const TorchOpArgs& a, size_t first,
                    int64_t flops, int64_t output_elements) {
  TorchOpFlops r;
  r.family = family;
  r.extended = flops;
  r.dtype = DtypeAt(a, first);
  const int64_t size =
      first < a.types.size() ? ElementBytes(a.types[first]) : 0;
  r.bytes = SatAdd(InputBytes(a), SatMul(output_elements, size));
  return r;
}

// --- PyTorch's with_flops rule (torch/csrc/profiler/util.cpp), in its
// unsigned arithmetic, with its argument checks: a record that fails them
// counts 0.

bool Valid(const TorchOpArgs& a, size_t min_inputs,
           std::initializer_list<size_t> tensors) {
  if (a.dims.size() < min_inputs) return false;
  for (size_t i : tensors) {
    if (!IsTensor(a, i)) return false;
  }
  return true;
}

uint64_t Product(const Dims& d) {
  uint64_t p = 1;
  for (int64_t x : d) p *= static_cast<uint64_t>(x);
  return p;
}

// mm/addmm (batched = false) and bmm/baddbmm (true).
uint64_t TorchGemm(const Dims& mat1, const Dims& mat2, bool batched) {
  if (mat1.empty()) return 0;
  const uint64_t batch = static_cast<uint64_t>(mat1.front());
  const uint64_t overlap = static_cast<uint64_t>(mat1.back());
  if (overlap == 0 || (batched && batch == 0)) return 0;
  uint64_t flops = Product(mat1) / overlap;
  if (batched) flops /= batch;
  return flops * Product(mat2) * 2;
}

uint64_t TorchConv2d(const TorchOpArgs& a) {
  if (!Valid(a, 7, {0, 1})) return 0;
  const Dims& x = a.dims[0];
  const Dims& w = a.dims[1];
  const std::optional<Dims> stride = IntList(ValueAt(a, 3));
  const std::optional<Dims> padding = IntList(ValueAt(a, 4));
  const std::optional<Dims> dilation = IntList(ValueAt(a, 5));
  const std::optional<int64_t> groups = IntValue(ValueAt(a, 6));
  if (x.size() != 4 || w.size() != 4 || !stride || !padding || !dilation ||
      !groups || *groups == 0 || padding->size() != 2 ||
      dilation->size() != 2 || stride->size() != 2 ||
      (*stride)[0] * (*stride)[1] == 0) {
    return 0;
  }
  auto out = [&](int i) -> uint64_t {
    return (static_cast<uint64_t>(x[2 + i]) +
            2 * static_cast<uint64_t>((*padding)[i]) -
            static_cast<uint64_t>((*dilation)[i]) *
                (static_cast<uint64_t>(w[2 + i]) - 1) -
            1) /
               static_cast<uint64_t>((*stride)[i]) +
           1;
  };
  return 2 * static_cast<uint64_t>(x[0]) * out(0) * out(1) *
         static_cast<uint64_t>(w[2]) * static_cast<uint64_t>(w[3]) *
         static_cast<uint64_t>(x[1]) * static_cast<uint64_t>(w[0]) /
         static_cast<uint64_t>(*groups);
}

// -1 when `name` is not in PyTorch's set.
int64_t PyTorchFlops(absl::string_view name, const TorchOpArgs& a) {
  uint64_t flops = 0;
  if (name == "aten::conv2d") {
    flops = TorchConv2d(a);
  } else if (name == "aten::mm" || name == "aten::bmm") {
    if (Valid(a, 2, {0, 1})) {
      flops = TorchGemm(a.dims[0], a.dims[1], name == "aten::bmm");
    }
  } else if (name == "aten::addmm" || name == "aten::baddbmm") {
    if (Valid(a, 3, {0, 1, 2})) {
      flops = TorchGemm(a.dims[1], a.dims[2], name == "aten::baddbmm");
    }
  } else if (name == "aten::mul" || name == "aten::add") {
    if (Valid(a, 1, {0})) flops = Product(a.dims[0]);
  } else {
    return -1;
  }
  return static_cast<int64_t>(std::min<uint64_t>(flops, INT64_MAX));
}

// --- The extended rule (torch.utils.flop_counter's formulas).

// a @ b with numpy's broadcasting; -1 when the shapes do not multiply.
int64_t MatmulFlops(const Dims& a, const Dims& b, int64_t* out_elements) {
  if (a.empty() || b.empty()) return -1;
  const int64_t k = a.back();
  const bool a_vec = a.size() == 1, b_vec = b.size() == 1;
  const int64_t kb = b_vec ? b[0] : b[b.size() - 2];
  if (k != kb) return -1;
  const int64_t m = a_vec ? 1 : a[a.size() - 2];
  const int64_t n = b_vec ? 1 : b.back();
  // The batch: the broadcast of the leading dims.
  const size_t ra = a_vec ? 0 : a.size() - 2, rb = b_vec ? 0 : b.size() - 2;
  int64_t batch = 1;
  for (size_t i = 0; i < std::max(ra, rb); ++i) {
    const int64_t da = i < ra ? a[ra - 1 - i] : 1;
    const int64_t db = i < rb ? b[rb - 1 - i] : 1;
    if (da != db && da != 1 && db != 1) return -1;
    batch = SatMul(batch, std::max(da, db));
  }
  *out_elements = SatMul(SatMul(batch, m), n);
  return SatMul(SatMul(*out_elements, k), 2);
}

std::optional<TorchOpFlops> Matmul(absl::string_view name,
                                   const TorchOpArgs& a) {
  size_t x = 0, y = 1;
  if (name == "aten::addmm" || name == "aten::baddbmm") {
    x = 1;
    y = 2;
  } else if (name != "aten::mm" && name != "aten::bmm" &&
             name != "aten::matmul" && name != "aten::linear") {
    return std::nullopt;
  }
  if (!IsTensor(a, x) || !IsTensor(a, y)) {
    TorchOpFlops r;
    r.family = OpFamily::kMatmul;
    return r;
  }
  const Dims& p = a.dims[x];
  const Dims& q = a.dims[y];
  int64_t out = 0, flops = -1;
  if (name == "aten::linear") {
    // weight [out_features, in_features]
    if (q.size() == 2 && !p.empty() && p.back() == q[1]) {
      out = SatMul(Numel(Dims(p.begin(), p.end() - 1)), q[0]);
      flops = SatMul(SatMul(out, q[1]), 2);
    }
  } else if (name == "aten::mm" || name == "aten::addmm") {
    if (p.size() == 2 && q.size() == 2) flops = MatmulFlops(p, q, &out);
  } else if (name == "aten::bmm" || name == "aten::baddbmm") {
    if (p.size() == 3 && q.size() == 3 && p[0] == q[0]) {
      flops = MatmulFlops(p, q, &out);
    }
  } else {
    flops = MatmulFlops(p, q, &out);
  }
  return Result(OpFamily::kMatmul, a, x, flops, flops < 0 ? 0 : out);
}

// Where a convolution entry point keeps its arguments (-1: not there).
struct ConvLayout {
  const char* name;
  int stride, padding, dilation, groups, transposed, output_padding;
  int allow_tf32;
  bool always_transposed;
};

const ConvLayout* FindConv(absl::string_view name) {
  static const ConvLayout kConvs[] = {
      {"aten::conv1d", 3, 4, 5, 6, -1, -1, -1, false},
      {"aten::conv2d", 3, 4, 5, 6, -1, -1, -1, false},
      {"aten::conv3d", 3, 4, 5, 6, -1, -1, -1, false},
      {"aten::convolution", 3, 4, 5, 8, 6, 7, -1, false},
      {"aten::_convolution", 3, 4, 5, 8, 6, 7, 12, false},
      {"aten::conv_transpose1d", 3, 4, 7, 6, -1, 5, -1, true},
      {"aten::conv_transpose2d", 3, 4, 7, 6, -1, 5, -1, true},
      {"aten::conv_transpose3d", 3, 4, 7, 6, -1, 5, -1, true},
      {"aten::cudnn_convolution", 3, 2, 4, 5, -1, -1, 8, false},
      {"aten::cudnn_convolution_transpose", 4, 2, 5, 6, -1, 3, 9, true},
      {"aten::mkldnn_convolution", 4, 3, 5, 6, -1, -1, -1, false},
      {"aten::miopen_convolution", 4, 3, 5, 6, -1, -1, -1, false},
  };
  for (const ConvLayout& c : kConvs) {
    if (name == c.name) return &c;
  }
  return nullptr;
}

// An int-list argument broadcast to `n` spatial dims; nullopt when absent.
std::optional<Dims> Spatial(const TorchOpArgs& a, int index, size_t n,
                            int64_t fallback) {
  if (index < 0) return Dims(n, fallback);
  std::optional<Dims> v = IntList(ValueAt(a, static_cast<size_t>(index)));
  if (!v.has_value() || v->empty()) return std::nullopt;
  if (v->size() == 1) return Dims(n, (*v)[0]);
  if (v->size() != n) return std::nullopt;
  return v;
}

// The output's spatial dims of a (non-transposed) convolution; empty when
// the arguments do not give them.
Dims ConvOutput(const TorchOpArgs& a, const ConvLayout& c, const Dims& x,
                const Dims& w) {
  const size_t n = x.size() - 2;
  const absl::string_view pad_text = ValueAt(a, c.padding);
  std::optional<Dims> stride = Spatial(a, c.stride, n, 1);
  std::optional<Dims> dilation = Spatial(a, c.dilation, n, 1);
  if (!stride || !dilation) return {};
  std::optional<Dims> padding;
  const bool same = absl::StrContains(pad_text, "same");
  if (same || absl::StrContains(pad_text, "valid")) {
    padding = Dims(n, 0);
  } else {
    padding = Spatial(a, c.padding, n, 0);
  }
  if (!padding) return {};
  Dims out;
  for (size_t i = 0; i < n; ++i) {
    const int64_t s = (*stride)[i];
    if (s <= 0) return {};
    const int64_t o =
        same ? (x[2 + i] + s - 1) / s
             : (x[2 + i] + 2 * (*padding)[i] - (*dilation)[i] * (w[2 + i] - 1) -
                1) / s +
                   1;
    if (o <= 0) return {};
    out.push_back(o);
  }
  return out;
}

// The output's spatial dims of a transposed convolution: (in - 1) stride -
// 2 padding + dilation (kernel - 1) + output_padding + 1; the input's when
// the arguments do not give them.
Dims TransposedOutput(const TorchOpArgs& a, const ConvLayout& c, const Dims& x,
                      const Dims& w) {
  const size_t n = x.size() - 2;
  const Dims in(x.begin() + 2, x.end());
  std::optional<Dims> stride = Spatial(a, c.stride, n, 1);
  std::optional<Dims> padding = Spatial(a, c.padding, n, 0);
  std::optional<Dims> dilation = Spatial(a, c.dilation, n, 1);
  std::optional<Dims> extra = Spatial(a, c.output_padding, n, 0);
  if (!stride || !padding || !dilation || !extra) return in;
  Dims out;
  for (size_t i = 0; i < n; ++i) {
    const int64_t o = (x[2 + i] - 1) * (*stride)[i] - 2 * (*padding)[i] +
                      (*dilation)[i] * (w[2 + i] - 1) + (*extra)[i] + 1;
    if (o <= 0) return in;
    out.push_back(o);
  }
  return out;
}

std::optional<TorchOpFlops> Conv(absl::string_view name, const TorchOpArgs& a) {
  const ConvLayout* c = FindConv(name);
  if (c == nullptr) return std::nullopt;
  TorchOpFlops empty;
  empty.family = OpFamily::kConv;
  if (!IsTensor(a, 0) || !IsTensor(a, 1)) return empty;
  const Dims& x = a.dims[0];
  const Dims& w = a.dims[1];
  if (x.size() < 3 || w.size() != x.size()) return empty;
  bool transposed = c->always_transposed;
  if (c->transposed >= 0) {
    transposed =
        absl::StripAsciiWhitespace(ValueAt(a, c->transposed)) == "True";
  }
  int64_t flops = -1, out = 0;
  if (transposed) {
    // Each input point meets the whole filter.
    flops = SatMul(SatMul(SatMul(x[0], Numel(x, 2)), Numel(w)), 2);
    const int64_t groups = IntValue(ValueAt(a, c->groups)).value_or(1);
    out = SatMul(SatMul(x[0], SatMul(w[1], groups)),
                 Numel(TransposedOutput(a, *c, x, w)));
  } else {
    const Dims o = ConvOutput(a, *c, x, w);
    if (!o.empty()) {
      flops = SatMul(SatMul(SatMul(x[0], Numel(o)), Numel(w)), 2);
      out = SatMul(SatMul(x[0], w[0]), Numel(o));
    }
  }
  TorchOpFlops r = Result(OpFamily::kConv, a, 0, flops, flops < 0 ? 0 : out);
  // cuDNN runs fp32 convolutions on TF32 tensor cores when allowed (the
  // default).
  if (r.dtype == Dtype::kFp32 && c->allow_tf32 >= 0 &&
      absl::StripAsciiWhitespace(ValueAt(a, c->allow_tf32)) == "True") {
    r.dtype = Dtype::kTf32;
  }
  return r;
}

// convolution_backward(grad_output, input, weight, bias_sizes, stride,
// padding, dilation, transposed, output_padding, groups, output_mask):
// the input gradient and the weight gradient each cost the forward
// convolution's float ops. Older PyTorch's cudnn_convolution_backward(self,
// grad_output, weight, padding, stride, dilation, groups, benchmark,
// deterministic, allow_tf32, output_mask) is read the same way.
std::optional<TorchOpFlops> ConvBackward(absl::string_view name,
                                         const TorchOpArgs& a) {
  const bool cudnn = name == "aten::cudnn_convolution_backward";
  if (name != "aten::convolution_backward" &&
      name != "aten::convolution_backward_overrideable" && !cudnn) {
    return std::nullopt;
  }
  TorchOpFlops empty;
  empty.family = OpFamily::kConvBackward;
  if (!IsTensor(a, 0) || !IsTensor(a, 1) || !IsTensor(a, 2)) return empty;
  const Dims& grad = a.dims[cudnn ? 1 : 0];
  const Dims& x = a.dims[cudnn ? 0 : 1];
  const Dims& w = a.dims[2];
  if (x.size() < 3 || grad.size() != x.size() || w.size() != x.size()) {
    return empty;
  }
  const bool transposed =
      !cudnn && absl::StripAsciiWhitespace(ValueAt(a, 7)) == "True";
  std::vector<bool> mask = BoolList(ValueAt(a, 10));
  if (cudnn && a.values.empty()) mask = {true, true};  // not recorded
  const int64_t forward = SatMul(
      SatMul(SatMul(x[0], Numel(transposed ? x : grad, 2)), Numel(w)), 2);
  int64_t flops = 0, out = 0;
  if (mask.size() >= 1 && mask[0]) {
    flops = SatAdd(flops, forward);
    out = SatAdd(out, Numel(x));
  }
  if (mask.size() >= 2 && mask[1]) {
    flops = SatAdd(flops, forward);
    out = SatAdd(out, Numel(w));
  }
  return Result(OpFamily::kConvBackward, a, 0, flops, out);
}

// Where an attention entry point keeps its arguments.
struct AttentionLayout {
  const char* name;
  bool backward;
  bool bshd;   // inputs (batch, seq, heads, dim), else (batch, heads, seq, dim)
  int causal;  // is_causal (bool), or the custom mask type (int) with mask_type
  bool mask_type;
  int cu_seq;  // a cumulative sequence length tensor (variable lengths), or -1
};

const AttentionLayout* FindAttention(absl::string_view name) {
  static const AttentionLayout kOps[] = {
      {"aten::_scaled_dot_product_flash_attention", false, false, 4, false, -1},
      {"aten::_scaled_dot_product_flash_attention_for_cpu", false, false, 4,
       false, -1},
      {"aten::_scaled_dot_product_efficient_attention", false, false, 6, false,
       -1},
      {"aten::_scaled_dot_product_cudnn_attention", false, false, 6, false, -1},
      {"aten::_cudnn_attention_forward", false, false, 10, false, 4},
      {"aten::_flash_attention_forward", false, true, 8, false, 3},
      {"aten::_efficient_attention_forward", false, true, 9, true, 4},
      {"aten::_scaled_dot_product_flash_attention_backward", true, false, 11,
       false, -1},
      {"aten::_scaled_dot_product_flash_attention_for_cpu_backward", true,
       false, 7, false, -1},
      {"aten::_scaled_dot_product_efficient_attention_backward", true, false,
       11, false, -1},
      {"aten::_scaled_dot_product_cudnn_attention_backward", true, false, 14,
       false, -1},
      {"aten::_cudnn_attention_backward", true, false, 14, false, 9},
      {"aten::_flash_attention_backward", true, true, 11, false, 6},
      {"aten::_efficient_attention_backward", true, true, 14, true, 6},
  };
  for (const AttentionLayout& o : kOps) {
    if (name == o.name) return &o;
  }
  return nullptr;
}

// Forward: the scores Q K^T and the output P V, 2 b h_q s_q s_k (d_qk +
// d_v). Backward: the scores again and the four gradient products, 2 b h_q
// s_q s_k (3 d_qk + 2 d_v). h_q is the query's head count: with grouped-
// query attention every query head does its own products.
std::optional<TorchOpFlops> Attention(absl::string_view name,
                                      const TorchOpArgs& a) {
  const AttentionLayout* o = FindAttention(name);
  if (o == nullptr) return std::nullopt;
  const size_t q = o->backward ? 1 : 0;
  TorchOpFlops r;
  r.family = OpFamily::kAttention;
  const absl::string_view causal = ValueAt(a, static_cast<size_t>(o->causal));
  if (o->mask_type) {
    r.causal = IntValue(causal).value_or(0) != 0;
  } else {
    r.causal = absl::StripAsciiWhitespace(causal) == "True";
  }
  if (!IsTensor(a, q) || !IsTensor(a, q + 1) || !IsTensor(a, q + 2)) return r;
  if (o->cu_seq >= 0 && IsTensor(a, static_cast<size_t>(o->cu_seq))) {
    return r;  // variable lengths: the per-sequence lengths are not recorded
  }
  const Dims& qd = a.dims[q];
  const Dims& kd = a.dims[q + 1];
  const Dims& vd = a.dims[q + 2];
  if (qd.size() != 4 || kd.size() != 4 || vd.size() != 4) return r;
  const int seq = o->bshd ? 1 : 2, heads = o->bshd ? 2 : 1;
  const int64_t b = qd[0], h = qd[heads], sq = qd[seq], dqk = qd[3];
  const int64_t sk = kd[seq], dv = vd[3];
  const int64_t base = SatMul(SatMul(SatMul(SatMul(2, b), h), sq), sk);
  const int64_t flops =
      SatMul(base, o->backward ? SatAdd(SatMul(3, dqk), SatMul(2, dv))
                               : SatAdd(dqk, dv));
  // Outputs: the attention output, or the gradients of q, k and v.
  const int64_t out = o->backward
                          ? SatAdd(Numel(qd), SatAdd(Numel(kd), Numel(vd)))
                          : SatMul(SatMul(SatMul(b, h), sq), dv);
  TorchOpFlops result = Result(OpFamily::kAttention, a, q, flops, out);
  result.causal = r.causal;
  return result;
}

}  // namespace

bool HasTorchFlops(absl::string_view name) {
  if (!absl::StartsWith(name, "aten::")) return false;
  return name == "aten::mm" || name == "aten::addmm" || name == "aten::bmm" ||
         name == "aten::baddbmm" || name == "aten::mul" ||
         name == "aten::add" || name == "aten::matmul" ||
         name == "aten::linear" || FindConv(name) != nullptr ||
         name == "aten::convolution_backward" ||
         name == "aten::convolution_backward_overrideable" ||
         name == "aten::cudnn_convolution_backward" ||
         FindAttention(name) != nullptr;
}

TorchOpFlops TorchFlops(absl::string_view name, const TorchOpArgs& args) {
  std::optional<TorchOpFlops> r;
  if (name == "aten::mul" || name == "aten::add") {
    // PyTorch's count: one per element of the first operand.
    TorchOpFlops e;
    if (IsTensor(args, 0)) {
      e = Result(OpFamily::kElementwise, args, 0, Numel(args.dims[0]),
                 Numel(args.dims[0]));
    }
    e.family = OpFamily::kElementwise;
    r = e;
  }
  if (!r) r = Matmul(name, args);
  if (!r) r = Conv(name, args);
  if (!r) r = ConvBackward(name, args);
  if (!r) r = Attention(name, args);
  TorchOpFlops out = r.value_or(TorchOpFlops());
  out.pytorch = PyTorchFlops(name, args);
  return out;
}

std::vector<bool> NestedCounted(const std::vector<int32_t>& parent,
                                const std::vector<const TorchOpFlops*>& flops) {
  std::vector<bool> nested(flops.size(), false);
  auto counts = [&](int32_t i) {
    return flops[static_cast<size_t>(i)] != nullptr &&
           flops[static_cast<size_t>(i)]->extended > 0;
  };
  for (int32_t i = 0; i < static_cast<int32_t>(flops.size()); ++i) {
    if (!counts(i)) continue;
    const bool inner_weak =
        flops[static_cast<size_t>(i)]->family == OpFamily::kElementwise;
    for (int32_t p = parent[static_cast<size_t>(i)]; p >= 0;
         p = parent[static_cast<size_t>(p)]) {
      if (!counts(p)) continue;
      const bool outer_weak =
          flops[static_cast<size_t>(p)]->family == OpFamily::kElementwise;
      if (outer_weak || !inner_weak) nested[static_cast<size_t>(p)] = true;
    }
  }
  return nested;
}

void FlopTally::Add(const TorchOpFlops& f, bool nested_counted) {
  ++records;
  nested += f.extended > 0 && nested_counted;
  none += f.extended < 0;
  if (f.family == OpFamily::kAttention && f.extended > 0 && !nested_counted) {
    ++attention;
    causal += f.causal;
  }
}

std::vector<std::string> FlopTally::Notes() const {
  std::vector<std::string> notes;
  if (records == 0) return notes;
  notes.push_back(absl::StrCat(
      "float ops from the ops' recorded shapes: ", records,
      " records of ops with a formula; ", nested,
      " of them enclose a record of the same computation, which counts it "
      "instead (the extended rule; -flops_rule pytorch counts every record "
      "of PyTorch's with_flops set)"));
  if (none > 0) {
    notes.push_back(absl::StrCat(
        none,
        " records of such ops have no count: their shapes do not give one "
        "(missing shapes, variable-length attention)"));
  }
  if (attention > 0) {
    notes.push_back(absl::StrCat(
        attention, " attention records (", causal,
        " with a causal mask): their float ops count the whole score "
        "matrix; causal masking is not discounted (as "
        "torch.utils.flop_counter)"));
  }
  return notes;
}

}  // namespace trace_internal
}  // namespace tfprof
