#include "profiler/base/large_stack.h"

#include <pthread.h>

namespace tfprof {
namespace {

void* Trampoline(void* arg) {
  (*static_cast<const std::function<void()>*>(arg))();
  return nullptr;
}

}  // namespace

void RunWithLargeStack(const std::function<void()>& fn, size_t bytes) {
  pthread_attr_t attr;
  if (pthread_attr_init(&attr) != 0) {
    fn();
    return;
  }
  pthread_t thread;
  const bool started =
      pthread_attr_setstacksize(&attr, bytes) == 0 &&
      pthread_create(&thread, &attr, Trampoline,
                     const_cast<std::function<void()>*>(&fn)) == 0;
  pthread_attr_destroy(&attr);
  if (!started) {
    fn();
    return;
  }
  pthread_join(thread, nullptr);
}

}  // namespace tfprof
