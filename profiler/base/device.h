// What a device name says about where work ran: the one place that reads
// TensorFlow's device strings ("/job:J/replica:R/task:T/device:GPU:0") and
// the lanes GPU tracers add to them ("<gpu>/stream:all", "<gpu>/stream:7",
// "<gpu>/memcpy"). Every function ignores case.
#ifndef TFPROF_PROFILER_BASE_DEVICE_H_
#define TFPROF_PROFILER_BASE_DEVICE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tfprof {

// The kind of device a name denotes, as tfprof counts time on it.
enum class DeviceKind {
  kPlacement,  // ".../(device:)?(cpu|gpu):N": an op's placement; CPU time
  kStreamAll,  // "<gpu>/stream:all": all streams together; accelerator time
  kStream,     // "<gpu>/stream:N": one stream; neither CPU nor accelerator
  kMemcpy,     // "<gpu>/memcpy": the copy lane
  kOther,      // anything else (a host thread, "/host:cpu", ...)
};

DeviceKind KindOfDevice(std::string_view device);

// A placement tfprof calls canonical (DeviceKind::kPlacement).
bool IsCanonicalDevice(std::string_view device);
// The aggregated stream lane, the only device accelerator time counts on.
bool IsStreamAllDevice(std::string_view device);
// A name that mentions a GPU: a GPU placement or any of its lanes.
bool IsPlacedOnAccelerator(std::string_view device);
// A name that mentions a CPU.
bool IsPlacedOnCpu(std::string_view device);

// The host of a placement: every "gpu:N" replaced by "cpu:0"
// ("/job:w/device:gpu:1" -> "/job:w/device:cpu:0").
std::string HostDeviceOf(std::string_view placement);

// The device a GPU lane belongs to: the name before "/stream:" or "/memcpy"
// ("/device:gpu:0/stream:7" -> "/device:gpu:0"); other names are returned
// whole.
std::string_view LaneOwner(std::string_view device);

// Which processor a device or an allocator belongs to, when its name says:
// a CPU or a GPU and its number.
struct Processor {
  bool gpu = false;
  int64_t index = 0;
  bool operator<(const Processor& o) const {
    return gpu != o.gpu ? !gpu : index < o.index;
  }
  bool operator==(const Processor& o) const {
    return gpu == o.gpu && index == o.index;
  }
};

// A placement or one of its lanes: ".../device:gpu:1/stream:7" -> GPU 1,
// "/job:w/task:0/cpu:0" -> CPU 0; nullopt for anything else.
std::optional<Processor> ProcessorOfDevice(std::string_view device);
// An allocator's name: "GPU_0_bfc" (TensorFlow), "GPU_0" (PyTorch) -> GPU 0;
// host allocators ("cpu", "gpu_host_bfc", "cuda_host_bfc") -> CPU 0;
// nullopt for others.
std::optional<Processor> ProcessorOfAllocator(std::string_view allocator);

}  // namespace tfprof

#endif  // TFPROF_PROFILER_BASE_DEVICE_H_
