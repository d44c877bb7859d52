#include "profiler/model/string_table.h"

namespace tfprof {

uint32_t StringTable::Id(std::string_view s) {
  auto it = ids_.find(s);
  if (it != ids_.end()) return it->second;
  owned_.push_back(std::make_unique<std::string>(s));
  const std::string* p = owned_.back().get();
  const uint32_t id = static_cast<uint32_t>(strings_.size());
  strings_.push_back(p);
  ids_.emplace(std::string_view(*p), id);
  return id;
}

}  // namespace tfprof
