#include "profiler/views/flops.h"

#include <algorithm>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "profiler/base/device.h"
#include "profiler/base/saturate.h"
#include "profiler/base/units.h"

namespace tfprof {
namespace {

std::optional<int64_t> GpuOf(std::string_view device) {
  const std::optional<Processor> p = ProcessorOfDevice(device);
  if (!p.has_value() || !p->gpu) return std::nullopt;
  return p->index;
}

// A GPU's row of the peak table, from what the trace describes.
struct DeviceRow {
  const PeakRow* row = nullptr;
  int64_t units = 0;
  std::string note;   // how the row was picked, when not plainly
  std::string label;  // the device's name for messages
};

std::map<int64_t, DeviceRow> DeviceRows(const Model& model) {
  std::map<int64_t, DeviceRow> rows;
  for (const auto& [name, info] : model.activity().device_info()) {
    const std::optional<int64_t> gpu = GpuOf(name);
    if (!gpu.has_value()) continue;
    DeviceRow d;
    d.label = DeviceLabel(info);
    d.row = MatchPeakRow(info, &d.units, &d.note);
    rows[*gpu] = d;
  }
  return rows;
}

// The GPUs that ran kernels, per step.
std::map<int64_t, std::set<int64_t>> KernelGpus(const Activity& a) {
  std::map<int64_t, std::set<int64_t>> gpus;
  for (const DeviceWork& w : a.work()) {
    if (w.kind != WorkKind::kKernel) continue;
    const std::optional<int64_t> gpu = GpuOf(a.String(w.stream));
    if (gpu.has_value()) gpus[w.step].insert(*gpu);
  }
  return gpus;
}

std::string Plural(int64_t n, const char* word) {
  return absl::StrCat(n, " ", word, n == 1 ? "" : "s");
}

// "NVIDIA H200: 4096 FLOP/cycle/SM x 132 SMs x 1.83 GHz".
std::string RowFormula(const DeviceRow& d, PeakClass c) {
  const PeakRow& r = *d.row;
  std::string out = absl::StrFormat(
      "%s: %d FLOP/cycle/%s x %d %ss x %g GHz", r.name,
      r.flop_per_cycle[static_cast<int>(c)], r.cc_major > 0 ? "SM" : "CU",
      d.units, r.cc_major > 0 ? "SM" : "CU", r.clock_ghz);
  if (!d.note.empty()) absl::StrAppend(&out, " (", d.note, ")");
  return out;
}

// Whether the job's collectives are NCCL's: its backend, or its kernels.
bool UsesNccl(const Activity& a) {
  if (absl::StrContains(absl::AsciiStrToLower(a.rank().backend), "nccl")) {
    return true;
  }
  for (const DeviceWork& w : a.work()) {
    if (w.kind == WorkKind::kKernel &&
        absl::StartsWith(a.String(w.name), "nccl")) {
      return true;
    }
  }
  return false;
}

// The summed peak of `gpus` for a class of data type, for `ranks` GPUs
// where the job's ranks named fewer (0: as many as named).
RunPeak SumPeaks(const std::set<int64_t>& gpus,
                 const std::map<int64_t, DeviceRow>& rows, Dtype dtype,
                 const PeakOverride& o, int64_t ranks) {
  RunPeak p;
  p.dtype = dtype;
  const int64_t named = static_cast<int64_t>(gpus.size());
  const double scale =
      named > 0 && ranks > named ? static_cast<double>(ranks) / named : 1.0;
  p.devices = scale > 1 ? ranks : named;
  const PeakClass c = PeakClassOf(dtype);
  const int64_t n = std::max<int64_t>(p.devices, 1);
  std::vector<std::string> formulas;
  double table_bytes = 0;
  std::string unknown;
  for (int64_t g : gpus) {
    auto it = rows.find(g);
    if (it == rows.end() || it->second.row == nullptr) {
      unknown = it == rows.end()
                    ? absl::StrCat("unknown GPU 'gpu:", g,
                                   "' (the profile does not describe it); pass "
                                   "--peak_flops")
                    : absl::StrCat("unknown GPU '", it->second.label,
                                   "'; pass --peak_flops");
      continue;
    }
    const DeviceRow& d = it->second;
    const double peak = RowPeakFlops(*d.row, c, d.units);
    if (peak <= 0 && unknown.empty()) {
      unknown = absl::StrCat(d.row->name, " has no ", PeakClassName(c),
                             " peak; pass --peak_flops");
    }
    p.flops += peak * scale;
    table_bytes += RowBandwidth(*d.row) * scale;
    const std::string f = RowFormula(d, c);
    if (std::find(formulas.begin(), formulas.end(), f) == formulas.end()) {
      formulas.push_back(f);
    }
  }
  if (gpus.empty()) unknown = "no accelerator ran kernels; pass --peak_flops";
  if (o.flops > 0) {
    p.flops = o.flops * static_cast<double>(n);
    p.source = absl::StrCat("--peak_flops x ", Plural(n, "device"),
                            scale > 1 ? absl::StrCat(" (one per rank)") : "");
  } else if (!unknown.empty()) {
    p.flops = 0;
    p.unknown = unknown;
  } else {
    p.source = absl::StrCat("table: ", absl::StrJoin(formulas, "; "),
                            n > 1 ? absl::StrCat(", x ", n, " devices") : "",
                            scale > 1 ? absl::StrCat(" (one per rank)") : "");
  }
  p.bytes_per_sec = o.bytes_per_sec > 0
                        ? o.bytes_per_sec * static_cast<double>(n)
                        : (unknown.empty() ? table_bytes : 0);
  return p;
}

// The float ops of every node by the extended rule, per step and by dtype.
void CountFlops(const Model& model, std::map<int64_t, int64_t>* per_step,
                int64_t by_dtype[8]) {
  for (const auto& node : model.nodes()) {
    if (node->float_ops <= 0) continue;
    for (const StepExec& e : node->execs) {
      const int64_t f = SatMul(node->float_ops, e.run_count);
      int64_t& s = (*per_step)[e.step];
      s = SatAdd(s, f);
      int64_t& d = by_dtype[static_cast<size_t>(node->dtype) % 8];
      d = SatAdd(d, f);
    }
  }
}

}  // namespace

PeakOverride PeakOverrideOf(const Options& opts) {
  PeakOverride o;
  o.flops = opts.peak_flops;
  o.bytes_per_sec = opts.peak_bytes_per_sec;
  return o;
}

RunFlops ComputeRunFlops(const Model& model, const StepTable& steps,
                         const PeakOverride& o) {
  RunFlops r;
  r.notes = model.activity().flops_notes();
  // Which counts the nodes carry: PyTorch traces' extended rule, an XLA
  // program's HLO, or a TensorFlow op log.
  r.flops_set = model.source() == ProfileSource::kPyTorch  ? "extended rule"
                : model.source() == ProfileSource::kXSpace ? "HLO"
                                                           : "op log";
  std::map<int64_t, int64_t> per_step;
  int64_t by_dtype[8] = {};
  CountFlops(model, &per_step, by_dtype);
  Dtype dtype = Dtype::kBf16;
  int64_t most = 0;
  for (Dtype d : {Dtype::kBf16, Dtype::kFp16, Dtype::kFp8, Dtype::kTf32,
                  Dtype::kFp32, Dtype::kFp64}) {
    if (by_dtype[static_cast<size_t>(d)] > most) {
      most = by_dtype[static_cast<size_t>(d)];
      dtype = d;
    }
  }
  const std::map<int64_t, DeviceRow> rows = DeviceRows(model);
  const std::map<int64_t, std::set<int64_t>> gpus =
      KernelGpus(model.activity());
  std::set<int64_t> all;
  for (const auto& [step, g] : gpus) all.insert(g.begin(), g.end());
  const int64_t ranks = model.ranks();
  // GPUs of the peak: with NCCL, which puts no two ranks on one GPU, at
  // least one per rank (ranks that all name "gpu:0" are on other nodes, or
  // in containers that see one GPU each); otherwise (gloo) ranks that name
  // the same GPU share it, as processes on one host do.
  const int64_t copies = ranks > 1 && UsesNccl(model.activity()) ? ranks : 0;
  r.peak = SumPeaks(all, rows, dtype, o, copies);
  if (all.empty() && !steps.kernel_records && !r.peak.unknown.empty()) {
    // (Accelerator time without kernel records: which GPU is not known.)
    r.peak.unknown =
        "the profile has no kernel records to say which GPU ran; pass "
        "--peak_flops";
  }
  r.peak.dtype_assumed = most == 0;
  int64_t sum = 0;
  for (const StepRow& row : steps.rows) {
    const int64_t f = per_step.count(row.step) ? per_step.at(row.step) : 0;
    r.step_flops[row.step] = f;
    sum = SatAdd(sum, f);
    auto g = gpus.find(row.step);
    const RunPeak p =
        SumPeaks(g == gpus.end() ? std::set<int64_t>() : g->second, rows, dtype,
                 o, copies);
    if (p.flops > 0) {
      r.step_peak[row.step] = p.flops;
      if (row.wall_ns > 0 && f > 0) {
        r.step_mfu[row.step] =
            static_cast<double>(f) /
            (static_cast<double>(row.wall_ns) * 1e-9 * p.flops);
      }
    }
  }
  if (!steps.rows.empty()) {
    r.flops_per_step = sum / static_cast<int64_t>(steps.rows.size());
    const double wall =
        static_cast<double>(StepWallStats(steps).mean_ns) * 1e-9;
    if (wall > 0) {
      r.flop_rate = static_cast<double>(r.flops_per_step) / wall;
      if (r.peak.flops > 0 && r.flops_per_step > 0) {
        r.mfu = r.flop_rate / r.peak.flops;
      }
    }
  }
  // Several ranks: MFU is the job's, all ranks' float ops against the peak
  // of the devices they ran on (above); the float ops and FLOP/s are the
  // mean per rank, as the views show node figures.
  if (ranks > 1) {
    for (auto& [step, f] : r.step_flops) f /= ranks;
    r.flops_per_step /= ranks;
    r.flop_rate /= static_cast<double>(ranks);
  }
  return r;
}

void AddStepFlops(const RunFlops& flops, StepTable* steps) {
  for (StepRow& row : steps->rows) {
    auto f = flops.step_flops.find(row.step);
    row.flops = f == flops.step_flops.end() ? 0 : f->second;
    auto m = flops.step_mfu.find(row.step);
    row.mfu = m == flops.step_mfu.end() ? -1 : m->second;
  }
  // (Without float ops, no set of counts to name.)
  steps->mfu_text = flops.flops_per_step <= 0
                        ? MfuText(flops)
                        : absl::StrCat("flops by the ", flops.flops_set, "; ",
                                       MfuText(flops));
}

std::string MfuText(const RunFlops& f) {
  if (f.flops_per_step <= 0) return "MFU: n/a (no float ops)";
  if (f.peak.flops <= 0) {
    return absl::StrCat(
        "MFU: n/a (", f.peak.unknown.empty() ? "no peak" : f.peak.unknown, ")");
  }
  // A peak the user gave (--peak_flops) is one for every element type.
  std::string dtype;
  if (!absl::StartsWith(f.peak.source, "--peak_flops")) {
    dtype = absl::StrCat(DtypeName(f.peak.dtype), " dense peak");
    if (f.peak.dtype_assumed) dtype += ", assumed: no dtype recorded";
    dtype += "; ";
  }
  return absl::StrFormat(
      "MFU %s of %s (%s%s)",
      f.mfu.has_value() ? absl::StrFormat("%.1f%%", 100 * *f.mfu) : "n/a",
      FormatFlopRate(f.peak.flops), dtype, f.peak.source);
}

DevicePeaks FirstDevicePeaks(const Model& model, const PeakOverride& o) {
  DevicePeaks p;
  const std::map<int64_t, DeviceRow> rows = DeviceRows(model);
  std::set<int64_t> used;
  for (const auto& [step, g] : KernelGpus(model.activity())) {
    used.insert(g.begin(), g.end());
  }
  std::optional<int64_t> gpu;
  if (!used.empty()) {
    gpu = *used.begin();
  } else if (!rows.empty()) {
    gpu = rows.begin()->first;
  }
  auto it = gpu.has_value() ? rows.find(*gpu) : rows.end();
  if (it != rows.end() && it->second.row != nullptr) {
    for (int c = 0; c < kPeakClasses; ++c) {
      p.flops[c] = RowPeakFlops(*it->second.row, static_cast<PeakClass>(c),
                                it->second.units);
    }
    p.bytes_per_sec = RowBandwidth(*it->second.row);
    p.source = absl::StrCat("table: ", it->second.row->name);
  } else {
    p.unknown = it != rows.end()
                    ? absl::StrCat("unknown GPU '", it->second.label,
                                   "'; pass --peak_flops")
                    : "no GPU described; pass --peak_flops";
  }
  if (o.flops > 0) {
    for (double& f : p.flops) f = o.flops;
    p.source = "--peak_flops";
    p.unknown.clear();
  }
  if (o.bytes_per_sec > 0) p.bytes_per_sec = o.bytes_per_sec;
  return p;
}

bool SelectsFlopFacts(const Options& opts) {
  return opts.Selected(Attr::kAcceleratorFlopRate) ||
         opts.Selected(Attr::kArithmeticIntensity) ||
         opts.Selected(Attr::kRoofline);
}

void AttachFlopFacts(const Model& model, ResultTree* tree) {
  if (!IsFlatView(tree->view) || !SelectsFlopFacts(tree->options)) return;
  const DevicePeaks peaks =
      FirstDevicePeaks(model, PeakOverrideOf(tree->options));
  bool untimed = false;
  for (size_t c : tree->nodes[0].children) {
    ResultNode& n = tree->nodes[c];
    // The float ops the rate divides: op rows count those of their nodes
    // with accelerator time of their own. XLA instructions run in a command
    // buffer have their float ops but not their kernels' time (the
    // command_buffer node holds it): counted, the rate passed the peak.
    // The time they divide: that of the nodes that have float ops (an op
    // type's nodes without any, e.g. a dot of unknown shapes, would lower
    // the rate of those that did the counted work).
    double timed_flops = static_cast<double>(n.self.float_ops);
    int64_t rate_micros = n.self.accelerator_exec_micros;
    if (n.flops == nullptr && n.kernel == nullptr) {
      int64_t timed = 0;
      rate_micros = 0;
      for (const MemberNode& m : n.members) {
        if (m.stats.accelerator_exec_micros > 0) {
          timed = SatAdd(timed, m.stats.float_ops);
          if (m.stats.float_ops > 0) {
            rate_micros = SatAdd(rate_micros, m.stats.accelerator_exec_micros);
          }
        }
      }
      untimed |= timed < n.self.float_ops;
      timed_flops = static_cast<double>(timed);
    }
    if (n.flops == nullptr) {
      // Op view rows: from their graph nodes' costs.
      auto f = std::make_shared<FlopFacts>();
      int64_t by_dtype[8] = {};
      for (const MemberNode& m : n.members) {
        f->bytes =
            SatAdd(f->bytes, SatMul(m.node->cost_bytes, m.stats.run_count));
        int64_t& d = by_dtype[static_cast<size_t>(m.node->dtype) % 8];
        d = SatAdd(d, m.stats.float_ops);
      }
      for (size_t d = 1; d < 8; ++d) {
        if (by_dtype[d] > by_dtype[static_cast<size_t>(f->dtype)]) {
          f->dtype = static_cast<Dtype>(d);
        }
      }
      n.flops = std::move(f);
    }
    FlopFacts& f = *n.flops;
    const double flops = static_cast<double>(n.self.float_ops);
    f.rate_micros = rate_micros;
    if (timed_flops > 0 && rate_micros > 0) {
      f.flop_rate = timed_flops / (static_cast<double>(rate_micros) * 1e-6);
    }
    // A kernel row's time per step from its nanoseconds (whole microseconds
    // per step were off by up to 1% for kernels of tens of microseconds).
    if (n.kernel != nullptr && timed_flops > 0 && n.kernel->total_ns > 0) {
      const double per_step_ns =
          static_cast<double>(n.kernel->total_ns) /
          static_cast<double>(
              std::max<int64_t>(1, SatMul(n.kernel->steps, n.kernel->ranks)));
      f.flop_rate = timed_flops / (per_step_ns * 1e-9);
    }
    if (flops > 0 && f.bytes > 0)
      f.intensity = flops / static_cast<double>(f.bytes);
    const Dtype d = f.dtype == Dtype::kUnknown || f.dtype == Dtype::kInt
                        ? Dtype::kBf16
                        : f.dtype;
    f.peak = peaks.flops[static_cast<int>(PeakClassOf(d))];
    if (f.peak > 0 && peaks.bytes_per_sec > 0 && f.intensity > 0) {
      const double memory_roof = f.intensity * peaks.bytes_per_sec;
      f.memory_bound = memory_roof < f.peak;
      f.roof = std::min(memory_roof, f.peak);
      if (f.flop_rate > 0) f.roof_fraction = f.flop_rate / f.roof;
    }
  }
  if (untimed && tree->options.Selected(Attr::kAcceleratorFlopRate)) {
    tree->notes.push_back(
        "accelerator_flop_rate: float ops of nodes without accelerator time "
        "of their own (XLA instructions run in a command buffer, whose node "
        "holds their kernels' time) are left out of the rates");
  }
  if (!peaks.unknown.empty() && tree->options.Selected(Attr::kRoofline)) {
    tree->notes.push_back(absl::StrCat("roofline: n/a (", peaks.unknown, ")"));
  }
}

}  // namespace tfprof
