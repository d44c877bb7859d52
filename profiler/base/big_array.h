// Arrays of a record per node of a large model (a view's nodes, a query's
// totals): their memory comes in whole 2 MiB pages, aligned and advised as
// huge pages where the system has them (Linux), so that first touching it
// takes a fault per 2 MiB, not per 4 KiB; smaller arrays come from the heap.
#ifndef TFPROF_PROFILER_BASE_BIG_ARRAY_H_
#define TFPROF_PROFILER_BASE_BIG_ARRAY_H_

#include <cstddef>
#include <vector>

namespace tfprof {

// Arrays of at least this many bytes get pages of their own.
inline constexpr size_t kBigArrayBytes = size_t{2} << 20;

// `bytes` of memory (never null: std::bad_alloc when there is none), and
// its release; `bytes` must be the same in both.
void* AllocateBigArray(size_t bytes);
void FreeBigArray(void* p, size_t bytes);

template <typename T>
struct BigArrayAllocator {
  using value_type = T;
  BigArrayAllocator() = default;
  template <typename U>
  BigArrayAllocator(const BigArrayAllocator<U>&) {}  // NOLINT: rebinding
  static_assert(alignof(T) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__,
                "pages and operator new align to 16 bytes at most here");
  T* allocate(size_t n) {
    return static_cast<T*>(AllocateBigArray(n * sizeof(T)));
  }
  void deallocate(T* p, size_t n) { FreeBigArray(p, n * sizeof(T)); }
  friend bool operator==(const BigArrayAllocator&, const BigArrayAllocator&) {
    return true;
  }
  friend bool operator!=(const BigArrayAllocator&, const BigArrayAllocator&) {
    return false;
  }
};

template <typename T>
using BigVector = std::vector<T, BigArrayAllocator<T>>;

}  // namespace tfprof

#endif  // TFPROF_PROFILER_BASE_BIG_ARRAY_H_
