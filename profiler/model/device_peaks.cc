#include "profiler/model/device_peaks.h"

#include <cmath>
#include <cstdlib>
#include <iterator>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace tfprof {

const char* DtypeName(Dtype d) {
  switch (d) {
    case Dtype::kFp64:
      return "fp64";
    case Dtype::kFp32:
      return "fp32";
    case Dtype::kTf32:
      return "tf32";
    case Dtype::kBf16:
      return "bf16";
    case Dtype::kFp16:
      return "fp16";
    case Dtype::kFp8:
      return "fp8";
    case Dtype::kInt:
      return "int";
    case Dtype::kUnknown:
      break;
  }
  return "unknown";
}

int64_t DtypeBytes(Dtype d) {
  switch (d) {
    case Dtype::kFp64:
      return 8;
    case Dtype::kFp32:
    case Dtype::kTf32:
      return 4;
    case Dtype::kBf16:
    case Dtype::kFp16:
      return 2;
    case Dtype::kFp8:
      return 1;
    case Dtype::kInt:
    case Dtype::kUnknown:
      break;
  }
  return 0;
}

Dtype DtypeFromTorch(std::string_view type) {
  if (type == "float") return Dtype::kFp32;
  if (type == "double") return Dtype::kFp64;
  if (type == "c10::BFloat16") return Dtype::kBf16;
  if (type == "c10::Half") return Dtype::kFp16;
  if (absl::StartsWith(absl::string_view(type.data(), type.size()),
                       "c10::Float8")) {
    return Dtype::kFp8;
  }
  if (type == "long int" || type == "int" || type == "short int" ||
      type == "signed char" || type == "unsigned char" || type == "bool" ||
      type == "long" || type == "short") {
    return Dtype::kInt;
  }
  return Dtype::kUnknown;
}

PeakClass PeakClassOf(Dtype d) {
  switch (d) {
    case Dtype::kFp64:
      return PeakClass::kFp64;
    case Dtype::kTf32:
      return PeakClass::kTf32;
    case Dtype::kBf16:
    case Dtype::kFp16:
      return PeakClass::kHalf;
    case Dtype::kFp8:
      return PeakClass::kFp8;
    case Dtype::kFp32:
    case Dtype::kInt:
    case Dtype::kUnknown:
      break;
  }
  return PeakClass::kFp32;
}

const char* PeakClassName(PeakClass c) {
  switch (c) {
    case PeakClass::kFp64:
      return "fp64";
    case PeakClass::kFp32:
      return "fp32";
    case PeakClass::kTf32:
      return "tf32";
    case PeakClass::kHalf:
      return "bf16/fp16";
    case PeakClass::kFp8:
      return "fp8";
  }
  return "fp32";
}

