// Reading JSON traces (TensorFlow timelines, PyTorch profiler traces):
// the padded bytes, the reader over simdjson's On-Demand parser, and the
// first pass that validates a document and detects its format. Not a public
// API.
#ifndef TFPROF_PROFILER_IMPORTERS_COMMON_JSON_READER_H_
#define TFPROF_PROFILER_IMPORTERS_COMMON_JSON_READER_H_

#include <simdjson.h>

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "profiler/importers/common/trace_format.h"

namespace tfprof {
namespace trace_internal {

// --- JSON reading (simdjson On-Demand).
//
// A JSON trace is read with simdjson's On-Demand API: besides the file's bytes
// only the parser's index of structural characters is in memory (no DOM
// tape, no copy of every string). The importers iterate over the events a
// bounded number of times and keep what they need in their own records.
//
// The first pass (ScanJsonTrace) validates the whole document exactly as
// simdjson's DOM parser would (every value is read once) and detects the
// format; a document it cannot vouch for goes to the DOM parser, whose error
// is the one reported, so errors and accepted inputs are those of a DOM
// parse. Later passes only read what they use and skip the rest.

// The bytes of a trace followed by simdjson's padding (zeroed). Grown with
// realloc (which remaps a large buffer rather than copying it).
class PaddedBytes {
 public:
  PaddedBytes() = default;
  PaddedBytes(PaddedBytes&& other) noexcept;
  PaddedBytes& operator=(PaddedBytes&& other) noexcept;
  PaddedBytes(const PaddedBytes&) = delete;
  PaddedBytes& operator=(const PaddedBytes&) = delete;
  ~PaddedBytes();

  // Room for `extra` more bytes after size() (plus the padding); returns
  // where they go, or nullptr if memory is exhausted.
  char* Reserve(size_t extra);
  // Counts `n` bytes written at Reserve()'s pointer.
  void Commit(size_t n) { size_ += n; }
  // Zeroes the padding after the bytes; call when done writing.
  void ZeroPadding();
  // A UTF-8 byte order mark at the start (which JSON does not allow, but
  // Windows editors write) becomes three spaces.
  void BlankByteOrderMark();
  // Releases the memory.
  void Clear();
  // Gives the whole pages before `offset` back to the system; they read as
  // zeros afterwards. For a last pass that never looks back.
  void Discard(size_t offset);

  const char* data() const { return data_; }
  size_t size() const { return size_; }
  absl::string_view view() const { return absl::string_view(data_, size_); }

 private:
  char* data_ = nullptr;
  size_t size_ = 0;
  size_t capacity_ = 0;   // allocated bytes, padding included
  size_t discarded_ = 0;  // bytes from data_ given back by Discard()
};

// A scalar read from a JSON value, typed as the DOM parser types it.
struct JsonScalar {
  enum class Type : uint8_t {
    kAbsent,  // no such field
    kString,
    kInt64,
    kUint64,  // above INT64_MAX
    kDouble,
    kOther,  // true, false, null, an object or an array
  };
  Type type = Type::kAbsent;
  // kString (valid until the reader's next event); for a kDouble that was
  // an integer beyond 64 bits, its digits.
  absl::string_view str;
  int64_t i = 0;   // kInt64
  uint64_t u = 0;  // kUint64
  double d = 0;    // kDouble

  bool present() const { return type != Type::kAbsent; }
  // The string, if a string.
  std::optional<absl::string_view> String() const;
  // A number (integer or floating point) as double.
  std::optional<double> Number() const;
  // An integer; floating point values are accepted when integral.
  std::optional<int64_t> Int() const;
  // A number or string rendered as text (for ids that are either).
  std::optional<std::string> IdText() const;
  // A time ("ts", "dur") in whole microseconds, rounded; false if missing,
  // not a number, or beyond +-2^61 (so a start plus a duration cannot
  // overflow).
  bool Micros(int64_t* out) const;
  // The same time in whole nanoseconds (the value times 1000, rounded).
  bool Nanos(int64_t* out) const;
};

// A short array of integers read from a JSON value (launch dimensions).
struct JsonInts {
  static constexpr int kMax = 3;
  int64_t values[kMax] = {};
  int size = 0;  // 0: absent, or not an array of at most kMax integers
};

// An array of arrays of integers read from a JSON value ("Input Dims":
// [[64, 3, 224, 224], [], ...]), kept flat so that reading one per event
// reuses the memory of the last. List i is values[begin[i], begin[i + 1]);
// simple[i] is false where element i was not an array of integers (then its
// list is empty).
struct JsonIntLists {
  std::vector<int64_t> values;
  std::vector<size_t> begin;  // size() + 1 entries once read
  std::vector<bool> simple;

  size_t size() const { return simple.size(); }
  void clear() {
    values.clear();
    begin.clear();
    simple.clear();
  }
};

// An array of strings read from a JSON value ("Input type", "Concrete
// Inputs"), kept flat likewise; elements that are not strings read as "".
struct JsonStrings {
  std::string chars;
  std::vector<size_t> begin;  // size() + 1 entries once read

