// A small strict JSON parser for checking the files tfprof writes.
#ifndef TFPROF_TESTS_JSON_PARSE_H_
#define TFPROF_TESTS_JSON_PARSE_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace tfprof {
namespace testing {

struct JsonValue {
  enum Kind { kNull, kBool, kNumber, kString, kArray, kObject } kind = kNull;
  bool boolean = false;
  double number = 0;
  std::string string;
  std::vector<JsonValue> array;
  std::map<std::string, JsonValue> object;

  bool Has(const std::string& key) const { return object.count(key) != 0; }
  const JsonValue& at(const std::string& key) const { return object.at(key); }
};

// Parses a whole document; false (with `error` set) if it is not valid JSON.
bool ParseJson(const std::string& text, JsonValue* out, std::string* error);
// The same for a file, gunzipped first when its name ends in ".gz"; false
// (with `error` set) if it cannot be read or parsed.
bool ParseJsonFile(const std::string& path, JsonValue* out, std::string* error);

}  // namespace testing
}  // namespace tfprof

#endif  // TFPROF_TESTS_JSON_PARSE_H_
