#include "profiler/base/large_stack.h"

#include <pthread.h>

namespace tfprof {
namespace {

// The size of the large stack this thread runs on (0: an ordinary thread).
thread_local size_t large_stack_bytes = 0;

struct Call {
  const std::function<void()>* fn;
  size_t bytes;
};

void* Trampoline(void* arg) {
  const Call* call = static_cast<const Call*>(arg);
  large_stack_bytes = call->bytes;
  (*call->fn)();
  return nullptr;
}

}  // namespace

void RunWithLargeStack(const std::function<void()>& fn, size_t bytes) {
  // Already on a stack this large (a guarded walk that calls another): no
  // second thread.
  if (large_stack_bytes >= bytes) {
    fn();
    return;
  }
  pthread_attr_t attr;
  if (pthread_attr_init(&attr) != 0) {
    fn();
    return;
  }
  Call call{&fn, bytes};
  pthread_t thread;
  const bool started = pthread_attr_setstacksize(&attr, bytes) == 0 &&
                       pthread_create(&thread, &attr, Trampoline, &call) == 0;
  pthread_attr_destroy(&attr);
  if (!started) {
    fn();
    return;
  }
  pthread_join(thread, nullptr);
}

}  // namespace tfprof
