// Reading JSON traces with simdjson's On-Demand parser (see json_reader.h).
#include "profiler/importers/common/json_reader.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>
#include <string_view>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "profiler/importers/common/trace_builder.h"

namespace tfprof {
namespace trace_internal {

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

void PaddedBytes::ZeroPadding() {
  if (Reserve(0) != nullptr) {
    std::memset(data_ + size_, 0, simdjson::SIMDJSON_PADDING);
  }
}

void PaddedBytes::BlankByteOrderMark() {
  if (size_ >= 3 && std::memcmp(data_, "\xEF\xBB\xBF", 3) == 0) {
    std::memset(data_, ' ', 3);
  }
}

void PaddedBytes::Clear() {
  std::free(data_);
  data_ = nullptr;
  size_ = capacity_ = discarded_ = 0;
}

void PaddedBytes::Discard(size_t offset) {
  // In steps of 1 MiB: a system call per step, not per event (and little
  // of a small file left behind).
  constexpr size_t kStep = size_t{1} << 20;
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
      // An integer beyond 64 bits keeps its digits (ids that differ in the
      // last digits stay apart).
      return str.empty() ? absl::StrCat(d) : std::string(str);
    default:
      return std::nullopt;
  }
}

namespace {

// A number scaled and rounded, within +-2^61.
bool ScaledTime(const JsonScalar& s, double scale, int64_t* out) {
  constexpr int64_t kLimit = int64_t{1} << 61;
  std::optional<double> v = s.Number();
  if (!v.has_value()) return false;
  std::optional<int64_t> rounded = RoundToInt64(*v * scale);
  if (!rounded.has_value() || *rounded > kLimit || *rounded < -kLimit) {
    return false;
  }
  *out = *rounded;
  return true;
}

}  // namespace

bool JsonScalar::Micros(int64_t* out) const {
  return ScaledTime(*this, 1.0, out);
}

bool JsonScalar::Nanos(int64_t* out) const {
  constexpr int64_t kLimit = int64_t{1} << 61;
  if (type == Type::kInt64) {
    if (i > kLimit / 1000 || i < -kLimit / 1000) return false;
    *out = i * 1000;  // exact: no double in between
    return true;
  }
  // Whole microseconds and the fraction apart, so that a large timestamp
  // keeps its nanoseconds (the product would not fit a double's mantissa).
  std::optional<double> v = Number();
  if (!v.has_value() || !std::isfinite(*v)) return false;
  const double whole = std::floor(*v);
  if (whole > static_cast<double>(kLimit / 1000) ||
      whole < -static_cast<double>(kLimit / 1000)) {
    return false;
  }
  *out = static_cast<int64_t>(whole) * 1000 +
         static_cast<int64_t>(std::llround((*v - whole) * 1000.0));
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
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Whether a number token has neither a fraction nor an exponent.
bool IsIntegerLiteral(std::string_view token) {
  size_t i = !token.empty() && token[0] == '-' ? 1 : 0;
  while (i < token.size() && IsDigit(token[i])) ++i;
  return i == token.size() ||
         (token[i] != '.' && token[i] != 'e' && token[i] != 'E');
}

// An integer literal beyond 64 bits ("18446744073709551616"): valid JSON
// (Python's json writes such hashes and ids) that simdjson refuses. Its
// value as a double; nullopt for any other token. (`token` runs to the next
// structural character.)
std::optional<double> BigInteger(std::string_view token) {
  const size_t first = !token.empty() && token[0] == '-' ? 1 : 0;
  size_t end = first;
  while (end < token.size() && IsDigit(token[end])) ++end;
  // Up to 18 digits fit; a leading zero, a fraction or an exponent is
  // simdjson's to read (or refuse).
  if (end - first < 19 || token[first] == '0') return std::nullopt;
  if (end < token.size() && std::string_view(" \t\r\n,]}").find(token[end]) ==
                                std::string_view::npos) {
    return std::nullopt;
  }
  const absl::string_view literal(token.data(), end);
  int64_t s;
  uint64_t u;
  double d;
  if (absl::SimpleAtoi(literal, &s) ||
      (first == 0 && absl::SimpleAtoi(literal, &u)) ||
      !absl::SimpleAtod(literal, &d)) {
    return std::nullopt;
  }
  return d;
}
}  // namespace

bool JsonReader::String(Value& value, std::string_view token,
                        absl::string_view* out) {
  simdjson::ondemand::raw_json_string raw;
  return value.get_raw_json_string().get(raw) == simdjson::SUCCESS &&
         Unescape(raw.raw(), token.data() + token.size(), out);
}

bool JsonReader::ReadInts(Value& value, JsonInts* out) {
  *out = JsonInts();
  const std::string_view token = value.raw_json_token();
  if (token.empty() || token[0] != '[') return Skip(value);
  simdjson::ondemand::array array;
  if (value.get_array().get(array) != simdjson::SUCCESS) return false;
  bool all_ints = true;
  for (auto element : array) {
    Value v;
    if (element.get(v) != simdjson::SUCCESS) return false;
    JsonScalar scalar;
    if (!Read(v, &scalar)) return false;
    std::optional<int64_t> i = scalar.Int();
    if (!i.has_value() || out->size == JsonInts::kMax) {
      all_ints = false;
      continue;
    }
    out->values[out->size++] = *i;
  }
  if (!all_ints) *out = JsonInts();
  return true;
}

bool JsonReader::ReadIntLists(Value& value, JsonIntLists* out) {
  out->clear();
  const std::string_view token = value.raw_json_token();
  if (token.empty() || token[0] != '[') return Skip(value);
  simdjson::ondemand::array array;
  if (value.get_array().get(array) != simdjson::SUCCESS) return false;
  for (auto element : array) {
    Value v;
    if (element.get(v) != simdjson::SUCCESS) return false;
    const size_t start = out->values.size();
    out->begin.push_back(start);
    const std::string_view t = v.raw_json_token();
    bool simple = !t.empty() && t[0] == '[';
    if (!simple) {
      if (!Skip(v)) return false;
    } else {
      simdjson::ondemand::array inner;
      if (v.get_array().get(inner) != simdjson::SUCCESS) return false;
      for (auto x : inner) {
        Value xv;
        if (x.get(xv) != simdjson::SUCCESS) return false;
        JsonScalar scalar;
        const std::string_view xt = xv.raw_json_token();
        if (!xt.empty() && (xt[0] == '[' || xt[0] == '{')) {
          simple = false;
          if (!Skip(xv)) return false;
          continue;
        }
        if (!Read(xv, &scalar)) return false;
        std::optional<int64_t> i = scalar.Int();
        if (!i.has_value()) {
          simple = false;
          continue;
        }
        out->values.push_back(*i);
      }
    }
    if (!simple) out->values.resize(start);
    out->simple.push_back(simple);
  }
  out->begin.push_back(out->values.size());
  return true;
}

bool JsonReader::ReadStrings(Value& value, JsonStrings* out) {
  out->clear();
  const std::string_view token = value.raw_json_token();
  if (token.empty() || token[0] != '[') return Skip(value);
  simdjson::ondemand::array array;
  if (value.get_array().get(array) != simdjson::SUCCESS) return false;
  for (auto element : array) {
    Value v;
    if (element.get(v) != simdjson::SUCCESS) return false;
    out->begin.push_back(out->chars.size());
    JsonScalar scalar;
    if (!Read(v, &scalar)) return false;
    if (scalar.type == JsonScalar::Type::kString) {
      out->chars.append(scalar.str.data(), scalar.str.size());
    }
  }
  out->begin.push_back(out->chars.size());
  return true;
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
  out->str = {};
  if (const std::optional<double> big = BigInteger(token)) {
    out->type = JsonScalar::Type::kDouble;  // left for On-Demand to skip
    out->d = *big;
    const size_t digits = token.find_first_of(" \t\r\n,]}");
    out->str = absl::string_view(token.data(), std::min(digits, token.size()));
    return true;
  }
  // simdjson 3.0's get_number() reads a fraction or exponent of 19 or more
  // significant digits ("1695835542514261.000") as 0; get_double() does not.
  if (!IsIntegerLiteral(token)) {
    out->type = JsonScalar::Type::kDouble;
    return value.get_double().get(out->d) == simdjson::SUCCESS;
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
      if (BigInteger(token).has_value()) return true;
      if (StartsNumber(token[0]) && !IsIntegerLiteral(token)) {
        double d;
        return value.get_double().get(d) == simdjson::SUCCESS;
      }
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
struct ScanFields : TraceEventFields {
  JsonScalar args_name, args_op;
};

// Reads (and when validating, checks) one element of the event array.
bool ReadScanFields(JsonReader* reader, JsonReader::Value& event,
                    ScanFields* f) {
  return ReadTraceEvent(reader, event, f,
                        [&](absl::string_view key, JsonReader::Value& value) {
                          JsonScalar* slot = key == "name" ? &f->args_name
                                             : key == "op" ? &f->args_op
                                                           : nullptr;
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

// Detection on one event: Kineto categories, ProfilerStep ranges or the
// legacy autograd profiler's "CPU functions" process make a PyTorch trace;
// "<device> Compute"/"Tensors" processes or Op events with args.name/args.op a
// TensorFlow timeline (unless PyTorch's signs show up anywhere).
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
  if (*ph != "X") return;
  ++scan->complete_events;
  if (*kineto) return;
  std::optional<absl::string_view> cat = f.cat.String();
  if (cat.has_value() && IsKinetoCategory(*cat)) {
    *kineto = true;
    return;
  }
  if (name.has_value() && absl::StartsWith(*name, "ProfilerStep#")) {
    *kineto = true;
    return;
  }
  // PyTorch's legacy autograd profiler (torch.autograd.profiler without
  // Kineto, e.g. Debian's 1.13) exports a bare array of X events on its
  // "CPU functions" process, without categories or ProfilerStep ranges.
  if (!cat.has_value() && f.pid.String() == "CPU functions") {
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

JsonScalar* TraceEventFields::Slot(absl::string_view key) {
  switch (key.size()) {
    case 2:
      if (key == "ph") return &ph;
      if (key == "ts") return &ts;
      break;
    case 3:
      if (key == "cat") return &cat;
      if (key == "pid") return &pid;
      if (key == "tid") return &tid;
      if (key == "dur") return &dur;
      break;
    case 4:
      if (key == "name") return &name;
      break;
  }
  return nullptr;
}

}  // namespace trace_internal
}  // namespace tfprof
