#include "profiler/base/big_array.h"

#include <cstdint>
#include <new>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace tfprof {
namespace {

constexpr size_t kHugePage = kBigArrayBytes;  // (an array's first page)

size_t WholePages(size_t bytes) {
  return (bytes + kHugePage - 1) / kHugePage * kHugePage;
}

}  // namespace

void* AllocateBigArray(size_t bytes) {
#if defined(__linux__)
  if (bytes >= kBigArrayBytes && bytes <= SIZE_MAX / 2) {
    const size_t size = WholePages(bytes);
    // A page more than asked, so that an aligned run of `size` lies inside.
    void* got = mmap(nullptr, size + kHugePage, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (got == MAP_FAILED) throw std::bad_alloc();
    const uintptr_t start = reinterpret_cast<uintptr_t>(got);
    const uintptr_t aligned = (start + kHugePage - 1) / kHugePage * kHugePage;
    if (aligned > start) munmap(got, aligned - start);
    munmap(reinterpret_cast<void*>(aligned + size),
           kHugePage - (aligned - start));
    void* p = reinterpret_cast<void*>(aligned);
    (void)madvise(p, size, MADV_HUGEPAGE);  // (a hint: fine if refused)
    return p;
  }
#endif
  return ::operator new(bytes);
}

void FreeBigArray(void* p, size_t bytes) {
  if (p == nullptr) return;
#if defined(__linux__)
  if (bytes >= kBigArrayBytes && bytes <= SIZE_MAX / 2) {
    munmap(p, WholePages(bytes));
    return;
  }
#endif
  ::operator delete(p);
}

}  // namespace tfprof