// Dense FLOP per cycle per SM (CU), columns fp64, fp32, tf32, bf16/fp16,
// fp8. fp64 is the tensor (matrix) rate where the part has one, fp32 the
// plain (non-tensor) rate on NVIDIA parts and the matrix rate on AMD ones.
// Sparse (2:4) figures of datasheets are halved to the dense ones.
namespace {

constexpr PeakRow kPeakRows[] = {
    {"NVIDIA V100 SXM2",
     "v100 sxm2",
     "",
     7,
     0,
     80,
     1.53,
     {64, 128, 0, 1024, 0},
     900,
     "NVIDIA Tesla V100 datasheet (SXM2: 7.8 FP64, 15.7 FP32, 125 tensor "
     "TFLOPS, 900 GB/s); Volta whitepaper: 80 SMs, 8 tensor cores/SM x 64 "
     "FMA, 1530 MHz boost. FP16 tensor cores only (no BF16)."},
    {"NVIDIA V100 PCIe",
     "v100 pcie",
     "",
     7,
     0,
     80,
     1.38,
     {64, 128, 0, 1024, 0},
     900,
     "NVIDIA Tesla V100 datasheet (PCIe: 7 FP64, 14 FP32, 112 tensor "
     "TFLOPS, 900 GB/s); 80 SMs, 1380 MHz boost. FP16 tensor cores only."},
    {"NVIDIA T4",
     "t4",
     "",
     7,
     5,
     40,
     1.59,
     {4, 128, 0, 1024, 0},
     320,
     "NVIDIA T4 datasheet (8.1 FP32, 65 FP16 tensor TFLOPS, 320 GB/s); "
     "Turing whitepaper: 40 SMs, 8 tensor cores/SM, 1590 MHz boost. FP16 "
     "tensor cores only."},
    {"NVIDIA A10",
     "a10",
     "",
     8,
     6,
     72,
     1.695,
     {4, 256, 512, 1024, 0},
     600,
     "NVIDIA A10 datasheet (31.2 FP32, 62.5 TF32, 125 BF16/FP16 dense "
     "tensor TFLOPS, 600 GB/s); 72 SMs, 1695 MHz boost."},
    {"NVIDIA A10G",
     "a10g",
     "",
     8,
     6,
     80,
     1.71,
     {4, 256, 256, 512, 0},
     600,
     "No NVIDIA datasheet: AWS G5 documentation and baseten.co's A10/A10G "
     "comparison (80 SMs, 1710 MHz, about 70 TFLOPS dense FP16/BF16 "
     "tensor, 600 GB/s): half the A10's tensor rate per SM."},
    {"NVIDIA A100 SXM4 40GB",
     "a100 sxm4 40gb",
     "",
     8,
     0,
     108,
     1.41,
     {128, 128, 1024, 2048, 0},
     1555,
     "NVIDIA A100 datasheet (19.5 FP64 tensor, 19.5 FP32, 156 TF32, 312 "
     "BF16/FP16 dense TFLOPS; 1555 GB/s); A100 whitepaper: 108 SMs, 1410 "
     "MHz boost."},
    {"NVIDIA A100 SXM4 80GB",
     "a100 sxm4 80gb",
     "",
     8,
     0,
     108,
     1.41,
     {128, 128, 1024, 2048, 0},
     2039,
     "NVIDIA A100 datasheet (as the 40 GB part; 80 GB SXM: 2039 GB/s)."},
    {"NVIDIA A100 PCIe 40GB",
     "a100 pcie 40gb",
     "",
     8,
     0,
     108,
     1.41,
     {128, 128, 1024, 2048, 0},
     1555,
     "NVIDIA A100 datasheet (PCIe 40 GB: the same peaks, 1555 GB/s)."},
    {"NVIDIA A100 PCIe 80GB",
     "a100 pcie 80gb",
     "",
     8,
     0,
     108,
     1.41,
     {128, 128, 1024, 2048, 0},
     1935,
     "NVIDIA A100 datasheet (PCIe 80 GB: the same peaks, 1935 GB/s)."},
    {"NVIDIA L4",
     "l4",
     "",
     8,
     9,
     58,
     2.04,
     {4, 256, 512, 1024, 2048},
     300,
     "NVIDIA L4 datasheet (30.3 FP32; 120 TF32, 242 BF16/FP16, 485 FP8 "
     "with sparsity; 300 GB/s); 58 SMs, 2040 MHz boost."},
    {"NVIDIA L40S",
     "l40s",
     "",
     8,
     9,
     142,
     2.52,
     {4, 256, 512, 1024, 2048},
     864,
     "NVIDIA L40S datasheet (91.6 FP32; 366 TF32, 733 BF16/FP16, 1466 FP8 "
     "with sparsity; 864 GB/s); 142 SMs, 2520 MHz boost. (The datasheet's "
     "dense BF16 figure, 362, is not half its sparse one.)"},
    {"NVIDIA H100 SXM",
     "h100",
     "pcie nvl",
     9,
     0,
     132,
     1.83,
     {256, 256, 2048, 4096, 8192},
     3352,
     "NVIDIA H100 datasheet (SXM: 989 TF32, 1979 BF16/FP16, 3958 FP8 with "
     "sparsity; 3.35 TB/s); Hopper whitepaper: 132 SMs, 4096 dense BF16 "
     "FLOP/cycle/SM. The tensor peaks are at 1.83 GHz (the datasheet's "
     "FP32/FP64 figures, 67 TFLOPS, are at the 1.98 GHz maximum boost)."},
    {"NVIDIA H100 PCIe",
     "h100 pcie",
     "",
     9,
     0,
     114,
     1.62,
     {256, 256, 2048, 4096, 8192},
     2000,
     "NVIDIA H100 datasheet (PCIe: 756 TF32, 1513 BF16/FP16, 3026 FP8 "
     "with sparsity; 2 TB/s); 114 SMs, 1.62 GHz implied by the tensor "
     "peaks."},
    {"NVIDIA H100 NVL",
     "h100 nvl",
     "",
     9,
     0,
     132,
     1.545,
     {256, 256, 2048, 4096, 8192},
     3900,
     "NVIDIA H100 NVL datasheet (94 GB: 835 TF32, 1671 BF16/FP16, 3341 FP8 "
     "with sparsity; 3.9 TB/s); 132 SMs; 1.545 GHz implied by the dense "
     "BF16 figure."},
    {"NVIDIA H200",
     "h200",
     "nvl",
     9,
     0,
     132,
     1.83,
     {256, 256, 2048, 4096, 8192},
     4800,
     "NVIDIA H200 datasheet (SXM: 1979 BF16/FP16, 3958 FP8 with sparsity; "
     "4.8 TB/s); the H100 SXM's 132 SMs x 4096 dense BF16 FLOP/cycle x "
     "1.83 GHz = 989.4 TFLOPS."},
    {"NVIDIA H200 NVL",
     "h200 nvl",
     "",
     9,
     0,
     132,
     1.545,
     {256, 256, 2048, 4096, 8192},
     4800,
     "NVIDIA H200 NVL datasheet (1671 BF16/FP16, 3341 FP8 with sparsity; "
     "4.8 TB/s); 1.545 GHz implied by the dense BF16 figure."},
    {"NVIDIA B200",
     "b200",
     "",
     10,
     0,
     148,
     1.86,
     {128, 256, 4096, 8192, 16384},
     8000,
     "NVIDIA HGX B200 specifications per GPU (2.25 PFLOPS dense "
     "BF16/FP16, 4.5 dense FP8, 1.1 TF32; 8 TB/s); 148 SMs, 8192 dense "
     "BF16 FLOP/cycle/SM (sm_100), 1.86 GHz tensor clock."},
    {"NVIDIA GB200",
     "gb200",
     "",
     10,
     0,
     148,
     2.06,
     {128, 256, 4096, 8192, 16384},
     8000,
     "NVIDIA GB200 NVL72 specifications per GPU (2.5 PFLOPS dense "
     "BF16/FP16, 5 dense FP8; 8 TB/s); 148 SMs, 2.06 GHz tensor clock."},
    {"AMD Instinct MI250X (one GCD)",
     "mi250x",
     "",
     0,
     0,
     110,
     1.7,
     {256, 256, 0, 1024, 0},
     1638.4,
     "AMD Instinct MI250X datasheet (a package of 2 GCDs x 110 CUs at 1.7 "
     "GHz: 95.7 FP64/FP32 matrix, 383 BF16/FP16 TFLOPS, 3.2768 TB/s). "
     "PyTorch and JAX see each GCD as a device: half of each figure."},
    {"AMD Instinct MI300X",
     "mi300x",
     "",
     0,
     0,
     304,
     2.1,
     {256, 256, 1024, 2048, 4096},
     5300,
     "AMD Instinct MI300X datasheet (163.4 FP64/FP32 matrix, 653.7 TF32, "
     "1307.4 BF16/FP16, 2614.9 FP8 dense TFLOPS; 5.3 TB/s); 304 CUs, "
     "2100 MHz."},
};

}  // namespace