  size_t size() const { return begin.empty() ? 0 : begin.size() - 1; }
  absl::string_view at(size_t i) const {
    return absl::string_view(chars).substr(begin[i], begin[i + 1] - begin[i]);
  }
  void clear() {
    chars.clear();
    begin.clear();
  }
};

// Reads one JSON trace document (see above). Methods returning bool return
// false on a JSON error; the document is then done with (ScanJsonTrace()
// gets the error from the DOM parser).
class JsonReader {
 public:
  using Value = simdjson::ondemand::value;

  explicit JsonReader(PaddedBytes bytes);
  JsonReader(const JsonReader&) = delete;
  JsonReader& operator=(const JsonReader&) = delete;

  const PaddedBytes& bytes() const { return bytes_; }
  // Whether every value is checked (the first pass) or only what is read.
  bool validating() const { return validate_; }
  void set_validating(bool validate) { validate_ = validate; }

  // Runs stage 1 (the structural index) and starts the document.
  bool Start();
  simdjson::ondemand::document& document() { return doc_; }
  // The nesting depth of the value about to be read (the root is 1).
  void set_depth(int depth) { depth_ = depth; }

  // Calls fn(Value&) for each element of the trace event array (the root
  // array, or the first "traceEvents" field of the root object), in order,
  // from the start of the document; fn returns false to stop with an error.
  // False if there is no such array. With `last_pass`, the bytes before the
  // current event are given back to the system as the pass goes (nothing
  // may keep pointers into them, and the document cannot be read again).
  template <typename Fn>
  bool ForEachEvent(Fn&& fn, bool last_pass = false) {
    return ForEachEvent(fn, last_pass,
                        [](absl::string_view, Value&) { return true; });
  }
  // The same, calling header(key, Value&) first for each field of the root
  // object before "traceEvents" (a trace's metadata); header reads or skips
  // the value and returns false to stop with an error.
  template <typename Fn, typename HeaderFn>
  bool ForEachEvent(Fn&& fn, bool last_pass, HeaderFn&& header);
  // Calls fn(Value&) for each element of an array; false on a JSON error or
  // when `array` is not an array.
  template <typename Fn>
  bool ForEachElement(Value& array, Fn&& fn);
  // Calls fn(key, Value&) for each field of an object, in order, duplicates
  // included (the DOM parser's at_key() finds the first). fn consumes the
  // value with Read(), ForEachField() or Skip().
  template <typename Fn>
  bool ForEachField(Value& object, Fn&& fn);
  // Reads a value: strings and numbers as such, anything else as kOther
  // (checked when validating).
  bool Read(Value& value, JsonScalar* out);
  // Passes over a value: checks it when validating, else leaves it for
  // On-Demand to skip.
  bool Skip(Value& value) { return !validate_ || Validate(value); }
  // Reads a field's value into `slot`, or skips it when there is no slot or
  // the slot is filled already (of duplicate keys the first one counts).
  bool ReadFirst(Value& value, JsonScalar* slot) {
    if (slot == nullptr || slot->present()) return Skip(value);
    return Read(value, slot);
  }
  // An array of at most JsonInts::kMax integers (e.g. "[864, 1, 1]"); false
  // on a JSON error. Anything else (not an array, longer, other elements)
  // leaves *out empty.
  bool ReadInts(Value& value, JsonInts* out);
  // An array of arrays of integers, or of strings (anything else leaves
  // *out empty); false on a JSON error.
  bool ReadIntLists(Value& value, JsonIntLists* out);
  bool ReadStrings(Value& value, JsonStrings* out);
  // Whether a value is an object (without consuming it).
  static bool IsObject(Value& value) {
    const std::string_view token = value.raw_json_token();
    return !token.empty() && token[0] == '{';
  }
  static bool IsArray(Value& value) {
    const std::string_view token = value.raw_json_token();
    return !token.empty() && token[0] == '[';
  }
  // The unescaped key of a field.
  bool Key(simdjson::ondemand::field& field, absl::string_view* out);
  // Whether nothing follows the root value (after reading all of it).
  bool AtEnd();
  // Drops the strings unescaped so far (call per event).
  void NewEvent() { scratch_used_ = 0; }
  // Frees the bytes and the parser's index.
  void Close();

 private:
  bool Validate(Value& value);
  // The unescaped text of a string value whose raw token is `token`.
  bool String(Value& value, std::string_view token, absl::string_view* out);
  // The unescaped string whose raw text starts at `raw` (just after the
  // opening quote) and ends before `limit`.
  bool Unescape(const char* raw, const char* limit, absl::string_view* out);

  PaddedBytes bytes_;
  std::unique_ptr<simdjson::ondemand::parser> parser_;
  simdjson::ondemand::document doc_;
  bool started_ = false;
  bool validate_ = true;
  int depth_ = 0;
  // Unescaped strings (stable addresses), reused from event to event.
  std::deque<std::string> scratch_;
  size_t scratch_used_ = 0;
};

// The fields every Chrome trace event may have, as the importers read them:
// the first occurrence of each key, as a DOM parser's at_key() finds it.
struct TraceEventFields {
  JsonScalar ph, name, cat, pid, tid, ts, dur;
  bool has_args = false;  // "args" present, of any type

