#include "profiler/base/json_writer.h"

#include <charconv>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace tfprof {

Json& Json::operator[](const std::string& key) {
  if (kind_ == kNull) kind_ = kObject;
  auto it = object_.find(key);
  if (it == object_.end()) {
    key_order_.push_back(key);
    it = object_.emplace(key, Json()).first;
  }
  return it->second;
}

void Json::Append(Json v) {
  if (kind_ == kNull) kind_ = kArray;
  array_.push_back(std::move(v));
}

size_t Json::size() const {
  return kind_ == kObject ? object_.size()
                          : (kind_ == kArray ? array_.size() : 0);
}

std::string NumberText(double v) {
  if (!std::isfinite(v)) return "null";
  char buf[64];
  const std::to_chars_result r = std::to_chars(buf, buf + sizeof(buf), v);
  return std::string(buf, r.ptr);
}

std::string JsonQuote(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          absl::StrAppendFormat(&out, "\\u%04X", c);
        } else {
          out.push_back(static_cast<char>(c));
        }
    }
  }
  out += "\"";
  return out;
}

void Json::WriteTo(std::string* out) const {
  switch (kind_) {
    case kNull:
      out->append("null");
      return;
    case kInt:
      absl::StrAppend(out, int_);
      return;
    case kDouble:
      // The shortest text that reads back as the same double ("0.1", not
      // "0.10000000000000001"); NaN and infinities, which JSON lacks, null.
      out->append(NumberText(double_));
      return;
    case kBool:
      out->append(int_ ? "true" : "false");
      return;
    case kString:
      out->append(JsonQuote(string_));
      return;
    case kObject: {
      out->push_back('{');
      bool first = true;
      for (const auto& [k, v] : object_) {
        if (!first) out->push_back(',');
        first = false;
        out->append(JsonQuote(k));
        out->push_back(':');
        v.WriteTo(out);
      }
      out->push_back('}');
      return;
    }
    case kArray: {
      out->push_back('[');
      for (size_t i = 0; i < array_.size(); ++i) {
        if (i > 0) out->push_back(',');
        array_[i].WriteTo(out);
      }
      out->push_back(']');
      return;
    }
  }
}

void Json::WritePrettyTo(std::string* out, int indent) const {
  const std::string pad(static_cast<size_t>(indent + 4), ' ');
  const std::string end_pad(static_cast<size_t>(indent), ' ');
  if (kind_ == kObject) {
    if (object_.empty()) {
      out->append("{}");
      return;
    }
    out->append("{\n");
    for (size_t i = 0; i < key_order_.size(); ++i) {
      out->append(pad);
      out->append(JsonQuote(key_order_[i]));
      out->append(": ");
      object_.at(key_order_[i]).WritePrettyTo(out, indent + 4);
      out->append(i + 1 < key_order_.size() ? ",\n" : "\n");
    }
    out->append(end_pad);
    out->push_back('}');
    return;
  }
  if (kind_ == kArray) {
    if (array_.empty()) {
      out->append("[]");
      return;
    }
    out->append("[\n");
    for (size_t i = 0; i < array_.size(); ++i) {
      out->append(pad);
      array_[i].WritePrettyTo(out, indent + 4);
      out->append(i + 1 < array_.size() ? ",\n" : "\n");
    }
    out->append(end_pad);
    out->push_back(']');
    return;
  }
  WriteTo(out);
}

std::string Json::WritePretty() const {
  std::string out;
  WritePrettyTo(&out, 0);
  return out;
}

Json TraceEvent(const std::string& ph, const std::string& cat,
                const std::string& name, int64_t pid, int64_t tid, int64_t ts) {
  Json e = Json::Object();
  e["ph"] = ph;
  e["cat"] = cat;
  e["name"] = name;
  e["pid"] = pid;
  e["tid"] = tid;
  e["ts"] = ts;
  return e;
}

Json TraceProcessName(const std::string& name, int64_t pid) {
  Json e = Json::Object();
  e["name"] = "process_name";
  e["ph"] = "M";
  e["pid"] = pid;
  Json args = Json::Object();
  args["name"] = name;
  e["args"] = std::move(args);
  return e;
}

std::string Json::Write() const {
  std::string out;
  WriteTo(&out);
  return out;
}

std::string CsvField(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

}  // namespace tfprof
