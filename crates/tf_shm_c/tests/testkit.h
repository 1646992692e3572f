/* Test-only: crates/tf_shm_c/testkit (an arena owner, and the Rust engine's reference answers). */
#ifndef TF_SHM_TESTKIT_H
#define TF_SHM_TESTKIT_H
#include <stddef.h>
#include <stdint.h>
#ifdef __cplusplus
extern "C" {
#endif
typedef struct TestOwner TestOwner;
TestOwner *tf_shm_testkit_serve(const char *runtime_dir, const char *name, int64_t cache_time_ns);
int tf_shm_testkit_set(TestOwner *owner, const char *parent, const char *child, int64_t stamp_ns,
                       const double t[3], const double q[4], int is_static);
int tf_shm_testkit_set_by(TestOwner *owner, const char *authority, const char *parent,
                          const char *child, int64_t stamp_ns, const double t[3],
                          const double q[4], int is_static);
/* One transform of tf_shm_testkit_set_batch. */
typedef struct tf_shm_testkit_transform {
  const char *parent;
  const char *child;
  int64_t stamp_ns;
  double t[3];
  double q[4];
  int is_static;
} tf_shm_testkit_transform;
/* n transforms as one message (one moment: readers see all of them or none). */
int tf_shm_testkit_set_batch(TestOwner *owner, const tf_shm_testkit_transform *items, size_t n);
void tf_shm_testkit_clear(TestOwner *owner);
void tf_shm_testkit_close(TestOwner *owner);
int tf_shm_testkit_reference(TestOwner *owner, const char *kind, const char *target, int64_t time_ns,
                             const char *source, int64_t time2_ns, const char *fixed,
                             int64_t *stamp, double out7[7], char *class_buf, char *text_buf,
                             size_t cap);
/* The Rust calls tf_shm.hpp wraps (bench/wrapper_bench.cpp): a tf_shm::Buffer with pairs. */
typedef struct RustArm RustArm;
RustArm *tf_shm_testkit_rust_open(const char *runtime_dir, const char *name,
                                  const char *const *targets, const char *const *sources, size_t n);
double tf_shm_testkit_rust_run(RustArm *arm, const int32_t *pairs, const int64_t *times, size_t len,
                               size_t count, int32_t by_name);
void tf_shm_testkit_rust_free(RustArm *arm);
#ifdef __cplusplus
}
#endif
#endif