  JsonScalar* Slot(absl::string_view key);
  void ClearEventFields() { *this = TraceEventFields(); }
};

// Reads one event: its common fields into `*fields`, and each member of its
// first "args" (when that is an object) through on_arg(key, value), which
// reads or skips the value. `*fields` is not cleared first.
template <typename OnArg>
bool ReadTraceEvent(JsonReader* reader, JsonReader::Value& event,
                    TraceEventFields* fields, OnArg&& on_arg) {
  if (!JsonReader::IsObject(event)) return reader->Skip(event);  // no fields
  return reader->ForEachField(
      event, [&](absl::string_view key, JsonReader::Value& value) {
        if (key != "args") return reader->ReadFirst(value, fields->Slot(key));
        if (fields->has_args) return reader->Skip(value);
        fields->has_args = true;
        if (!JsonReader::IsObject(value)) return reader->Skip(value);
        return reader->ForEachField(value, on_arg);
      });
}

// What the first pass over a JSON trace found.
struct JsonTraceScan {
  // The root is an array, or its first "traceEvents" field is.
  bool has_events = false;
  // nullopt: neither a TensorFlow timeline nor a PyTorch trace.
  std::optional<TraceFormat> format;
  // TensorFlow timelines: pid (as text) -> process_name, the last one given.
  absl::flat_hash_map<std::string, std::string> processes;
  // Events of phase "X" (complete events): room to reserve for records.
  int64_t complete_events = 0;
};

// Validates the document (as the DOM parser would) and detects its format.
// Returns the DOM parser's error for a document it would reject.
simdjson::error_code ScanJsonTrace(JsonReader* reader, JsonTraceScan* scan);

// Trace-event phases that the importers skip without comment (flow arrows,
// metadata, sample/clock-sync records).
bool IsIgnoredPhase(absl::string_view ph);

// An error for JSON that On-Demand could not read although the scan
// accepted it (not expected to happen).
absl::Status JsonReadError(const std::string& file);

// --- JsonReader templates

template <typename Fn, typename HeaderFn>
bool JsonReader::ForEachEvent(Fn&& fn, bool last_pass, HeaderFn&& header) {
  if (!started_) return false;
  doc_.rewind();
  const char* p = bytes_.data();
  const char* end = p + bytes_.size();
  while (p < end && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')) ++p;
  if (p == end) return false;
  simdjson::ondemand::array events;
  if (*p == '[') {
    if (doc_.get_array().get(events) != simdjson::SUCCESS) return false;
    depth_ = 1;
  } else {
    simdjson::ondemand::object root;
    if (doc_.get_object().get(root) != simdjson::SUCCESS) return false;
    depth_ = 1;
    bool found = false;
    for (auto f : root) {
      simdjson::ondemand::field field;
      if (std::move(f).get(field) != simdjson::SUCCESS) return false;
      absl::string_view key;
      if (!Key(field, &key)) return false;
      if (key != "traceEvents") {
        depth_ = 2;
        if (!header(key, field.value())) return false;
        continue;
      }
      Value& value = field.value();
      if (value.get_array().get(events) != simdjson::SUCCESS) return false;
      found = true;
      break;
    }
    if (!found) return false;
    depth_ = 2;
  }
  const int events_depth = depth_;
  for (auto element : events) {
    Value value;
    if (element.get(value) != simdjson::SUCCESS) return false;
    depth_ = events_depth + 1;
    NewEvent();
    if (last_pass) {
      // On-Demand only reads on from the current value.
      bytes_.Discard(
          static_cast<size_t>(value.raw_json_token().data() - bytes_.data()));
    }
    if (!fn(value)) return false;
  }
  return true;
}

template <typename Fn>
bool JsonReader::ForEachElement(Value& array, Fn&& fn) {
  const std::string_view token = array.raw_json_token();
  if (token.empty() || token[0] != '[') return false;
  simdjson::ondemand::array arr;
  if (array.get_array().get(arr) != simdjson::SUCCESS) return false;
  const int depth = depth_;
  for (auto element : arr) {
    Value value;
    if (element.get(value) != simdjson::SUCCESS) return false;
    depth_ = depth + 1;
    if (!fn(value)) return false;
  }
  depth_ = depth;
  return true;
}

template <typename Fn>
bool JsonReader::ForEachField(Value& object, Fn&& fn) {
  simdjson::ondemand::object obj;
  if (object.get_object().get(obj) != simdjson::SUCCESS) return false;
  const int depth = depth_;
  if (validate_ && depth >= 1000) return false;  // the DOM parser decides
  for (auto f : obj) {
    simdjson::ondemand::field field;
    if (std::move(f).get(field) != simdjson::SUCCESS) return false;
    absl::string_view key;
    if (!Key(field, &key)) return false;
    depth_ = depth + 1;
    if (!fn(key, field.value())) return false;
  }
  depth_ = depth;
  return true;
}

}  // namespace trace_internal
}  // namespace tfprof

#endif  // TFPROF_PROFILER_IMPORTERS_COMMON_JSON_READER_H_
