/* CHECK(cond, fmt, ...) for the C and C++ tests: reports a failed condition with its location
 * and counts it in `failures` (atomically: checks may run on several threads). */
#ifndef TF_SHM_TEST_CHECK_H
#define TF_SHM_TEST_CHECK_H
#include <stdio.h>

static int failures;
#define CHECK(cond, ...)                                                         \
  do {                                                                           \
    if (!(cond)) {                                                               \
      __atomic_fetch_add(&failures, 1, __ATOMIC_RELAXED);                        \
      fprintf(stderr, "%s:%d: CHECK(%s) failed: ", __FILE__, __LINE__, #cond);   \
      fprintf(stderr, __VA_ARGS__);                                              \
      fputc('\n', stderr);                                                       \
    }                                                                            \
  } while (0)
#define CHECK_FAILURES() __atomic_load_n(&failures, __ATOMIC_RELAXED)

#endif
