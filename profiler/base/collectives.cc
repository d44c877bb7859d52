#include "profiler/base/collectives.h"

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/strip.h"

namespace tfprof {
namespace {

// "AllReduce_RING_LL_Sum_float(...)", "_allgather_base_", "all_to_all" ->
// "all_reduce", "all_gather", "all_to_all"; "" when it names none.
std::string NormalizedOp(absl::string_view text) {
  std::string letters;
  for (char c : text) {
    if (c == '(' || c == '<') break;
    if (absl::ascii_isalpha(c)) letters.push_back(absl::ascii_tolower(c));
  }
  static const std::pair<const char*, const char*> kOps[] = {
      {"collectivepermute", "collective_permute"},
      {"allreduce", "all_reduce"},
      {"allgather", "all_gather"},
      {"reducescatter", "reduce_scatter"},
      {"alltoall", "all_to_all"},
      {"sendrecv", "send_recv"},
      {"broadcast", "broadcast"},
      {"barrier", "barrier"},
      {"reduce", "reduce"},
      {"send", "send"},
      {"recv", "recv"},
      {"gather", "gather"},
      {"scatter", "scatter"},
  };
  for (const auto& [key, op] : kOps) {
    if (absl::StrContains(letters, key)) return op;
  }
  return "";
}

CollectiveName Named(CollectiveKind kind, absl::string_view rest,
                     absl::string_view whole) {
  std::string op = NormalizedOp(rest);
  return CollectiveName{kind, op.empty() ? std::string(whole) : op};
}

}  // namespace

CollectiveName ClassifyCollective(absl::string_view name) {
  absl::string_view rest = name;
  if (absl::ConsumePrefix(&rest, "ncclDevKernel_") ||
      absl::ConsumePrefix(&rest, "ncclKernel_") ||
      absl::ConsumePrefix(&rest, "rcclKernel_")) {
    return Named(CollectiveKind::kDeviceKernel, rest, name);
  }
  const std::string lower = absl::AsciiStrToLower(name);
  // Other NCCL/RCCL device functions (rccl_main_kernel, ncclAllReduce...),
  // and the collectives XLA and TensorFlow run as ops.
  if (absl::StartsWith(lower, "nccl") || absl::StartsWith(lower, "rccl")) {
    if (absl::StrContains(name, ":")) {  // "nccl:all_reduce": an annotation
      return Named(CollectiveKind::kEnqueue, name.substr(5), name);
    }
    return Named(CollectiveKind::kDeviceKernel, name.substr(4), name);
  }
  if (absl::ConsumePrefix(&rest, "gloo:")) {
    return Named(CollectiveKind::kHostTransfer, rest, name);
  }
  if (absl::ConsumePrefix(&rest, "c10d::")) {
    return Named(CollectiveKind::kEnqueue, rest, name);
  }
  // XLA's collective instructions ("all-reduce.3", "all-gather-start") and
  // TensorFlow's collective ops ("CollectiveReduceV2") as device events.
  static const char* const kDeviceOps[] = {
      "all-reduce",       "all-gather",         "reduce-scatter",
      "all-to-all",       "collective-permute", "collective-broadcast",
      "collectivereduce", "collectivegather",   "collectivebcast",
  };
  for (const char* prefix : kDeviceOps) {
    if (absl::StartsWith(lower, prefix)) {
      return Named(CollectiveKind::kDeviceKernel, name, name);
    }
  }
  if (name == "record_param_comms") {
    return CollectiveName{CollectiveKind::kEnqueue, std::string(name)};
  }
  return CollectiveName();
}

}  // namespace tfprof
