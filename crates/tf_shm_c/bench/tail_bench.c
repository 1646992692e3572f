// The C tail's own cost (tf_shm_tail_poll, behind tf_shm::TransformListener): a chain of 50
// frames written per "message" by the testkit owner, the tail polled after each message, the
// callback doing nothing. Usage: tail_bench [MESSAGES] (bench/run.sh --tail counts its
// instructions per transform under callgrind).
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "tf_shm.h"
#include "testkit.h"
static void noop(void *ctx, const tf_shm_tail_item *item) { (void)item; ++*(long *)ctx; }
int main(int argc, char **argv) {
  int msgs = argc > 1 ? atoi(argv[1]) : 100;
  char dir[] = "/tmp/tf_shm_tail_bench_XXXXXX";
  if (!mkdtemp(dir)) { puts("mkdtemp"); return 1; }
  setenv("TF_SHM_RUNTIME_DIR", dir, 1);
  TestOwner *o = tf_shm_testkit_serve(dir, "tb", 10000000000LL);
  tf_shm_buffer b;
  if (tf_shm_buffer_open("tb", 0, 0, &b) != TF_SHM_OK) { puts("open"); return 1; }
  tf_shm_tail t;
  if (tf_shm_tail_new(b, &t) != TF_SHM_OK) { puts("tail"); return 1; }
  char names[50][16];
  for (int f = 0; f < 50; f++) snprintf(names[f], 16, "link_%02d", f);
  double tr[3] = {1, 2, 3}, q[4] = {0, 0, 0, 1};
  long n = 0;
  for (int m = 0; m < msgs; m++) {
    for (int f = 0; f < 50; f++)
      tf_shm_testkit_set(o, f ? names[f - 1] : "odom", names[f], 1000000000LL + m * 10000000LL, tr, q, 0);
    tf_shm_tail_poll(t, noop, &n, NULL);
  }
  printf("%ld items\n", n);
  tf_shm_tail_free(t);
  tf_shm_buffer_close(b);
  tf_shm_testkit_close(o);
  rmdir(dir);
  return 0;
}
