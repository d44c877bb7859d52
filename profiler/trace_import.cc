// Reading trace files, detecting their format, and the shared builder that
// turns nodes and executions into GraphDef / RunMetadata / OpLogProto.
#include "profiler/trace_import.h"

#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string_view>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "profiler/loader.h"
#include "profiler/trace_import_internal.h"
#include "proto/xplane.pb.h"
#include "re2/re2.h"

namespace tfprof {

const char* TraceFormatName(TraceFormat format) {
  switch (format) {
    case TraceFormat::kTfTimeline:
      return "tf_timeline";
    case TraceFormat::kKineto:
      return "kineto";
    case TraceFormat::kXSpace:
      return "xspace";
  }
  return "unknown";
}

namespace trace_internal {

namespace {

constexpr char kGpuDevicePrefix[] =
    "/job:localhost/replica:0/task:0/device:gpu:";

}  // namespace

std::string GpuStreamAllDevice(int64_t gpu) {
  return absl::StrCat(kGpuDevicePrefix, gpu, "/stream:all");
}

std::string GpuStreamDevice(int64_t gpu, absl::string_view stream) {
  return absl::StrCat(kGpuDevicePrefix, gpu, "/stream:", stream);
}

bool IsCanonicalDevice(absl::string_view device) {
  static const RE2* const kCanonical =
      new RE2(".*/(device:gpu|gpu|device:cpu|cpu):\\d+");
  const std::string lower = absl::AsciiStrToLower(device);
  return RE2::FullMatch(lower, *kCanonical);
}

bool IsStreamAllDevice(absl::string_view device) {
  return absl::StrContains(absl::AsciiStrToLower(device), "stream:all");
}

std::optional<int64_t> RoundToInt64(double x) {
  constexpr double kLimit = 4611686018427387904.0;  // 2^62
  if (!std::isfinite(x) || x >= kLimit || x <= -kLimit) return std::nullopt;
  return static_cast<int64_t>(std::llround(x));
}

// --- TraceBuilder

namespace {

// A name tfprof keeps whole: it cuts node names at the first ':' (GPU
// tracers append ":Op"), and an empty name would be no node.
std::string SafeName(absl::string_view name) {
  std::string safe(name);
  std::replace(safe.begin(), safe.end(), ':', '.');
  if (safe.empty()) safe = "_unnamed";
  return safe;
}

}  // namespace

int32_t TraceBuilder::Node(absl::string_view name, absl::string_view op) {
  std::string safe = SafeName(name);
  auto it = by_name_.find(safe);
  if (it != by_name_.end()) {
    NodeInfo& info = nodes_[it->second];
    if (info.op.empty() && !op.empty()) info.op = std::string(op);
    return it->second;
  }
  const int32_t index = static_cast<int32_t>(nodes_.size());
  NodeInfo info;
  info.name = safe;
  info.op = std::string(op);
  nodes_.push_back(std::move(info));
  by_name_.emplace(std::move(safe), index);
  return index;
}

int32_t TraceBuilder::TypedNode(absl::string_view name, absl::string_view op) {
  std::string key = absl::StrCat(name, std::string(1, '\0'), op);
  auto it = by_name_and_op_.find(key);
  if (it != by_name_and_op_.end()) return it->second;
  std::optional<int32_t> existing = FindNode(name);
  int32_t node;
  if (!existing.has_value()) {
    node = Node(name, op);
  } else if (nodes_[*existing].op == op) {
    node = *existing;
  } else {
    node = Node(absl::StrCat(name, "(", op, ")"), op);
    ++retyped_;
  }
  by_name_and_op_.emplace(std::move(key), node);
  return node;
}

const std::string& TraceBuilder::NodeName(int32_t node) const {
  return nodes_[node].name;
}

std::optional<int32_t> TraceBuilder::FindNode(absl::string_view name) const {
  auto it = by_name_.find(SafeName(name));
  if (it == by_name_.end()) return std::nullopt;
  return it->second;
}

void TraceBuilder::SetInputs(int32_t node,
                             const std::vector<std::string>& inputs) {
  if (nodes_[node].inputs.empty()) nodes_[node].inputs = inputs;
}

void TraceBuilder::SetCode(int32_t node, const std::vector<Frame>& frames) {
  if (frames.empty() || nodes_[node].code.has_value()) return;
  nodes_[node].code = frames;
}

const std::string& TraceBuilder::ClaimCanonicalDevice(
    int32_t node, const std::string& device) {
  std::string& claimed = nodes_[node].canonical_device;
  if (claimed.empty()) claimed = device;
  return claimed;
}

void TraceBuilder::AddFloatOps(int32_t node, int64_t flops) {
  NodeInfo& info = nodes_[node];
  if (info.flops_runs == 0) {
    info.flops_first = flops;
  } else if (flops != info.flops_first) {
    info.flops_uneven = true;
  }
  info.flops_sum = SatAdd(info.flops_sum, flops);
  ++info.flops_runs;
}

tfcore::NodeExecStats* TraceBuilder::AddExec(int64_t step,
                                             const std::string& device,
                                             int32_t node, int64_t start_micros,
                                             int64_t duration_micros) {
  std::unique_ptr<StepData>& data = steps_[step];
  if (data == nullptr) data = std::make_unique<StepData>();
  tfcore::DeviceStepStats*& dev = data->devices[device];
  if (dev == nullptr) {
    dev = data->run_meta.mutable_step_stats()->add_dev_stats();
    dev->set_device(device);
  }
  tfcore::NodeExecStats* stat = dev->add_node_stats();
  stat->set_node_name(nodes_[node].name);
  stat->set_all_start_micros(start_micros);
  stat->set_op_start_rel_micros(0);
  stat->set_op_end_rel_micros(duration_micros);
  stat->set_all_end_rel_micros(duration_micros);
  min_start_ = std::min(min_start_, start_micros);
  ++num_execs_;
  auto cached = device_class_.find(device);
  int device_class;
  if (cached != device_class_.end()) {
    device_class = cached->second;
  } else {
    device_class = IsCanonicalDevice(device)   ? 1
                   : IsStreamAllDevice(device) ? 2
                                               : 0;
    device_class_.emplace(device, device_class);
  }
  if (device_class == 1) {
    data->first_canonical.emplace(node, stat);
    nodes_[node].on_canonical = true;
  } else if (device_class == 2) {
    nodes_[node].on_stream_all = true;
  }
  return stat;
}

tfcore::NodeExecStats* TraceBuilder::FirstCanonicalExec(int64_t step,
                                                        int32_t node) const {
  auto s = steps_.find(step);
  if (s == steps_.end()) return nullptr;
  auto it = s->second->first_canonical.find(node);
  return it == s->second->first_canonical.end() ? nullptr : it->second;
}

void TraceBuilder::Note(const std::string& file, const std::string& text) {
  notes_.push_back(absl::StrCat(file, ": ", text));
}

void TraceBuilder::Count(const std::string& file, const std::string& what,
                         int64_t n) {
  auto [it, inserted] =
      count_index_.emplace(std::make_pair(file, what), counts_.size());
  if (inserted) {
    counts_.push_back(Counted{file, what, n});
  } else {
    counts_[it->second].n = SatAdd(counts_[it->second].n, n);
  }
}

ImportedTrace TraceBuilder::Finish(TraceFormat format) {
  ImportedTrace out;
  out.format = format;

  // Timestamps: tfprof ignores executions whose start is not positive.
  int64_t shift = 0;
  if (num_execs_ > 0 && min_start_ < 1) {
    shift = SatAdd(1, -std::max(min_start_, INT64_MIN + 2));
    notes_.push_back(absl::StrCat(
        "timestamps shifted by +", shift,
        "us so that every execution starts after 0 (tfprof ignores starts "
        "<= 0)"));
  }

  if (retyped_ > 0) {
    notes_.push_back(absl::StrCat(
        retyped_,
        " node names occur with a second op type (e.g. in different "
        "functions); those executions are nodes named \"<name>(<op type>)\""));
  }
  int64_t accelerator_only = 0;
  for (const NodeInfo& info : nodes_) {
    if (info.on_stream_all && !info.on_canonical) ++accelerator_only;
  }
  if (accelerator_only > 0) {
    notes_.push_back(absl::StrCat(
        accelerator_only,
        " nodes have accelerator time but no host (canonical device) "
        "execution in the trace: their run count is 0"));
  }

  for (const NodeInfo& info : nodes_) {
    tfcore::NodeDef* def = out.graph.add_node();
    def->set_name(info.name);
    def->set_op(info.op.empty() ? info.name : info.op);
    for (const std::string& in : info.inputs) def->add_input(in);
  }

  out.steps.reserve(steps_.size());
  for (auto& [step, data] : steps_) {
    if (shift != 0) {
      for (auto& dev :
           *data->run_meta.mutable_step_stats()->mutable_dev_stats()) {
        for (auto& stat : *dev.mutable_node_stats()) {
          stat.set_all_start_micros(SatAdd(stat.all_start_micros(), shift));
          for (auto& mem : *stat.mutable_memory()) {
            for (auto& rec : *mem.mutable_allocation_records()) {
              rec.set_alloc_micros(SatAdd(rec.alloc_micros(), shift));
            }
          }
        }
      }
    }
    out.steps.emplace_back(step, std::move(data->run_meta));
  }

  // Call stacks and float ops.
  absl::flat_hash_map<std::string, int64_t> ids;
  auto intern = [&](const std::string& s) -> int64_t {
    auto it = ids.find(s);
    if (it != ids.end()) return it->second;
    const int64_t id = static_cast<int64_t>(ids.size()) + 1;
    ids.emplace(s, id);
    (*out.op_log.mutable_id_to_string())[id] = s;
    return id;
  };
  int64_t uneven = 0;
  for (const NodeInfo& info : nodes_) {
    if (!info.code.has_value() && info.flops_runs == 0) continue;
    tfpb::OpLogEntry* entry = out.op_log.add_log_entries();
    entry->set_name(info.name);
    if (info.flops_runs > 0) {
      // tfprof multiplies the per-run float ops by the run count.
      entry->set_float_ops(info.flops_sum / info.flops_runs);
      if (info.flops_uneven) ++uneven;
    }
    if (info.code.has_value()) {
      tfpb::CodeDef* code = entry->mutable_code_def();
      for (const Frame& f : *info.code) {
        tfpb::CodeDef::Trace* t = code->add_traces();
        t->set_file_id(intern(f.file));
        t->set_function_id(intern(f.function));
        t->set_lineno(f.lineno);
      }
    }
  }
  if (uneven > 0) {
    notes_.push_back(absl::StrCat(
        uneven,
        " nodes have different float ops per run; their float ops are the "
        "per-run average"));
  }

  out.notes = std::move(notes_);
  for (const Counted& c : counts_) {
    out.notes.push_back(absl::StrCat(c.file, ": ", c.n, " ", c.what));
  }
  return out;
}

// --- JSON helpers

std::optional<JsonElement> JsonField(const JsonElement& obj,
                                     absl::string_view key) {
  simdjson::dom::object o;
  if (obj.get_object().get(o) != simdjson::SUCCESS) return std::nullopt;
  JsonElement v;
  if (o.at_key(std::string_view(key.data(), key.size())).get(v) !=
      simdjson::SUCCESS) {
    return std::nullopt;
  }
  return v;
}

std::optional<absl::string_view> JsonString(const JsonElement& obj,
                                            absl::string_view key) {
  std::optional<JsonElement> v = JsonField(obj, key);
  if (!v.has_value()) return std::nullopt;
  std::string_view s;
  if (v->get_string().get(s) != simdjson::SUCCESS) return std::nullopt;
  return absl::string_view(s.data(), s.size());
}

bool JsonStringTo(const JsonElement& obj, absl::string_view key,
                  absl::string_view* out) {
  std::optional<absl::string_view> s = JsonString(obj, key);
  if (!s.has_value()) return false;
  *out = *s;
  return true;
}

bool JsonMicros(const JsonElement& obj, absl::string_view key, int64_t* out) {
  constexpr int64_t kLimit = int64_t{1} << 61;
  std::optional<double> v = JsonNumber(obj, key);
  if (!v.has_value()) return false;
  std::optional<int64_t> rounded = RoundToInt64(*v);
  if (!rounded.has_value() || *rounded > kLimit || *rounded < -kLimit) {
    return false;
  }
  *out = *rounded;
  return true;
}

namespace {

std::optional<double> AsNumber(const JsonElement& v) {
  int64_t i;
  if (v.get_int64().get(i) == simdjson::SUCCESS) {
    return static_cast<double>(i);
  }
  uint64_t u;
  if (v.get_uint64().get(u) == simdjson::SUCCESS) {
    return static_cast<double>(u);
  }
  double d;
  if (v.get_double().get(d) == simdjson::SUCCESS) return d;
  return std::nullopt;
}

}  // namespace

std::optional<double> JsonNumber(const JsonElement& obj,
                                 absl::string_view key) {
  std::optional<JsonElement> v = JsonField(obj, key);
  if (!v.has_value()) return std::nullopt;
  return AsNumber(*v);
}

std::optional<int64_t> JsonInt(const JsonElement& obj, absl::string_view key) {
  std::optional<JsonElement> v = JsonField(obj, key);
  if (!v.has_value()) return std::nullopt;
  int64_t i;
  if (v->get_int64().get(i) == simdjson::SUCCESS) return i;
  double d;
  if (v->get_double().get(d) == simdjson::SUCCESS && std::isfinite(d) &&
      d == std::floor(d) && std::fabs(d) < 9.0e18) {
    return static_cast<int64_t>(d);
  }
  return std::nullopt;
}

std::optional<std::string> JsonIdText(const JsonElement& obj,
                                      absl::string_view key) {
  std::optional<JsonElement> v = JsonField(obj, key);
  if (!v.has_value()) return std::nullopt;
  std::string_view s;
  if (v->get_string().get(s) == simdjson::SUCCESS) return std::string(s);
  int64_t i;
  if (v->get_int64().get(i) == simdjson::SUCCESS) return absl::StrCat(i);
  uint64_t u;
  if (v->get_uint64().get(u) == simdjson::SUCCESS) return absl::StrCat(u);
  double d;
  if (v->get_double().get(d) == simdjson::SUCCESS) return absl::StrCat(d);
  return std::nullopt;
}

bool IsIgnoredPhase(absl::string_view ph) {
  // Flow events (s/t/f), metadata (M) and clock sync (c) carry no time.
  return ph == "s" || ph == "t" || ph == "f" || ph == "M" || ph == "c";
}

std::optional<simdjson::dom::array> TraceEvents(const JsonElement& root) {
  simdjson::dom::array events;
  if (root.get_array().get(events) == simdjson::SUCCESS) return events;
  std::optional<JsonElement> field = JsonField(root, "traceEvents");
  if (field.has_value() &&
      field->get_array().get(events) == simdjson::SUCCESS) {
    return events;
  }
  return std::nullopt;
}

std::optional<TraceFormat> DetectJsonTraceFormat(const JsonElement& root) {
  std::optional<simdjson::dom::array> events = TraceEvents(root);
  if (!events.has_value()) return std::nullopt;
  // Kineto writes a schema version; older PyTorch traces are recognized by
  // their event categories.
  if (JsonField(root, "schemaVersion").has_value()) return TraceFormat::kKineto;
  static const char* const kKinetoCategories[] = {
      "cpu_op",          "Operator",
      "cuda_runtime",    "Runtime",
      "kernel",          "Kernel",
      "gpu_memcpy",      "gpu_memset",
      "Memcpy",          "Memset",
      "python_function", "cuda_driver",
      "user_annotation", "gpu_user_annotation"};
  bool tf_timeline = false;
  for (JsonElement ev : *events) {
    std::optional<absl::string_view> ph = JsonString(ev, "ph");
    if (!ph.has_value()) continue;
    if (*ph == "M") {
      std::optional<absl::string_view> name = JsonString(ev, "name");
      std::optional<JsonElement> args = JsonField(ev, "args");
      if (name == "process_name" && args.has_value()) {
        std::optional<absl::string_view> pname = JsonString(*args, "name");
        if (pname.has_value() && (absl::EndsWith(*pname, " Compute") ||
                                  absl::EndsWith(*pname, " Tensors"))) {
          tf_timeline = true;
        }
      }
      continue;
    }
    if (*ph != "X") continue;
    std::optional<absl::string_view> cat = JsonString(ev, "cat");
    if (cat.has_value()) {
      for (const char* k : kKinetoCategories) {
        if (*cat == k) return TraceFormat::kKineto;
      }
    }
    std::optional<absl::string_view> name = JsonString(ev, "name");
    if (name.has_value() && absl::StartsWith(*name, "ProfilerStep#")) {
      return TraceFormat::kKineto;
    }
    std::optional<JsonElement> args = JsonField(ev, "args");
    if (cat == "Op" && args.has_value() && JsonString(*args, "op") &&
        JsonString(*args, "name")) {
      tf_timeline = true;
    }
  }
  if (tf_timeline) return TraceFormat::kTfTimeline;
  return std::nullopt;
}

}  // namespace trace_internal

namespace {

using trace_internal::TraceBuilder;

constexpr size_t kMaxDecompressedBytes = size_t{1} << 31;  // 2 GiB

bool IsGzip(const std::string& data) {
  return data.size() >= 2 && static_cast<unsigned char>(data[0]) == 0x1f &&
         static_cast<unsigned char>(data[1]) == 0x8b;
}

// Decompresses gzip data (several members allowed).
absl::StatusOr<std::string> Decompress(const std::string& name,
                                       const std::string& data) {
  z_stream zs;
  std::memset(&zs, 0, sizeof(zs));
  if (inflateInit2(&zs, 15 + 16) != Z_OK) {
    return absl::InternalError(absl::StrCat(name, ": zlib init failed"));
  }
  std::string out;
  char buf[1 << 16];
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = static_cast<uInt>(
      std::min<size_t>(data.size(), std::numeric_limits<uInt>::max()));
  size_t consumed_total = 0;
  for (;;) {
    zs.next_out = reinterpret_cast<Bytef*>(buf);
    zs.avail_out = sizeof(buf);
    const int rc = inflate(&zs, Z_NO_FLUSH);
    out.append(buf, sizeof(buf) - zs.avail_out);
    if (out.size() > kMaxDecompressedBytes) {
      inflateEnd(&zs);
      return absl::ResourceExhaustedError(absl::StrCat(
          name, ": gzip data decompresses to more than 2 GiB; not loaded"));
    }
    if (rc == Z_STREAM_END) {
      consumed_total = data.size() - zs.avail_in;
      // Another gzip member may follow.
      if (zs.avail_in > 0 && IsGzip(data.substr(consumed_total, 2))) {
        if (inflateReset(&zs) != Z_OK) break;
        continue;
      }
      break;
    }
    if (rc == Z_BUF_ERROR && zs.avail_in == 0) {
      inflateEnd(&zs);
      return absl::DataLossError(
          absl::StrCat(name, ": truncated gzip data (after ", out.size(),
                       " decompressed bytes)"));
    }
    if (rc != Z_OK && rc != Z_BUF_ERROR) {
      inflateEnd(&zs);
      return absl::DataLossError(absl::StrCat(name, ": corrupt gzip data (",
                                              zs.msg ? zs.msg : "inflate error",
                                              ")"));
    }
  }
  inflateEnd(&zs);
  return out;
}

bool LooksLikeJson(const std::string& data) {
  for (char c : data) {
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
    return c == '{' || c == '[';
  }
  return false;
}

// 1-based line and column of a byte offset.
std::string Where(const std::string& data, size_t offset) {
  offset = std::min(offset, data.size());
  size_t line = 1, col = 1;
  for (size_t i = 0; i < offset; ++i) {
    if (data[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return absl::StrCat("line ", line, ", column ", col, " (byte ", offset, ")");
}

// Walks a document with the On Demand API to find where it stops being
// valid JSON (the DOM parser reports what, not where).
void WalkValue(simdjson::ondemand::value value, int depth, bool* failed);

void WalkValue(simdjson::ondemand::value value, int depth, bool* failed) {
  if (*failed || depth > 1000) return;
  simdjson::ondemand::json_type type;
  if (value.type().get(type) != simdjson::SUCCESS) {
    *failed = true;
    return;
  }
  switch (type) {
    case simdjson::ondemand::json_type::array: {
      simdjson::ondemand::array arr;
      if (value.get_array().get(arr) != simdjson::SUCCESS) {
        *failed = true;
        return;
      }
      for (auto child : arr) {
        simdjson::ondemand::value v;
        if (child.get(v) != simdjson::SUCCESS) {
          *failed = true;
          return;
        }
        WalkValue(v, depth + 1, failed);
        if (*failed) return;
      }
      return;
    }
    case simdjson::ondemand::json_type::object: {
      simdjson::ondemand::object obj;
      if (value.get_object().get(obj) != simdjson::SUCCESS) {
        *failed = true;
        return;
      }
      for (auto field : obj) {
        simdjson::ondemand::value v;
        if (field.value().get(v) != simdjson::SUCCESS) {
          *failed = true;
          return;
        }
        WalkValue(v, depth + 1, failed);
        if (*failed) return;
      }
      return;
    }
    case simdjson::ondemand::json_type::number: {
      simdjson::ondemand::number number;
      if (value.get_number().get(number) != simdjson::SUCCESS) *failed = true;
      return;
    }
    case simdjson::ondemand::json_type::string: {
      std::string_view s;
      if (value.get_string().get(s) != simdjson::SUCCESS) *failed = true;
      return;
    }
    case simdjson::ondemand::json_type::boolean: {
      bool b;
      if (value.get_bool().get(b) != simdjson::SUCCESS) *failed = true;
      return;
    }
    case simdjson::ondemand::json_type::null: {
      bool is_null = false;
      if (value.is_null().get(is_null) != simdjson::SUCCESS || !is_null) {
        *failed = true;
      }
      return;
    }
  }
}

std::string LocateJsonError(const std::string& data) {
  simdjson::padded_string padded(data);
  simdjson::ondemand::parser parser;
  simdjson::ondemand::document doc;
  if (parser.iterate(padded).get(doc) != simdjson::SUCCESS) return "";
  bool failed = false;
  simdjson::ondemand::value root;
  if (doc.get_value().get(root) == simdjson::SUCCESS) {
    WalkValue(root, 0, &failed);
  } else {
    failed = true;
  }
  const char* loc = nullptr;
  if (doc.current_location().get(loc) != simdjson::SUCCESS || loc == nullptr) {
    return failed ? "" : "at the end of the document";
  }
  const char* base = padded.data();
  if (loc < base || loc > base + data.size()) return "";
  return "near " + Where(data, static_cast<size_t>(loc - base));
}

absl::Status ImportOne(const std::string& name, std::string raw,
                       int64_t file_index, std::optional<TraceFormat>* format,
                       TraceBuilder* builder) {
  std::string decompressed;
  const std::string* data = &raw;
  if (IsGzip(raw)) {
    absl::StatusOr<std::string> d = Decompress(name, raw);
    if (!d.ok()) return d.status();
    decompressed = std::move(*d);
    data = &decompressed;
    if (IsGzip(decompressed)) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, ": gzip inside gzip; not a trace"));
    }
  }
  if (data->empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        name,
        ": empty file; expected a trace (TensorFlow timeline JSON, "
        "PyTorch profiler JSON or XSpace .xplane.pb)"));
  }

