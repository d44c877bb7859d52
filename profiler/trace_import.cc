// Reading trace files, detecting their format, and the shared builder that
// turns nodes and executions into GraphDef / RunMetadata / OpLogProto.
#include "profiler/trace_import.h"

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
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

void AppendPacked(absl::string_view s, std::string* packed) {
  const uint32_t n = static_cast<uint32_t>(s.size());
  char length[4];
  std::memcpy(length, &n, sizeof(n));
  packed->append(length, sizeof(length));
  packed->append(s.data(), s.size());
}

}  // namespace

int32_t TraceBuilder::Op(absl::string_view op) {
  if (ops_.size() == 0) ops_.Id("");  // id 0: no op type
  return static_cast<int32_t>(ops_.Id(std::string_view(op.data(), op.size())));
}

int32_t TraceBuilder::Device(const std::string& device) {
  const size_t known = devices_.size();
  const int32_t id = static_cast<int32_t>(devices_.Id(device));
  if (devices_.size() == known) return id;
  device_class_.push_back(IsCanonicalDevice(device)   ? 1
                          : IsStreamAllDevice(device) ? 2
                                                      : 0);
  return id;
}

int32_t TraceBuilder::Node(absl::string_view name, absl::string_view op) {
  std::string safe = SafeName(name);
  auto it = by_name_.find(safe);
  if (it != by_name_.end()) {
    NodeInfo& info = nodes_[it->second];
    if (info.op == 0 && !op.empty()) info.op = Op(op);
    return it->second;
  }
  const int32_t index = static_cast<int32_t>(nodes_.size());
  nodes_.emplace_back();
  NodeInfo& info = nodes_.back();
  info.name = std::move(safe);
  info.op = Op(op);
  by_name_.emplace(info.name, index);
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
  } else if (ops_.Get(nodes_[*existing].op) == op) {
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
  std::string& packed = nodes_[node].inputs;
  if (!packed.empty()) return;
  for (const std::string& in : inputs) AppendPacked(in, &packed);
}

void TraceBuilder::SetCode(int32_t node, const std::vector<Frame>& frames) {
  if (frames.empty() || nodes_[node].code != nullptr) return;
  nodes_[node].code = std::make_unique<std::vector<Frame>>(frames);
}

const std::string& TraceBuilder::ClaimCanonicalDevice(
    int32_t node, const std::string& device) {
  int32_t& claimed = nodes_[node].canonical_device;
  if (claimed < 0 || devices_.Get(claimed).empty()) claimed = Device(device);
  return devices_.Get(claimed);
}

void TraceBuilder::AddFloatOps(int32_t node, int64_t flops) {
  FloatOps& info = flops_[node];
  if (info.runs == 0) {
    info.first = flops;
  } else if (flops != info.first) {
    info.uneven = true;
  }
  info.sum = SatAdd(info.sum, flops);
  ++info.runs;
}

TraceBuilder::ExecRef TraceBuilder::AddExec(int64_t step,
                                            const std::string& device,
                                            int32_t node, int64_t start_micros,
                                            int64_t duration_micros) {
  std::unique_ptr<StepData>& data = steps_[step];
  if (data == nullptr) data = std::make_unique<StepData>();
  const int32_t device_id = Device(device);
  const uint32_t index = static_cast<uint32_t>(data->execs.size());
  data->execs.push_back(Exec{start_micros, duration_micros, node, device_id});
  min_start_ = std::min(min_start_, start_micros);
  ++num_execs_;
  if (device_class_[device_id] == 1) {
    data->first_canonical.emplace(node, index);
    nodes_[node].on_canonical = true;
  } else if (device_class_[device_id] == 2) {
    nodes_[node].on_stream_all = true;
  }
  return ExecRef{data.get(), index};
}

tfcore::NodeExecStats* TraceBuilder::Details(ExecRef exec) {
  std::unique_ptr<tfcore::NodeExecStats>& details =
      exec.step->details[exec.index];
  if (details == nullptr) details = std::make_unique<tfcore::NodeExecStats>();
  return details.get();
}

