// How close a run came to the hardware: float ops per step (the extended
// rule), the achieved FLOP/s, and MFU against a stated peak (the peak
// table's row for each accelerator that ran kernels, or the user's
// --peak_flops); and per op or kernel row of a view, the achieved FLOP/s on
// the accelerator, the arithmetic intensity and where the row sits under
// its roofline.
#ifndef TFPROF_PROFILER_VIEWS_FLOPS_H_
#define TFPROF_PROFILER_VIEWS_FLOPS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "profiler/model/model.h"
#include "profiler/views/options.h"
#include "profiler/views/result.h"
#include "profiler/views/steps.h"

namespace tfprof {

// Peaks the user gives, per device (0: from the peak table).
struct PeakOverride {
  double flops = 0;          // --peak_flops, FLOP/s
  double bytes_per_sec = 0;  // --peak_bytes_per_sec
};
PeakOverride PeakOverrideOf(const Options& opts);

// One accelerator's peaks, for rooflines.
struct DevicePeaks {
  double flops[kPeakClasses] = {};  // FLOP/s by PeakClass; 0 unknown
  double bytes_per_sec = 0;         // 0 unknown
  std::string source;               // the row or the flag
  std::string unknown;              // why the peaks are not known
};

// The peak a run's MFU is measured against.
struct RunPeak {
  double flops = 0;  // FLOP/s, summed over the devices; 0 when unknown
  double bytes_per_sec = 0;
  Dtype dtype = Dtype::kBf16;  // the dtype with most of the float ops
  bool dtype_assumed = false;  // no float op has a recorded dtype
  int64_t devices = 0;         // accelerators that ran kernels
  // "table: NVIDIA H200, 4096 FLOP/cycle/SM x 132 SMs x 1.83 GHz" or
  // "--peak_flops x 1 device".
  std::string source;
  // When flops is 0: "unknown GPU 'X'; pass --peak_flops" (or why else).
  std::string unknown;
};

// Several ranks (Model::ranks()): the float ops and FLOP/s are the mean per
// rank; MFU is all ranks' float ops against the peak of the devices they
// ran on (a GPU number two ranks share counts once).
struct RunFlops {
  // Float ops per step by the extended rule, for every step of the table.
  std::map<int64_t, int64_t> step_flops;
  int64_t flops_per_step = 0;  // mean over the steps
  double flop_rate = 0;        // flops_per_step / mean step wall time, FLOP/s
  // flops_per_step / (mean wall x peak.flops); none without float ops or
  // a peak.
  std::optional<double> mfu;
  RunPeak peak;
  // Per step: the peak of the devices that ran kernels in it, and MFU.
  std::map<int64_t, double> step_peak;
  std::map<int64_t, double> step_mfu;
  // Where the float ops come from: "extended rule" (PyTorch traces), "HLO"
  // (XLA programs) or "op log" (TensorFlow); and how they were counted.
  std::string flops_set = "extended rule";
  std::vector<std::string> notes;
};

RunFlops ComputeRunFlops(const Model& model, const StepTable& steps,
                         const PeakOverride& override_peaks);

// Fills the steps' flops and mfu columns and the table's peak line.
void AddStepFlops(const RunFlops& flops, StepTable* steps);

// "MFU 41.2% of 989.4 TFLOP/s (bf16 dense peak; table: NVIDIA H200 ...)",
// or "MFU: n/a (unknown GPU 'X'; pass --peak_flops)", "MFU: n/a (no float
// ops)".
std::string MfuText(const RunFlops& flops);

// The peaks of the first accelerator that ran kernels (else the first one
// the profile describes), with the override applied.
DevicePeaks FirstDevicePeaks(const Model& model,
                             const PeakOverride& override_peaks);

// Per op (op view) or kernel (kernel view) row: bytes, dtype, FLOP/s on the
// accelerator, arithmetic intensity and roofline (FlopFacts), for the rows
// of a flat view when -select asks for any of accelerator_flop_rate,
// arithmetic_intensity or roofline.
void AttachFlopFacts(const Model& model, ResultTree* tree);

// Whether -select asks for a figure AttachFlopFacts computes.
bool SelectsFlopFacts(const Options& opts);

}  // namespace tfprof

#endif  // TFPROF_PROFILER_VIEWS_FLOPS_H_
