// A small JSON value for writing trace files. Objects remember insertion
// order; Write() sorts keys and is compact (the layout of tfprof's
// timelines), WritePretty() keeps insertion order and indents (the layout of
// TensorFlow's Python timelines).
#ifndef TFPROF_PROFILER_BASE_JSON_WRITER_H_
#define TFPROF_PROFILER_BASE_JSON_WRITER_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace tfprof {

class Json {
 public:
  Json() : kind_(kNull) {}
  Json(int64_t v) : kind_(kInt), int_(v) {}       // NOLINT: implicit on purpose
  Json(int v) : kind_(kInt), int_(v) {}           // NOLINT
  Json(double v) : kind_(kDouble), double_(v) {}  // NOLINT
  Json(const char* v) : kind_(kString), string_(v) {}             // NOLINT
  Json(std::string v) : kind_(kString), string_(std::move(v)) {}  // NOLINT
  Json(bool v) : kind_(kBool), int_(v ? 1 : 0) {}                 // NOLINT

  static Json Object() {
    Json j;
    j.kind_ = kObject;
    return j;
  }
  static Json Array() {
    Json j;
    j.kind_ = kArray;
    return j;
  }

  // Objects: set or get a member (turns a null into an object).
  Json& operator[](const std::string& key);
  // Arrays: append (turns a null into an array).
  void Append(Json v);
  size_t size() const;

  // Compact text, keys in sorted order, no trailing newline.
  std::string Write() const;
  void WriteTo(std::string* out) const;
  void WritePrettyTo(std::string* out, int indent) const;
  // Indented text (4 spaces), keys in insertion order, like Python's
  // json.dumps(indent=4).
  std::string WritePretty() const;

 private:
  enum Kind { kNull, kInt, kDouble, kString, kBool, kObject, kArray };
  Kind kind_;
  int64_t int_ = 0;
  double double_ = 0;
  std::string string_;
  std::map<std::string, Json> object_;
  std::vector<std::string> key_order_;  // insertion order of object_ keys
  std::vector<Json> array_;
};

// A number for JSON or CSV: the shortest text that reads back as exactly
// `v` ("40395922.8", "0.1", "3.2733718e+13"); "null" when not finite.
std::string NumberText(double v);

// JSON string quoting (control characters, quotes and backslashes escaped).
std::string JsonQuote(const std::string& s);
// A CSV field: as is, or quoted (quotes doubled) when it holds a comma, a
// quote or a line break.
std::string CsvField(const std::string& s);

// Chrome Trace Format events: {"ph", "cat", "name", "pid", "tid", "ts"}.
Json TraceEvent(const std::string& ph, const std::string& cat,
                const std::string& name, int64_t pid, int64_t tid, int64_t ts);
// The metadata event naming process `pid`.
Json TraceProcessName(const std::string& name, int64_t pid);

}  // namespace tfprof

#endif  // TFPROF_PROFILER_BASE_JSON_WRITER_H_
