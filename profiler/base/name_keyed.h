// Hash sets of small keys (ids, indices, pointers) that stand for names:
// hashed and compared by those names, and found by a name without making a
// key (heterogeneous lookup). For indexes that must not copy the names.
#ifndef TFPROF_PROFILER_BASE_NAME_KEYED_H_
#define TFPROF_PROFILER_BASE_NAME_KEYED_H_

#include <cstddef>
#include <string_view>

#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"

namespace tfprof {

// `NameOf` gives a key's name as a std::string_view (`name_of(key)`); it
// may hold where the names live, copied into the set's hasher and
// comparer. NameKeyed<K, N>::Make(name_of) makes an empty set.
template <typename Key, typename NameOf>
struct NameKeyed {
  struct Hash {
    using is_transparent = void;
    NameOf name_of;
    size_t operator()(std::string_view name) const {
      return absl::Hash<std::string_view>()(name);
    }
    size_t operator()(const Key& key) const { return (*this)(name_of(key)); }
  };
  struct Eq {
    using is_transparent = void;
    NameOf name_of;
    std::string_view Name(std::string_view name) const { return name; }
    std::string_view Name(const Key& key) const { return name_of(key); }
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const {
      return Name(a) == Name(b);
    }
  };
  using Set = absl::flat_hash_set<Key, Hash, Eq>;

  static Set Make(NameOf name_of = NameOf()) {
    return Set(0, Hash{name_of}, Eq{name_of});
  }
};

}  // namespace tfprof

#endif  // TFPROF_PROFILER_BASE_NAME_KEYED_H_
