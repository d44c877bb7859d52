// Deep trees (name scopes thousands of levels deep, long dataflow chains)
// are walked recursively; this runs such work on a thread with a large
// stack so that it cannot overflow the caller's.
#ifndef TFPROF_PROFILER_BASE_LARGE_STACK_H_
#define TFPROF_PROFILER_BASE_LARGE_STACK_H_

#include <cstddef>
#include <functional>

namespace tfprof {

// Runs `fn` to completion on a thread with a `bytes` stack (the memory is
// reserved, and only used pages are committed). Runs it inline if the
// caller is already on such a stack (so guarded walks may nest without a
// thread each) or if no such thread can be made.
void RunWithLargeStack(const std::function<void()>& fn,
                       size_t bytes = size_t{512} << 20);

}  // namespace tfprof

#endif  // TFPROF_PROFILER_BASE_LARGE_STACK_H_
