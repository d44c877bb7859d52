#include "tests/json_parse.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "profiler/base/gzip.h"

namespace tfprof {
namespace testing {
namespace {

class Parser {
 public:
  explicit Parser(const std::string& s) : s_(s) {}

  bool Document(JsonValue* v, std::string* error) {
    if (!Value(v, 0)) {
      *error = "bad JSON at offset " + std::to_string(pos_);
      return false;
    }
    Space();
    if (pos_ != s_.size()) {
      *error = "trailing data at offset " + std::to_string(pos_);
      return false;
    }
    return true;
  }

 private:
  void Space() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\n' ||
                                s_[pos_] == '\t' || s_[pos_] == '\r')) {
      ++pos_;
    }
  }
  bool Eat(char c) {
    Space();
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool Literal(const char* word) {
    const std::string w(word);
    if (s_.compare(pos_, w.size(), w) != 0) return false;
    pos_ += w.size();
    return true;
  }
  bool String(std::string* out) {
    if (!Eat('"')) return false;
    while (pos_ < s_.size()) {
      char c = s_[pos_++];
      if (c == '"') return true;
      if (static_cast<unsigned char>(c) < 0x20) return false;
      if (c != '\\') {
        out->push_back(c);
        continue;
      }
      if (pos_ >= s_.size()) return false;
      c = s_[pos_++];
      switch (c) {
        case '"':
        case '\\':
        case '/':
          out->push_back(c);
          break;
        case 'b':
          out->push_back('\b');
          break;
        case 'f':
          out->push_back('\f');
          break;
        case 'n':
          out->push_back('\n');
          break;
        case 'r':
          out->push_back('\r');
          break;
        case 't':
          out->push_back('\t');
          break;
        case 'u': {
          if (pos_ + 4 > s_.size()) return false;
          const long code =
              std::strtol(s_.substr(pos_, 4).c_str(), nullptr, 16);
          pos_ += 4;
          if (code < 0x80) out->push_back(static_cast<char>(code));
          break;
        }
        default:
          return false;
      }
    }
    return false;
  }
  bool Value(JsonValue* v, int depth) {
    if (depth > 200) return false;
    Space();
    if (pos_ >= s_.size()) return false;
    const char c = s_[pos_];
    if (c == '{') {
      ++pos_;
      v->kind = JsonValue::kObject;
      if (Eat('}')) return true;
      do {
        std::string key;
        JsonValue child;
        if (!String(&key) || !Eat(':') || !Value(&child, depth + 1)) {
          return false;
        }
        v->object[key] = std::move(child);
      } while (Eat(','));
      return Eat('}');
    }
    if (c == '[') {
      ++pos_;
      v->kind = JsonValue::kArray;
      if (Eat(']')) return true;
      do {
        JsonValue child;
        if (!Value(&child, depth + 1)) return false;
        v->array.push_back(std::move(child));
      } while (Eat(','));
      return Eat(']');
    }
    if (c == '"') {
      v->kind = JsonValue::kString;
      return String(&v->string);
    }
    if (Literal("true") || Literal("false")) {
      v->kind = JsonValue::kBool;
      v->boolean = s_[pos_ - 1] == 'e' && s_[pos_ - 2] == 'u';
      return true;
    }
    if (Literal("null")) return true;
    const char* begin = s_.c_str() + pos_;
    char* end = nullptr;
    v->number = std::strtod(begin, &end);
    if (end == begin) return false;
    v->kind = JsonValue::kNumber;
    pos_ += static_cast<size_t>(end - begin);
    return true;
  }

  const std::string& s_;
  size_t pos_ = 0;
};

}  // namespace

bool ParseJson(const std::string& text, JsonValue* out, std::string* error) {
  return Parser(text).Document(out, error);
}

bool ParseJsonFile(const std::string& path, JsonValue* out,
                   std::string* error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *error = "cannot read " + path;
    return false;
  }
  std::stringstream bytes;
  bytes << in.rdbuf();
  std::string text = bytes.str();
  if (path.size() > 3 && path.compare(path.size() - 3, 3, ".gz") == 0) {
    absl::StatusOr<std::string> plain = Gunzip(text);
    if (!plain.ok()) {
      *error = std::string(plain.status().message());
      return false;
    }
    text = std::move(*plain);
  }
  return ParseJson(text, out, error);
}

}  // namespace testing
}  // namespace tfprof