  if (!LooksLikeJson(*data)) {
    if (format->has_value() && **format != TraceFormat::kXSpace) {
      absl::StatusOr<TraceFormat> f = DetectTraceFormat(name, *data);
      if (!f.ok()) return f.status();
      return absl::InvalidArgumentError(absl::StrCat(
          name, ": is an ", TraceFormatName(*f),
          " trace but earlier files are ", TraceFormatName(**format),
          "; all traces must have one format"));
    }
    *format = TraceFormat::kXSpace;
    // Checks that it is an XSpace.
    return trace_internal::ImportXSpace(*data, name, file_index, builder);
  }

  simdjson::padded_string padded(*data);
  // The padded copy is all the parser needs: free the other one.
  raw = std::string();
  decompressed = std::string();
  // A parser per file: its buffers (several times the file) are freed as
  // soon as the file is converted.
  auto parser = std::make_unique<simdjson::dom::parser>();
  simdjson::dom::element root;
  const simdjson::error_code err = parser->parse(padded).get(root);
  if (err != simdjson::SUCCESS) {
    std::string where =
        LocateJsonError(std::string(padded.data(), padded.size()));
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": malformed JSON: ", simdjson::error_message(err),
                     where.empty() ? "" : " ", where));
  }
  std::optional<TraceFormat> f = trace_internal::DetectJsonTraceFormat(root);
  if (!f.has_value()) {
    const bool chrome = trace_internal::TraceEvents(root).has_value();
    return absl::InvalidArgumentError(absl::StrCat(
        name,
        chrome ? ": a Chrome trace, but neither a TensorFlow timeline (no "
                 "\"<device> Compute\" processes, no Op events with "
                 "args.name/args.op) nor a PyTorch profiler trace"
               : ": JSON without a traceEvents array",
        trace_internal::kExpectedFormats));
  }
  if (format->has_value() && **format != *f) {
    return absl::InvalidArgumentError(absl::StrCat(
        name, ": is a ", TraceFormatName(*f), " trace but earlier files are ",
        TraceFormatName(**format), "; all traces must have one format"));
  }
  *format = *f;
  if (*f == TraceFormat::kTfTimeline) {
    return trace_internal::ImportTfTimeline(root, name, file_index, builder);
  }
  return trace_internal::ImportKineto(root, name, file_index, builder);
}

}  // namespace