TraceBuilder::ExecRef TraceBuilder::FirstCanonicalExec(int64_t step,
                                                       int32_t node) const {
  auto s = steps_.find(step);
  if (s == steps_.end()) return ExecRef();
  auto it = s->second->first_canonical.find(node);
  if (it == s->second->first_canonical.end()) return ExecRef();
  return ExecRef{s->second.get(), it->second};
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

void TraceBuilder::Seal(TraceFormat format) {
  format_ = format;
  // The lookups are done with.
  by_name_ = {};
  by_name_and_op_ = {};
  for (auto& [step, data] : steps_) data->first_canonical = {};

  // Timestamps: tfprof ignores executions whose start is not positive.
  if (num_execs_ > 0 && min_start_ < 1) {
    shift_ = SatAdd(1, -std::max(min_start_, INT64_MIN + 2));
    notes_.push_back(absl::StrCat(
        "timestamps shifted by +", shift_,
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
  int64_t uneven = 0;
  for (const auto& [node, f] : flops_) {
    if (f.runs > 0 && f.uneven) ++uneven;
  }
  if (uneven > 0) {
    notes_.push_back(absl::StrCat(
        uneven,
        " nodes have different float ops per run; their float ops are the "
        "per-run average"));
  }
  for (const Counted& c : counts_) {
    if (c.n == 0) continue;  // counted nothing
    notes_.push_back(absl::StrCat(c.file, ": ", c.n, " ", c.what));
  }
  counts_ = {};
  count_index_ = {};
}

tfcore::GraphDef TraceBuilder::TakeGraph() {
  tfcore::GraphDef graph;
  for (NodeInfo& info : nodes_) {
    tfcore::NodeDef* def = graph.add_node();
    def->set_name(info.name);
    def->set_op(info.op == 0 ? info.name : ops_.Get(info.op));
    absl::string_view packed = info.inputs;
    while (packed.size() >= 4) {
      uint32_t n;
      std::memcpy(&n, packed.data(), sizeof(n));
      def->add_input(std::string(packed.substr(4, n)));
      packed.remove_prefix(4 + n);
    }
    std::string().swap(info.inputs);
  }
  return graph;
}

tfpb::OpLogProto TraceBuilder::TakeOpLog() {
  tfpb::OpLogProto op_log;
  // Call stacks and float ops.
  absl::flat_hash_map<std::string, int64_t> ids;
  auto intern = [&](const std::string& s) -> int64_t {
    auto it = ids.find(s);
    if (it != ids.end()) return it->second;
    const int64_t id = static_cast<int64_t>(ids.size()) + 1;
    ids.emplace(s, id);
    (*op_log.mutable_id_to_string())[id] = s;
    return id;
  };
  for (size_t i = 0; i < nodes_.size(); ++i) {
    NodeInfo& info = nodes_[i];
    auto f = flops_.find(static_cast<int32_t>(i));
    const int64_t runs = f == flops_.end() ? 0 : f->second.runs;
    if (info.code == nullptr && runs == 0) continue;
    tfpb::OpLogEntry* entry = op_log.add_log_entries();
    entry->set_name(info.name);
    if (runs > 0) {
      // tfprof multiplies the per-run float ops by the run count.
      entry->set_float_ops(f->second.sum / runs);
    }
    if (info.code != nullptr) {
      tfpb::CodeDef* code = entry->mutable_code_def();
      for (const Frame& frame : *info.code) {
        tfpb::CodeDef::Trace* t = code->add_traces();
        t->set_file_id(intern(frame.file));
        t->set_function_id(intern(frame.function));
        t->set_lineno(frame.lineno);
      }
      info.code.reset();
    }
  }
  flops_ = {};
  return op_log;
}

bool TraceBuilder::NextStep(int64_t* step, tfcore::RunMetadata* run_meta) {
  {
    // The previous step's messages go first.
    tfcore::RunMetadata empty;
    run_meta->Swap(&empty);
  }
  if (steps_.empty()) return false;
  *step = steps_.begin()->first;
  std::unique_ptr<StepData> data = std::move(steps_.begin()->second);
  steps_.erase(steps_.begin());
  tfcore::StepStats* stats = run_meta->mutable_step_stats();
  // Devices in the order of their first execution in the step.
  std::vector<int32_t> slot(devices_.size(), -1);
  for (uint32_t i = 0; i < data->execs.size(); ++i) {
    const Exec& e = data->execs[i];
    if (slot[e.device] < 0) {
      slot[e.device] = stats->dev_stats_size();
      stats->add_dev_stats()->set_device(devices_.Get(e.device));
    }
    tfcore::NodeExecStats* stat =
        stats->mutable_dev_stats(slot[e.device])->add_node_stats();
    auto details = data->details.find(i);
    if (details != data->details.end()) stat->Swap(details->second.get());
    stat->set_node_name(nodes_[e.node].name);
    stat->set_all_start_micros(shift_ != 0 ? SatAdd(e.start, shift_) : e.start);
    stat->set_op_start_rel_micros(0);
    stat->set_op_end_rel_micros(e.duration);
    stat->set_all_end_rel_micros(e.duration);
    if (shift_ != 0) {
      for (auto& mem : *stat->mutable_memory()) {
        for (auto& rec : *mem.mutable_allocation_records()) {
          rec.set_alloc_micros(SatAdd(rec.alloc_micros(), shift_));
        }
      }
    }
  }
  if (steps_.empty()) {
    // That was the last one: only the notes are left to give.
    std::deque<NodeInfo>().swap(nodes_);
    ops_ = StringTable();
    devices_ = StringTable();
    std::vector<int8_t>().swap(device_class_);
  }
  return true;
}

// --- PaddedBytes

PaddedBytes::PaddedBytes(PaddedBytes&& other) noexcept
    : data_(other.data_),
      size_(other.size_),
      capacity_(other.capacity_),
      discarded_(other.discarded_) {
  other.data_ = nullptr;
  other.size_ = other.capacity_ = other.discarded_ = 0;
}

PaddedBytes& PaddedBytes::operator=(PaddedBytes&& other) noexcept {
  if (this != &other) {
    Clear();
    data_ = other.data_;
    size_ = other.size_;
    capacity_ = other.capacity_;
    discarded_ = other.discarded_;
    other.data_ = nullptr;
    other.size_ = other.capacity_ = other.discarded_ = 0;
  }
  return *this;
}

PaddedBytes::~PaddedBytes() { Clear(); }

char* PaddedBytes::Reserve(size_t extra) {
  constexpr size_t kPadding = simdjson::SIMDJSON_PADDING;
  if (extra > std::numeric_limits<size_t>::max() / 2 - size_ - kPadding) {
    return nullptr;
  }
  const size_t needed = size_ + extra + kPadding;
  if (needed > capacity_) {
    // Geometric growth; pages never written are never resident.
    const size_t grown = std::max(needed, capacity_ + capacity_ / 2);
    char* p = static_cast<char*>(std::realloc(data_, grown));
    if (p == nullptr) return nullptr;
    data_ = p;
    capacity_ = grown;
  }
  return data_ + size_;
}

void PaddedBytes::Seal() {
  if (Reserve(0) != nullptr) {
    std::memset(data_ + size_, 0, simdjson::SIMDJSON_PADDING);
  }
}

void PaddedBytes::Clear() {
  std::free(data_);
  data_ = nullptr;
  size_ = capacity_ = discarded_ = 0;
}

void PaddedBytes::Discard(size_t offset) {
  // In steps of 8 MiB: a system call per step, not per event.
  constexpr size_t kStep = size_t{8} << 20;
  if (offset > size_ || offset < discarded_ + kStep) return;
  static const size_t kPage = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  // Whole pages inside the allocation only (its bookkeeping stays).
  const uintptr_t base = reinterpret_cast<uintptr_t>(data_);
  const uintptr_t from = (base + discarded_ + kPage - 1) / kPage * kPage;
  const uintptr_t to = (base + offset) / kPage * kPage;
  if (to > from) {
    madvise(reinterpret_cast<void*>(from), to - from, MADV_DONTNEED);
  }
  discarded_ = offset;
}

// --- JsonScalar (the DOM parser's conversions: get_int64() refuses
// unsigned and floating point values, get_double() takes any number)

std::optional<absl::string_view> JsonScalar::String() const {
  if (type != Type::kString) return std::nullopt;
  return str;
}

std::optional<double> JsonScalar::Number() const {
  switch (type) {
    case Type::kInt64:
      return static_cast<double>(i);
    case Type::kUint64:
      return static_cast<double>(u);
    case Type::kDouble:
      return d;
    default:
      return std::nullopt;
  }
}

std::optional<int64_t> JsonScalar::Int() const {
  if (type == Type::kInt64) return i;
  std::optional<double> v = Number();
  if (v.has_value() && std::isfinite(*v) && *v == std::floor(*v) &&
      std::fabs(*v) < 9.0e18) {
    return static_cast<int64_t>(*v);
  }
  return std::nullopt;
}

std::optional<std::string> JsonScalar::IdText() const {
  switch (type) {
    case Type::kString:
      return std::string(str);
    case Type::kInt64:
      return absl::StrCat(i);
    case Type::kUint64:
      return absl::StrCat(u);
    case Type::kDouble:
      return absl::StrCat(d);
    default:
      return std::nullopt;
  }
}

bool JsonScalar::Micros(int64_t* out) const {
  constexpr int64_t kLimit = int64_t{1} << 61;
  std::optional<double> v = Number();
  if (!v.has_value()) return false;
  std::optional<int64_t> rounded = RoundToInt64(*v);
  if (!rounded.has_value() || *rounded > kLimit || *rounded < -kLimit) {
    return false;
  }
  *out = *rounded;
  return true;
}

// --- JsonReader

JsonReader::JsonReader(PaddedBytes bytes) : bytes_(std::move(bytes)) {}

bool JsonReader::Start() {
  started_ = false;
  if (parser_ == nullptr) {
    parser_ = std::make_unique<simdjson::ondemand::parser>();
  }
  if (parser_
          ->iterate(bytes_.data(), bytes_.size(),
                    bytes_.size() + simdjson::SIMDJSON_PADDING)
          .get(doc_) != simdjson::SUCCESS) {
    return false;
  }
  started_ = true;
  return true;
}

void JsonReader::Close() {
  doc_ = simdjson::ondemand::document();
  parser_.reset();
  started_ = false;
  bytes_.Clear();
  scratch_.clear();
  scratch_used_ = 0;
}

bool JsonReader::Unescape(const char* raw, const char* limit,
                          absl::string_view* out) {
  if (raw >= limit) return false;
  const size_t n = static_cast<size_t>(limit - raw);
  const char* quote = static_cast<const char*>(std::memchr(raw, '"', n));
  if (quote == nullptr) return false;
  if (std::memchr(raw, '\\', static_cast<size_t>(quote - raw)) == nullptr) {
    // Nothing escaped (stage 1 has checked the characters themselves).
    *out = absl::string_view(raw, static_cast<size_t>(quote - raw));
    return true;
  }
  // The closing quote is the first one not escaped.
  const char* p = raw;
  while (p < limit && *p != '"') p += *p == '\\' ? 2 : 1;
  if (p >= limit) return false;
  const size_t length = static_cast<size_t>(p - raw);
  if (scratch_used_ == scratch_.size()) scratch_.emplace_back();
  std::string& buffer = scratch_[scratch_used_++];
  // The unescaped string is no longer than the raw one; simdjson writes in
  // blocks and needs its padding after it.
  buffer.resize(length + 2 * simdjson::SIMDJSON_PADDING);
  uint8_t* dst = reinterpret_cast<uint8_t*>(buffer.data());
  std::string_view unescaped;
  if (parser_
          ->unescape(simdjson::ondemand::raw_json_string(
                         reinterpret_cast<const uint8_t*>(raw)),
                     dst)
          .get(unescaped) != simdjson::SUCCESS) {
    return false;
  }
  *out = absl::string_view(unescaped.data(), unescaped.size());
  return true;
}

bool JsonReader::Key(simdjson::ondemand::field& field, absl::string_view* out) {
  const char* raw = field.key().raw();
  return Unescape(raw, bytes_.data() + bytes_.size(), out);
}

namespace {
// JSON numbers start with a minus sign or a digit.
bool StartsNumber(char c) { return c == '-' || (c >= '0' && c <= '9'); }
}  // namespace

bool JsonReader::String(Value& value, std::string_view token,
                        absl::string_view* out) {
  simdjson::ondemand::raw_json_string raw;
  return value.get_raw_json_string().get(raw) == simdjson::SUCCESS &&
         Unescape(raw.raw(), token.data() + token.size(), out);
}

bool JsonReader::Read(Value& value, JsonScalar* out) {
  const std::string_view token = value.raw_json_token();
  if (token.empty()) return false;
  if (token[0] == '"') {
    if (!String(value, token, &out->str)) return false;
    out->type = JsonScalar::Type::kString;
    return true;
  }
  if (!StartsNumber(token[0])) {
    out->type = JsonScalar::Type::kOther;
    return Skip(value);
  }
  simdjson::ondemand::number number;
  if (value.get_number().get(number) != simdjson::SUCCESS) return false;
  switch (number.get_number_type()) {
    case simdjson::ondemand::number_type::signed_integer:
      out->type = JsonScalar::Type::kInt64;
      out->i = number.get_int64();
      break;
    case simdjson::ondemand::number_type::unsigned_integer:
      out->type = JsonScalar::Type::kUint64;
      out->u = number.get_uint64();
      break;
    default:
      out->type = JsonScalar::Type::kDouble;
      out->d = number.get_double();
      break;
  }
  return true;
}

// Reads every value, as the DOM parser's second stage does: the same number
// and string parsing, the same structure checks; nesting as deep as the DOM
// parser's limit (1024) is left to the DOM parser.
bool JsonReader::Validate(Value& value) {
  const std::string_view token = value.raw_json_token();
  if (token.empty()) return false;
  switch (token[0]) {
    case '{':
      return ForEachField(
          value, [this](absl::string_view, Value& v) { return Validate(v); });
    case '[': {
      simdjson::ondemand::array array;
      if (value.get_array().get(array) != simdjson::SUCCESS) return false;
      const int depth = depth_;
      if (depth >= 1000) return false;
      for (auto element : array) {
        Value v;
        if (element.get(v) != simdjson::SUCCESS) return false;
        depth_ = depth + 1;
        if (!Validate(v)) return false;
      }
      depth_ = depth;
      return true;
    }
    case '"': {
      absl::string_view s;
      const size_t used = scratch_used_;
      const bool ok = String(value, token, &s);
      scratch_used_ = used;  // not kept
      return ok;
    }
    case 't':
    case 'f': {
      bool b;
      return value.get_bool().get(b) == simdjson::SUCCESS;
    }
    case 'n': {
      bool is_null = false;
      return value.is_null().get(is_null) == simdjson::SUCCESS && is_null;
    }
    default: {
      simdjson::ondemand::number number;
      return StartsNumber(token[0]) &&
             value.get_number().get(number) == simdjson::SUCCESS;
    }
  }
}

bool JsonReader::AtEnd() {
  const char* location = nullptr;
  return doc_.current_location().get(location) == simdjson::OUT_OF_BOUNDS;
}

absl::Status JsonReadError(const std::string& file) {
  return absl::InternalError(
      absl::StrCat(file,
                   ": the JSON reader failed on a document it had "
                   "accepted"));
}

bool IsIgnoredPhase(absl::string_view ph) {
  // Flow events (s/t/f), metadata (M) and clock sync (c) carry no time.
  return ph == "s" || ph == "t" || ph == "f" || ph == "M" || ph == "c";
}

namespace {

// What detection reads of one event.
struct ScanFields {
  JsonScalar ph, name, cat, pid;
  bool has_args = false;  // "args" present, of any type
  JsonScalar args_name, args_op;
};

// Reads (and when validating, checks) one element of the event array.
bool ReadScanFields(JsonReader* reader, JsonReader::Value& event,
                    ScanFields* f) {
  const std::string_view token = event.raw_json_token();
  if (token.empty()) return false;
  if (token[0] != '{') return reader->Skip(event);  // not an object: no fields
  bool seen_args = false;
  return reader->ForEachField(
      event, [&](absl::string_view key, JsonReader::Value& value) {
        JsonScalar* slot = nullptr;
        if (key == "ph") {
          slot = &f->ph;
        } else if (key == "name") {
          slot = &f->name;
        } else if (key == "cat") {
          slot = &f->cat;
        } else if (key == "pid") {
          slot = &f->pid;
        } else if (key == "args" && !seen_args) {
          seen_args = true;
          f->has_args = true;
          const std::string_view t = value.raw_json_token();
          if (t.empty()) return false;
          if (t[0] != '{') return reader->Skip(value);
          return reader->ForEachField(
              value, [&](absl::string_view k, JsonReader::Value& v) {
                JsonScalar* s = nullptr;
                if (k == "name") {
                  s = &f->args_name;
                } else if (k == "op") {
                  s = &f->args_op;
                }
                return reader->ReadFirst(v, s);
              });
        }
        return reader->ReadFirst(value, slot);
      });
}

bool IsKinetoCategory(absl::string_view cat) {
  static const char* const kKinetoCategories[] = {
      "cpu_op",          "Operator",
      "cuda_runtime",    "Runtime",
      "kernel",          "Kernel",
      "gpu_memcpy",      "gpu_memset",
      "Memcpy",          "Memset",
      "python_function", "cuda_driver",
      "user_annotation", "gpu_user_annotation"};
  for (const char* k : kKinetoCategories) {
    if (cat == k) return true;
  }
  return false;
}

// Detection on one event: Kineto categories or ProfilerStep ranges make a
// PyTorch trace; "<device> Compute"/"Tensors" processes or Op events with
// args.name/args.op a TensorFlow timeline (unless PyTorch's signs show up
// anywhere).
void Detect(const ScanFields& f, bool* kineto, bool* tf_timeline,
            JsonTraceScan* scan) {
  std::optional<absl::string_view> ph = f.ph.String();
  if (!ph.has_value()) return;
  std::optional<absl::string_view> name = f.name.String();
  if (*ph == "M") {
    if (name == "process_name" && f.has_args) {
      std::optional<absl::string_view> pname = f.args_name.String();
      if (pname.has_value() && (absl::EndsWith(*pname, " Compute") ||
                                absl::EndsWith(*pname, " Tensors"))) {
        *tf_timeline = true;
      }
      // TensorFlow timelines name their devices this way.
      std::optional<std::string> pid = f.pid.IdText();
      if (pid.has_value() && pname.has_value()) {
        scan->processes[*pid] = std::string(*pname);
      }
    }
    return;
  }
  if (*ph != "X" || *kineto) return;
  std::optional<absl::string_view> cat = f.cat.String();
  if (cat.has_value() && IsKinetoCategory(*cat)) {
    *kineto = true;
    return;
  }
  if (name.has_value() && absl::StartsWith(*name, "ProfilerStep#")) {
    *kineto = true;
    return;
  }
  if (cat == "Op" && f.has_args && f.args_op.String().has_value() &&
      f.args_name.String().has_value()) {
    *tf_timeline = true;
  }
}

// One pass over the whole document. False if On-Demand found it invalid or
// could not vouch for it.
bool ScanPass(JsonReader* reader, JsonTraceScan* scan) {
  simdjson::ondemand::document* doc = &reader->document();
  *scan = JsonTraceScan();
  const absl::string_view text = reader->bytes().view();
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first == absl::string_view::npos) return false;
  bool kineto = false, tf_timeline = false, schema_version = false;
  // Events are at depth 2 in a root array, 3 in a root object.
  auto scan_events = [&](simdjson::ondemand::array& events, int depth) -> bool {
    for (auto element : events) {
      JsonReader::Value event;
      if (element.get(event) != simdjson::SUCCESS) return false;
      reader->NewEvent();
      reader->set_depth(depth);
      ScanFields f;
      if (!ReadScanFields(reader, event, &f)) return false;
      Detect(f, &kineto, &tf_timeline, scan);
    }
    return true;
  };
  if (text[first] == '[') {
    simdjson::ondemand::array events;
    if (doc->get_array().get(events) != simdjson::SUCCESS) return false;
    scan->has_events = true;
    if (!scan_events(events, 2)) return false;
  } else {
    simdjson::ondemand::object root;
    if (doc->get_object().get(root) != simdjson::SUCCESS) return false;
    bool seen_events = false;
    for (auto f : root) {
      simdjson::ondemand::field field;
      if (std::move(f).get(field) != simdjson::SUCCESS) return false;
      absl::string_view key;
      if (!reader->Key(field, &key)) return false;
      JsonReader::Value& value = field.value();
      if (key == "schemaVersion") schema_version = true;
      if (key == "traceEvents" && !seen_events) {
        seen_events = true;
        const std::string_view t = value.raw_json_token();
        if (t.empty()) return false;
        if (t[0] == '[') {
          simdjson::ondemand::array events;
          if (value.get_array().get(events) != simdjson::SUCCESS) {
            return false;
          }
          scan->has_events = true;
          if (!scan_events(events, 3)) return false;
          continue;
        }
      }
      reader->set_depth(2);
      if (!reader->Skip(value)) return false;
    }
  }
  if (reader->validating() && !reader->AtEnd()) return false;
  if (scan->has_events) {
    if (schema_version || kineto) {
      scan->format = TraceFormat::kKineto;
    } else if (tf_timeline) {
      scan->format = TraceFormat::kTfTimeline;
    }
  }
  return true;
}

}  // namespace

simdjson::error_code ScanJsonTrace(JsonReader* reader, JsonTraceScan* scan) {
  reader->set_validating(true);
  if (reader->Start() && ScanPass(reader, scan)) return simdjson::SUCCESS;
  // Invalid, or beyond what the scan checks (nesting near the DOM parser's
  // limit): the DOM parser decides.
  {
    simdjson::dom::parser parser;
    simdjson::dom::element root;
    const simdjson::error_code err =
        parser.parse(reader->bytes().data(), reader->bytes().size(), false)
            .get(root);
    if (err != simdjson::SUCCESS) return err;
  }
  reader->set_validating(false);
  if (reader->Start() && ScanPass(reader, scan)) return simdjson::SUCCESS;
  return simdjson::UNEXPECTED_ERROR;
}

}  // namespace trace_internal

namespace {

using trace_internal::JsonReader;
using trace_internal::JsonTraceScan;
using trace_internal::PaddedBytes;
using trace_internal::TraceBuilder;

constexpr size_t kMaxDecompressedBytes = size_t{1} << 31;  // 2 GiB

bool IsGzip(absl::string_view data) {
  return data.size() >= 2 && static_cast<unsigned char>(data[0]) == 0x1f &&
         static_cast<unsigned char>(data[1]) == 0x8b;
}

absl::Status OutOfMemory(const std::string& name) {
  return absl::ResourceExhaustedError(
      absl::StrCat(name, ": out of memory reading the trace"));
}

// Decompresses gzip data (several members allowed) straight into padded
// memory.
absl::StatusOr<PaddedBytes> Decompress(const std::string& name,
                                       absl::string_view data) {
  z_stream zs;
  std::memset(&zs, 0, sizeof(zs));
  if (inflateInit2(&zs, 15 + 16) != Z_OK) {
    return absl::InternalError(absl::StrCat(name, ": zlib init failed"));
  }
  PaddedBytes out;
  constexpr size_t kChunk = 1 << 16;
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = static_cast<uInt>(
      std::min<size_t>(data.size(), std::numeric_limits<uInt>::max()));
  size_t consumed_total = 0;
  for (;;) {
    char* buf = out.Reserve(kChunk);
    if (buf == nullptr) {
      inflateEnd(&zs);
      return OutOfMemory(name);
    }
    zs.next_out = reinterpret_cast<Bytef*>(buf);
    zs.avail_out = kChunk;
    const int rc = inflate(&zs, Z_NO_FLUSH);
    out.Commit(kChunk - zs.avail_out);
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
  out.Seal();
  return out;
}

// Gzip data decompressed (and checked not to be gzip again); anything else
// as it is.
absl::StatusOr<PaddedBytes> Gunzip(const std::string& name,
                                   absl::string_view data) {
  absl::StatusOr<PaddedBytes> d = Decompress(name, data);
  if (!d.ok()) return d.status();
  if (IsGzip(d->view())) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": gzip inside gzip; not a trace"));
  }
  return d;
}

absl::StatusOr<PaddedBytes> FromContents(const std::string& name,
                                         absl::string_view contents) {
  if (IsGzip(contents)) return Gunzip(name, contents);
  PaddedBytes bytes;
  char* p = bytes.Reserve(contents.size());
  if (p == nullptr) return OutOfMemory(name);
  if (!contents.empty()) std::memcpy(p, contents.data(), contents.size());
  bytes.Commit(contents.size());
  bytes.Seal();
  return bytes;
}

// Reads a file straight into padded memory (errors as ReadFileToString's).
absl::StatusOr<PaddedBytes> ReadTraceFile(const std::string& path) {
  size_t size = 0;
  absl::StatusOr<std::FILE*> opened = OpenInputFile(path, &size);
  if (!opened.ok()) return opened.status();
  std::FILE* f = *opened;
  PaddedBytes bytes;
  // The whole of a regular file in one piece (plus one byte to see the end).
  size_t chunk = size > 0 ? size + 1 : size_t{1} << 20;
  for (;;) {
    char* p = bytes.Reserve(chunk);
    if (p == nullptr) {
      std::fclose(f);
      return OutOfMemory(path);
    }
    const size_t n = std::fread(p, 1, chunk, f);
    bytes.Commit(n);
    if (n < chunk) break;
    chunk = size_t{1} << 20;
  }
  const bool failed = std::ferror(f) != 0;
  std::fclose(f);
  if (failed) {
    return absl::DataLossError(absl::StrCat(path, ": read error"));
  }
  bytes.Seal();
  return bytes;
}

absl::StatusOr<PaddedBytes> FromFile(const std::string& path) {
  absl::StatusOr<PaddedBytes> raw = ReadTraceFile(path);
  if (!raw.ok()) return raw.status();
  if (IsGzip(raw->view())) return Gunzip(path, raw->view());
  return raw;
}

bool LooksLikeJson(absl::string_view data) {
  for (char c : data) {
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
    return c == '{' || c == '[';
  }
  return false;
}

// 1-based line and column of a byte offset.
std::string Where(absl::string_view data, size_t offset) {
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

// Where a document stops being valid JSON (the DOM parser reports what, not
// where): the reader reads it again from the start, checking every value as
// the first pass does, and says where it stopped.
std::string LocateJsonError(JsonReader* reader) {
  reader->set_validating(true);
  if (!reader->Start()) return "";
  JsonReader::Value root;
  bool failed = reader->document().get_value().get(root) != simdjson::SUCCESS;
  if (!failed) {
    reader->set_depth(1);
    failed = !reader->Skip(root);
  }
  const char* loc = nullptr;
  if (reader->document().current_location().get(loc) != simdjson::SUCCESS ||
      loc == nullptr) {
    return failed ? "" : "at the end of the document";
  }
  const absl::string_view data = reader->bytes().view();
  if (loc < data.data() || loc > data.data() + data.size()) return "";
  return "near " + Where(data, static_cast<size_t>(loc - data.data()));
}

absl::Status ImportOne(const std::string& name, PaddedBytes data,
                       int64_t file_index, std::optional<TraceFormat>* format,
                       TraceBuilder* builder) {
  if (data.size() == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        name,
        ": empty file; expected a trace (TensorFlow timeline JSON, "
        "PyTorch profiler JSON or XSpace .xplane.pb)"));
  }

  if (!LooksLikeJson(data.view())) {
    if (format->has_value() && **format != TraceFormat::kXSpace) {
      absl::StatusOr<TraceFormat> f =
          DetectTraceFormat(name, std::string(data.view()));
      if (!f.ok()) return f.status();
      return absl::InvalidArgumentError(absl::StrCat(
          name, ": is an ", TraceFormatName(*f),
          " trace but earlier files are ", TraceFormatName(**format),
          "; all traces must have one format"));
    }
    *format = TraceFormat::kXSpace;
    // Checks that it is an XSpace.
    return trace_internal::ImportXSpace(data.view(), name, file_index, builder);
  }

  // The padded bytes and the On-Demand parser's index are all the reader
  // holds; both are freed as soon as the file is converted.
  JsonReader reader(std::move(data));
  JsonTraceScan scan;
  const simdjson::error_code err =
      trace_internal::ScanJsonTrace(&reader, &scan);
  if (err != simdjson::SUCCESS) {
    const std::string where = LocateJsonError(&reader);
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": malformed JSON: ", simdjson::error_message(err),
                     where.empty() ? "" : " ", where));
  }
  if (!scan.format.has_value()) {
    return absl::InvalidArgumentError(absl::StrCat(
        name,
        scan.has_events
            ? ": a Chrome trace, but neither a TensorFlow timeline (no "
              "\"<device> Compute\" processes, no Op events with "
              "args.name/args.op) nor a PyTorch profiler trace"
            : ": JSON without a traceEvents array",
        trace_internal::kExpectedFormats));
  }
  const TraceFormat f = *scan.format;
  if (format->has_value() && **format != f) {
    return absl::InvalidArgumentError(absl::StrCat(
        name, ": is a ", TraceFormatName(f), " trace but earlier files are ",
        TraceFormatName(**format), "; all traces must have one format"));
  }
  *format = f;
  if (f == TraceFormat::kTfTimeline) {
    return trace_internal::ImportTfTimeline(&reader, scan, name, file_index,
                                            builder);
  }
  return trace_internal::ImportKineto(&reader, name, file_index, builder);
}

}  // namespace

