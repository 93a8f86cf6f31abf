// ThreadSanitizer's annotations for a lock it cannot see into (InlineLock.swift). No logic here.
//
// The standard library's `Mutex` on Linux hands a contended lock over inside the kernel
// (FUTEX_LOCK_PI / FUTEX_UNLOCK_PI), so ThreadSanitizer sees no release and acquire between
// the two threads and reports every access the lock guards as a race. The two calls below
// tell it where the lock is taken and given back. The runtime defines them only in a
// `--sanitize=thread` build; everywhere else the weak references are null, and each call is
// a test and a branch not taken.
#ifndef MOTION_SANITIZER_HOOKS_H
#define MOTION_SANITIZER_HOOKS_H

extern void __tsan_acquire(void *address) __attribute__((weak));
extern void __tsan_release(void *address) __attribute__((weak));

static inline void motion_lock_acquired(void *address) {
    if (__tsan_acquire) __tsan_acquire(address);
}

static inline void motion_lock_releasing(void *address) {
    if (__tsan_release) __tsan_release(address);
}

#endif
