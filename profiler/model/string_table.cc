#include "profiler/model/string_table.h"

#include <cstring>

namespace tfprof {

namespace {

// Whether `s` is `known` (often the very same bytes: a view of it).
bool Same(const std::string& known, std::string_view s) {
  // (An empty view may have no data at all: memcmp must not see it.)
  return known.size() == s.size() &&
         (s.empty() || known.data() == s.data() ||
          std::memcmp(known.data(), s.data(), s.size()) == 0);
}

}  // namespace

StringTable::StringTable(StringTable&& other) noexcept
    : store_(std::move(other.store_)),
      ids_(std::move(other.ids_)),
      recent_(other.recent_),
      next_recent_(other.next_recent_) {
  other.Clear();
}

StringTable& StringTable::operator=(StringTable&& other) noexcept {
  if (this != &other) {
    // The index first: its hasher points into the store it replaces.
    ids_ = std::move(other.ids_);
    store_ = std::move(other.store_);
    recent_ = other.recent_;
    next_recent_ = other.next_recent_;
    other.Clear();
  }
  return *this;
}

void StringTable::Clear() {
  ids_ = Index();
  store_.reset();
  recent_ = {kNone, kNone, kNone, kNone};
  next_recent_ = 0;
}

uint32_t StringTable::Id(std::string_view s) {
  if (store_ == nullptr) {
    store_ = std::make_unique<Store>();
    ids_ = Keyed::Make(StringOf{store_.get()});
  }
  for (const uint32_t r : recent_) {
    if (r == kNone) break;
    if (Same(Get(r), s)) return r;
  }
  uint32_t id;
  auto it = ids_.find(s);
  if (it != ids_.end()) {
    id = *it;
  } else {
    id = static_cast<uint32_t>(store_->strings.size());
    store_->strings.emplace_back(s);
    ids_.insert(id);
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
      k.str = &table_->Get(k.id);
    }
    seen_.emplace(std::string_view(*k.str), k);
  }
  recent_[next_recent_++ % recent_.size()] = k;
  return k;
}

}  // namespace tfprof