const std::vector<PeakRow>& PeakTable() {
  static const std::vector<PeakRow>* const table =
      new std::vector<PeakRow>(std::begin(kPeakRows), std::end(kPeakRows));
  return *table;
}

double RowPeakFlops(const PeakRow& row, PeakClass c, int64_t units) {
  const double u = static_cast<double>(units > 0 ? units : row.units);
  return static_cast<double>(row.flop_per_cycle[static_cast<int>(c)]) * u *
         row.clock_ghz * 1e9;
}

double RowBandwidth(const PeakRow& row) {
  return row.bandwidth_gb_per_sec * 1e9;
}

namespace {

// The words of a device name, lower case ("NVIDIA A100-SXM4-80GB" ->
// nvidia, a100, sxm4, 80gb).
std::set<std::string> Words(std::string_view name) {
  std::set<std::string> words;
  for (absl::string_view w : absl::StrSplit(
           absl::AsciiStrToLower(absl::string_view(name.data(), name.size())),
           absl::ByAnyChar(" -_/()"), absl::SkipEmpty())) {
    words.emplace(w);
  }
  return words;
}

bool HasAll(const std::set<std::string>& words, const char* list) {
  for (absl::string_view w : absl::StrSplit(list, ' ', absl::SkipEmpty())) {
    if (!words.count(std::string(w))) return false;
  }
  return true;
}

bool HasAny(const std::set<std::string>& words, const char* list) {
  for (absl::string_view w : absl::StrSplit(list, ' ', absl::SkipEmpty())) {
    if (words.count(std::string(w))) return true;
  }
  return false;
}

// How far a row is from what a trace recorded of clock and bandwidth (0
// where nothing is recorded), for telling apart rows of one design.
double Distance(const PeakRow& row, const DeviceInfo& d) {
  double x = 0;
  if (d.bytes_per_sec > 0) {
    x += std::abs(static_cast<double>(d.bytes_per_sec) - RowBandwidth(row)) /
         RowBandwidth(row);
  }
  if (d.clock_khz > 0) {
    x += std::abs(static_cast<double>(d.clock_khz) / 1e6 - row.clock_ghz) /
         row.clock_ghz;
  }
  return x;
}

// Of the candidates, one whose units are the device's, and of those (or of
// all, when none has) the closest in clock and bandwidth.
const PeakRow* Closest(const std::vector<const PeakRow*>& rows,
                       const DeviceInfo& d) {
  const PeakRow* best = nullptr;
  for (const PeakRow* r : rows) {
    if (best == nullptr) {
      best = r;
      continue;
    }
    const bool r_units = d.units > 0 && r->units == d.units;
    const bool best_units = d.units > 0 && best->units == d.units;
    if (r_units != best_units ? r_units
                              : Distance(*r, d) < Distance(*best, d)) {
      best = r;
    }
  }
  return best;
}

}  // namespace

