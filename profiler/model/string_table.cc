#include "profiler/model/string_table.h"

#include <cstring>

namespace tfprof {

namespace {

// Whether `s` is `known` (often the very same bytes: a view of it).
bool Same(const std::string& known, std::string_view s) {
  return known.size() == s.size() &&
         (known.data() == s.data() ||
          std::memcmp(known.data(), s.data(), s.size()) == 0);
}

}  // namespace

uint32_t StringTable::Id(std::string_view s) {
  for (const uint32_t r : recent_) {
    if (r == kNone) break;
    if (Same(*strings_[r], s)) return r;
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

SharedInterner::Known SharedInterner::Find(std::string_view s) {
  for (const Known& r : recent_) {
    if (r.str == nullptr) break;
    if (Same(*r.str, s)) return r;
  }
  Known k;
  auto it = seen_.find(s);
  if (it != seen_.end()) {
    k = it->second;
  } else {
    {
      std::lock_guard<std::mutex> lock(*mu_);
      k.id = table_->Id(s);
      k.str = table_->strings_[k.id];
    }
    seen_.emplace(std::string_view(*k.str), k);
  }
  recent_[next_recent_++ % recent_.size()] = k;
  return k;
}

}  // namespace tfprof
