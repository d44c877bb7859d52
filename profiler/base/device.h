// What a device name says about where work ran: the one place that reads
// TensorFlow's device strings ("/job:J/replica:R/task:T/device:GPU:0") and
// the lanes GPU tracers add to them ("<gpu>/stream:all", "<gpu>/stream:7",
// "<gpu>/memcpy"). Every function ignores case.
#ifndef TFPROF_PROFILER_BASE_DEVICE_H_
#define TFPROF_PROFILER_BASE_DEVICE_H_

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

}  // namespace tfprof

#endif  // TFPROF_PROFILER_BASE_DEVICE_H_