const PeakRow* MatchPeakRow(const DeviceInfo& device, int64_t* units,
                            std::string* note) {
  note->clear();
  std::vector<const PeakRow*> rows;
  if (!device.name.empty()) {
    const std::set<std::string> words = Words(device.name);
    for (const PeakRow& r : PeakTable()) {
      if (HasAll(words, r.tokens) && !HasAny(words, r.without)) {
        rows.push_back(&r);
      }
    }
    if (rows.empty()) {
      // A name without the variant words (memory size, form factor): the
      // model's first row, whose compute peaks its variants share.
      for (const PeakRow& r : PeakTable()) {
        const std::string_view tokens = r.tokens;
        const std::string model(tokens.substr(0, tokens.find(' ')));
        if (words.count(model)) {
          rows.push_back(&r);
          *note =
              absl::StrCat("'", device.name, "' has no variant words: ", r.name,
                           "'s row (its memory bandwidth may "
                           "differ)");
          break;
        }
      }
    }
  } else if (device.cc_major > 0 && device.units > 0) {
    for (const PeakRow& r : PeakTable()) {
      if (r.cc_major == device.cc_major && r.cc_minor == device.cc_minor &&
          r.units == device.units) {
        rows.push_back(&r);
      }
    }
    if (!rows.empty()) {
      *note = absl::StrCat("no device name: picked by compute capability ",
                           device.cc_major, ".", device.cc_minor, " and ",
                           device.units, " SMs");
    }
  }
  const PeakRow* row = Closest(rows, device);
  if (row == nullptr) return nullptr;
  *units = row->units;
  if (device.units > 0 && device.units != row->units) {
    *units = device.units;
    absl::StrAppend(note, note->empty() ? "" : "; ", "scaled to the device's ",
                    device.units, " of the row's ", row->units,
                    row->cc_major > 0 ? " SMs" : " CUs");
  }
  return row;
}

std::string DeviceLabel(const DeviceInfo& device) {
  if (!device.name.empty()) return device.name;
  if (device.cc_major > 0) {
    return absl::StrCat("compute capability ", device.cc_major, ".",
                        device.cc_minor, ", ", device.units, " SMs");
  }
  return "a GPU the trace does not describe";
}

}  // namespace tfprof