absl::StatusOr<TraceFormat> DetectTraceFormat(const std::string& name,
                                              const std::string& contents) {
  if (IsGzip(contents)) {
    absl::StatusOr<std::string> data = Decompress(name, contents);
    if (!data.ok()) return data.status();
    if (IsGzip(*data)) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, ": gzip inside gzip; not a trace"));
    }
    return DetectTraceFormat(name, *data);
  }
  const char* const kExpected = trace_internal::kExpectedFormats;
  if (LooksLikeJson(contents)) {
    simdjson::dom::parser parser;
    simdjson::padded_string padded(contents);
    simdjson::dom::element root;
    const simdjson::error_code err = parser.parse(padded).get(root);
    if (err != simdjson::SUCCESS) {
      return absl::InvalidArgumentError(absl::StrCat(
          name, ": malformed JSON: ", simdjson::error_message(err), kExpected));
    }
    std::optional<TraceFormat> f = trace_internal::DetectJsonTraceFormat(root);
    if (!f.has_value()) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, ": JSON of an unknown kind", kExpected));
    }
    return *f;
  }
  tensorflow::profiler::XSpace space;
  if (space.ParseFromString(contents)) {
    for (const auto& plane : space.planes()) {
      if (absl::StartsWith(plane.name(), "/host:") ||
          absl::StartsWith(plane.name(), "/device:")) {
        return TraceFormat::kXSpace;
      }
    }
  }
  return absl::InvalidArgumentError(
      absl::StrCat(name, ": not a known trace format", kExpected));
}

