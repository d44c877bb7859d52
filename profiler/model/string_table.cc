#include "profiler/model/string_table.h"

#include <cstring>

namespace tfprof {

uint32_t StringTable::Id(std::string_view s) {
  for (const uint32_t r : recent_) {
    if (r == kNone) break;
    const std::string& known = *strings_[r];
    if (known.size() == s.size() &&
        (known.data() == s.data() ||
         std::memcmp(known.data(), s.data(), s.size()) == 0)) {
      return r;
    }
  }
  uint32_t id;
  auto it = ids_.find(s);
  if (it != ids_.end()) {
    id = it->second;
  } else {
    owned_.push_back(std::make_unique<std::string>(s));
    const std::string* p = owned_.back().get();
    id = static_cast<uint32_t>(strings_.size());
    strings_.push_back(p);
    ids_.emplace(std::string_view(*p), id);
  }
  recent_[next_recent_++ % recent_.size()] = id;
  return id;
}

}  // namespace tfprof
