// The peak table: dense peak FLOP/s per data type and memory bandwidth of
// the accelerators people train on, each row with the formula behind it
// (FLOP per cycle per SM x SMs x clock) and its source, and how a trace's
// device description (a Kineto deviceProperties entry, an XSpace GPU plane's
// stats) picks a row. The trace's own clock never enters a peak: it only
// helps to pick a row.
#ifndef TFPROF_PROFILER_MODEL_DEVICE_PEAKS_H_
#define TFPROF_PROFILER_MODEL_DEVICE_PEAKS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tfprof {

// The element type of an op's float operations, as far as a trace tells.
enum class Dtype : uint8_t {
  kUnknown,
  kFp64,
  kFp32,
  kTf32,
  kBf16,
  kFp16,
  kFp8,
  kInt,  // integer or boolean: no floating point peak
};

// "fp64", "fp32", "tf32", "bf16", "fp16", "fp8", "int", "unknown".
const char* DtypeName(Dtype d);
// The element size in bytes (0 when unknown).
int64_t DtypeBytes(Dtype d);
// A PyTorch profiler "Input type" ("float", "c10::BFloat16", "c10::Half",
// "c10::Float8_e4m3fn", "long int", ...); kUnknown for anything that is not
// a tensor element type ("Scalar", "ScalarList", "").
Dtype DtypeFromTorch(std::string_view type);

// The columns of the peak table: one dense peak per class of data type
// (bf16 and fp16 share one).
enum class PeakClass : uint8_t { kFp64, kFp32, kTf32, kHalf, kFp8 };
inline constexpr int kPeakClasses = 5;
// The class whose peak a data type runs at; fp32 for unknown and integer
// types is never asked for (callers pick a dtype first).
PeakClass PeakClassOf(Dtype d);
// "fp64", "fp32", "tf32", "bf16/fp16", "fp8".
const char* PeakClassName(PeakClass c);

// What a trace says about one accelerator. Zero or empty where unknown.
struct DeviceInfo {
  std::string name;      // "NVIDIA H200"
  int64_t units = 0;     // SMs (NVIDIA) or compute units (AMD)
  int32_t cc_major = 0;  // compute capability (NVIDIA)
  int32_t cc_minor = 0;
  int64_t clock_khz = 0;      // as recorded (often the maximum boost)
  int64_t bytes_per_sec = 0;  // memory bandwidth, as recorded
};

// One row of the table.
struct PeakRow {
  const char* name;     // the marketing name
  const char* tokens;   // words every matching device name has (lower case)
  const char* without;  // words a matching device name must not have
  int32_t cc_major, cc_minor;  // 0.0 for AMD
  int32_t units;               // SMs or CUs of the whole device
  double clock_ghz;            // the clock the dense peaks are given at
  // Dense FLOP per cycle per SM (or CU), by PeakClass; 0: no such unit.
  int32_t flop_per_cycle[kPeakClasses];
  double bandwidth_gb_per_sec;  // memory bandwidth, GB/s (1e9 bytes)
  const char* source;
};

// Every row, in table order.
const std::vector<PeakRow>& PeakTable();

// The dense peak of a row for a class, in FLOP/s, scaled to `units` (the
// row's own units when 0): per-cycle FLOP x units x clock.
double RowPeakFlops(const PeakRow& row, PeakClass c, int64_t units = 0);
// The row's memory bandwidth in bytes/s (never scaled: a slice of a GPU
// has its own share of memory, not of SMs).
double RowBandwidth(const PeakRow& row);

// The row of a device, or null when none fits. By name (its words; a
// name shared by two rows is told apart by the unit count), else by compute
// capability and unit count (told apart by the recorded bandwidth and
// clock). `*units` is the unit count the peaks are for: the device's own
// when it records one that differs from the row's (a MIG slice, a cut-down
// part of the same design), else the row's. `*note` says how the row was
// picked when it was not by exact name, and any scaling.
const PeakRow* MatchPeakRow(const DeviceInfo& device, int64_t* units,
                            std::string* note);

// How a device is named in messages: its name, else "compute capability
// X.Y, N SMs".
std::string DeviceLabel(const DeviceInfo& device);

}  // namespace tfprof

#endif  // TFPROF_PROFILER_MODEL_DEVICE_PEAKS_H_
