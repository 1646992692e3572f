/* Prints T_target_source at the latest common time: tf_shm_consumer_c [target source]. */
#include <stdio.h>

#include <tf_shm.h>

int main(int argc, char **argv) {
  const char *target = argc > 2 ? argv[1] : "map", *source = argc > 2 ? argv[2] : "odom";
  if (!tf_shm_abi_ok()) return 3;
  tf_shm_buffer b;
  tf_shm_transform_stamped t;
  if (tf_shm_buffer_open(NULL, -1, 5000000000LL, &b) != TF_SHM_OK ||
      tf_shm_lookup_transform_timeout(b, target, source, 0, 2000000000LL, &t) != TF_SHM_OK) {
    fprintf(stderr, "tf_shm_consumer_c: %s\n", tf_shm_last_error_message());
    return 1;
  }
  printf("%s -> %s: %.6f %.6f %.6f\n", target, source, t.translation[0], t.translation[1], t.translation[2]);
  return tf_shm_buffer_close(b) == TF_SHM_OK ? 0 : 1;
}