const std::string& JsonKernelName() {
  return simdjson::get_active_implementation()->name();
}

absl::StatusOr<TraceFormat> DetectTraceFormat(const std::string& name,
                                              const std::string& contents) {
  if (IsGzip(contents)) {
    absl::StatusOr<PaddedBytes> data = Gunzip(name, contents);
    if (!data.ok()) return data.status();
    return DetectTraceFormat(name, std::string(data->view()));
  }
  const char* const kExpected = trace_internal::kExpectedFormats;
  if (LooksLikeJson(contents)) {
    absl::StatusOr<PaddedBytes> bytes = FromContents(name, contents);
    if (!bytes.ok()) return bytes.status();
    JsonReader reader(std::move(*bytes));
    JsonTraceScan scan;
    const simdjson::error_code err =
        trace_internal::ScanJsonTrace(&reader, &scan);
    if (err != simdjson::SUCCESS) {
      return absl::InvalidArgumentError(absl::StrCat(
          name, ": malformed JSON: ", simdjson::error_message(err), kExpected));
    }
    if (!scan.format.has_value()) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, ": JSON of an unknown kind", kExpected));
    }
    return *scan.format;
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

// Imports the files one at a time; `read(i)` returns the bytes of file i
// (gzip undone).
template <typename ReadFn>
absl::StatusOr<std::unique_ptr<TraceBuilder>> ImportAll(
    const std::vector<std::string>& names, ReadFn read) {
  if (names.empty()) {
    return absl::InvalidArgumentError("no trace files given");
  }
  auto builder = std::make_unique<TraceBuilder>();
  std::optional<TraceFormat> format;
  for (size_t i = 0; i < names.size(); ++i) {
    absl::StatusOr<PaddedBytes> data = read(i);
    if (!data.ok()) return data.status();
    absl::Status s = ImportOne(names[i], std::move(*data),
                               static_cast<int64_t>(i), &format, builder.get());
    if (!s.ok()) return s;
  }
  if (builder->num_execs() == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        names.size() == 1 ? names[0] : "the trace files",
        ": no executions found (no timed events that map to nodes)"));
  }
  builder->Seal(*format);
  return builder;
}

