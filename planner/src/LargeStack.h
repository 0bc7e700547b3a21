//===- LargeStack.h - Deep recursion without a depth limit ------*- C++ -*-===//
//
// The exact search recurses once per placed item, so a section of 10^5
// items needs far more than a default 8 MiB stack. Large searches run on a
// thread whose stack grows with the item count (untouched pages cost no
// memory), so no problem size is cut off to protect the stack.
//
//===----------------------------------------------------------------------===//
#ifndef BUNDLEFIT_PLANNER_SRC_LARGESTACK_H
#define BUNDLEFIT_PLANNER_SRC_LARGESTACK_H

#include <cstddef>
#include <utility>

#if __has_include(<pthread.h>)
#include <pthread.h>
#define BUNDLEFIT_PLANNER_HAS_PTHREAD 1
#endif

namespace bundlefit::planner::detail {

/// Stack bytes a search over `items` items may need: generous per level.
inline size_t searchStackBytes(size_t items) { return (size_t(1) << 20) + items * 2048; }

/// Runs f() (returning R) on a stack of searchStackBytes(items); on the
/// caller's own stack when that is surely enough or threads are unavailable.
template <typename F> auto runOnLargeStack(size_t items, F f) -> decltype(f()) {
  using R = decltype(f());
#ifdef BUNDLEFIT_PLANNER_HAS_PTHREAD
  if (items > 1000) {
    struct Call {
      F *f;
      R result;
      static void *run(void *self) {
        Call *call = static_cast<Call *>(self);
        call->result = (*call->f)();
        return nullptr;
      }
    } call{&f, R()};
    pthread_attr_t attr;
    pthread_t thread;
    if (pthread_attr_init(&attr) == 0) {
      bool started = pthread_attr_setstacksize(&attr, searchStackBytes(items)) == 0 &&
                     pthread_create(&thread, &attr, &Call::run, &call) == 0;
      pthread_attr_destroy(&attr);
      if (started) {
        pthread_join(thread, nullptr);
        return call.result;
      }
    }
  }
#endif
  return f();
}

} // namespace bundlefit::planner::detail

#endif // BUNDLEFIT_PLANNER_SRC_LARGESTACK_H
