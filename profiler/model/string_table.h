// Interned strings for the model and its importers.
#ifndef TFPROF_PROFILER_MODEL_STRING_TABLE_H_
#define TFPROF_PROFILER_MODEL_STRING_TABLE_H_

#include <array>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "profiler/base/name_keyed.h"

namespace tfprof {

// Interned strings: each distinct string stored once, with a stable address
// and a small id. The strings live in a deque (no allocation per string
// beyond its characters) and the index holds only their ids, so a table of
// many names (every node of a TF timeline) costs little besides the text.
class StringTable {
 public:
  StringTable() = default;
  // A moved-from table is empty and usable. (Nothing is allocated before
  // the first string.)
  StringTable(StringTable&& other) noexcept;
  StringTable& operator=(StringTable&& other) noexcept;
  StringTable(const StringTable&) = delete;
  StringTable& operator=(const StringTable&) = delete;

  uint32_t Id(std::string_view s);
  const std::string* Intern(std::string_view s) { return &Get(Id(s)); }
  const std::string& Get(uint32_t id) const { return store_->strings[id]; }
  size_t size() const { return store_ == nullptr ? 0 : store_->strings.size(); }

 private:
  // Heap-held, so that the index's hasher keeps pointing at it when the
  // table moves.
  struct Store {
    std::deque<std::string> strings;
  };
  // The index: ids hashed and compared by their strings, found by string.
  struct StringOf {
    const Store* store = nullptr;
    std::string_view operator()(uint32_t id) const {
      return store->strings[id];
    }
  };
  using Keyed = NameKeyed<uint32_t, StringOf>;
  using Index = Keyed::Set;
  // The empty state, without a store (made by the first Id()).
  void Clear();

  std::unique_ptr<Store> store_;
  Index ids_;
  // The last few ids asked for, tried before hashing: a profile repeats a
  // handful of device and stream names for every execution.
  static constexpr uint32_t kNone = ~uint32_t{0};
  std::array<uint32_t, 4> recent_ = {kNone, kNone, kNone, kNone};
  uint32_t next_recent_ = 0;
};

// One thread's way into a StringTable that several threads fill at once:
// the strings it has met before are answered from its own map, and only a
// new one takes the table's lock (a profile names a handful of devices and
// op types, again and again).
class SharedInterner {
 public:
  // `table` and `mu` outlive the interner; every thread that interns into
  // `table` meanwhile goes through an interner with the same `mu`.
  SharedInterner(StringTable* table, std::mutex* mu) : table_(table), mu_(mu) {}

  uint32_t Id(std::string_view s) { return Find(s).id; }
  const std::string* Intern(std::string_view s) { return Find(s).str; }
  // Both at once: the string's id and the table's copy.
  struct Known {
    uint32_t id = 0;
    const std::string* str = nullptr;
  };
  Known Find(std::string_view s);

 private:
  StringTable* table_;
  std::mutex* mu_;
  // Keys view the table's own strings.
  absl::flat_hash_map<std::string_view, Known> seen_;
  std::array<Known, 4> recent_ = {};
  uint32_t next_recent_ = 0;
};

}  // namespace tfprof

#endif  // TFPROF_PROFILER_MODEL_STRING_TABLE_H_