ImportedTrace Collect(StreamedTrace trace) {
  ImportedTrace out;
  out.format = trace.format();
  out.notes = trace.notes();
  out.graph = trace.TakeGraph();
  out.op_log = trace.TakeOpLog();
  int64_t step;
  tfcore::RunMetadata run_meta;
  while (trace.NextStep(&step, &run_meta)) {
    out.steps.emplace_back(step, tfcore::RunMetadata());
    out.steps.back().second.Swap(&run_meta);
  }
  return out;
}

}  // namespace

StreamedTrace::StreamedTrace(std::unique_ptr<TraceBuilder> b)
    : builder_(std::move(b)) {}
StreamedTrace::StreamedTrace(StreamedTrace&&) noexcept = default;
StreamedTrace& StreamedTrace::operator=(StreamedTrace&&) noexcept = default;
StreamedTrace::~StreamedTrace() = default;

TraceFormat StreamedTrace::format() const { return builder_->format(); }

const std::vector<std::string>& StreamedTrace::notes() const {
  return builder_->notes();
}

tfcore::GraphDef StreamedTrace::TakeGraph() { return builder_->TakeGraph(); }

tfpb::OpLogProto StreamedTrace::TakeOpLog() { return builder_->TakeOpLog(); }

bool StreamedTrace::NextStep(int64_t* step, tfcore::RunMetadata* run_meta) {
  return builder_->NextStep(step, run_meta);
}

absl::StatusOr<StreamedTrace> ImportTraceStreamed(
    const std::vector<std::string>& paths) {
  absl::StatusOr<std::unique_ptr<TraceBuilder>> builder =
      ImportAll(paths, [&paths](size_t i) { return FromFile(paths[i]); });
  if (!builder.ok()) return builder.status();
  return StreamedTrace(std::move(*builder));
}

absl::StatusOr<ImportedTrace> ImportTraceContents(
    const std::vector<std::string>& names,
    const std::vector<std::string>& contents) {
  if (names.size() != contents.size()) {
    return absl::InvalidArgumentError(
        "trace names and contents differ in size");
  }
  absl::StatusOr<std::unique_ptr<TraceBuilder>> builder = ImportAll(
      names, [&](size_t i) { return FromContents(names[i], contents[i]); });
  if (!builder.ok()) return builder.status();
  return Collect(StreamedTrace(std::move(*builder)));
}

absl::StatusOr<ImportedTrace> ImportTrace(
    const std::vector<std::string>& paths) {
  absl::StatusOr<StreamedTrace> trace = ImportTraceStreamed(paths);
  if (!trace.ok()) return trace.status();
  return Collect(std::move(*trace));
}

}  // namespace tfprof
