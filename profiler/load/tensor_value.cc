#include "profiler/load/tensor_value.h"

#include <cstdlib>
#include <sstream>

#include "absl/strings/str_format.h"

namespace tfprof {
namespace {

constexpr size_t kMaxDisplayLen = 10000;

class Formatter {
 public:
  Formatter(const CheckpointTensor& t, TensorDisplay* out) : t_(t), out_(out) {}

  void Value(size_t i) {
    if (t_.dtype == 1 || t_.dtype == 2) {
      // Values pass through a 6-significant-digit decimal form first.
      std::ostringstream os;
      os << (i < t_.values_double.size() ? t_.values_double[i] : 0.0);
      const double v = std::strtod(os.str().c_str(), nullptr);
      out_->proto.add_value_double(v);
      absl::StrAppendFormat(&out_->text, "%.2f ", v);
    } else if (t_.dtype == 3 || t_.dtype == 9) {
      const int64_t v = i < t_.values_int64.size() ? t_.values_int64[i] : 0;
      out_->proto.add_value_int64(v);
      absl::StrAppendFormat(&out_->text, "%d ", v);
    } else {
      const std::string v = i < t_.values_str.size() ? t_.values_str[i] : "";
      out_->proto.add_value_str(v);
      absl::StrAppend(&out_->text, "'", v, "' ");
    }
  }

  // Row-major walk, one bracket level per dimension.
  size_t Build(size_t start, size_t depth) {
    out_->text += "[";
    size_t next = start;
    if (t_.shape.empty()) {
      Value(next);
    } else {
      for (int64_t i = 0; i < t_.shape[depth]; ++i) {
        if (depth == t_.shape.size() - 1) {
          Value(next++);
        } else {
          next = Build(next, depth + 1);
        }
      }
    }
    if (out_->text.size() > kMaxDisplayLen) out_->text.resize(kMaxDisplayLen);
    out_->text += "],\n";
    return next;
  }

 private:
  const CheckpointTensor& t_;
  TensorDisplay* out_;
};

}  // namespace

TensorDisplay FormatTensor(const CheckpointTensor& tensor) {
  TensorDisplay d;
  const int dt = tensor.dtype;
  if (dt != 1 && dt != 2 && dt != 3 && dt != 9 && dt != 7) return d;
  if (!tensor.supported) return d;
  for (int64_t dim : tensor.shape) {
    if (dim < 0) return d;
  }
  d.supported = true;
  d.proto.set_dtype(static_cast<tfcore::DataType>(dt));
  Formatter f(tensor, &d);
  f.Build(0, 0);
  if (d.text.size() >= kMaxDisplayLen) d.text += "...omitted from display\n\n";
  return d;
}

}  // namespace tfprof