namespace {

// Imports the files one at a time; `read(i)` returns the contents of file i.
template <typename ReadFn>
absl::StatusOr<ImportedTrace> ImportAll(const std::vector<std::string>& names,
                                        ReadFn read) {
  if (names.empty()) {
    return absl::InvalidArgumentError("no trace files given");
  }
  TraceBuilder builder;
  std::optional<TraceFormat> format;
  for (size_t i = 0; i < names.size(); ++i) {
    absl::StatusOr<std::string> data = read(i);
    if (!data.ok()) return data.status();
    absl::Status s = ImportOne(names[i], std::move(*data),
                               static_cast<int64_t>(i), &format, &builder);
    if (!s.ok()) return s;
  }
  if (builder.num_execs() == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        names.size() == 1 ? names[0] : "the trace files",
        ": no executions found (no timed events that map to nodes)"));
  }
  return builder.Finish(*format);
}

}  // namespace

absl::StatusOr<ImportedTrace> ImportTraceContents(
    const std::vector<std::string>& names,
    const std::vector<std::string>& contents) {
  if (names.size() != contents.size()) {
    return absl::InvalidArgumentError(
        "trace names and contents differ in size");
  }
  return ImportAll(names, [&contents](size_t i) -> absl::StatusOr<std::string> {
    return contents[i];
  });
}

absl::StatusOr<ImportedTrace> ImportTrace(
    const std::vector<std::string>& paths) {
  return ImportAll(paths,
                   [&paths](size_t i) { return ReadFileToString(paths[i]); });
}

}  // namespace tfprof
