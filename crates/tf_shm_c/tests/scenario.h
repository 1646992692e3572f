/* The arena every C and C++ test reads: two trees, statics, histories, a one-sample frame.
 * Times are ns; T0 = 1000 s. */
#ifndef TF_SHM_TEST_SCENARIO_H
#define TF_SHM_TEST_SCENARIO_H
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "testkit.h"

#define T0 1000000000000LL
#define MS 1000000LL

static inline void scenario_set(TestOwner *o, const char *p, const char *c, int64_t stamp, double x,
                                double y, double z, double yaw, int is_static) {
  const double t[3] = {x, y, z};
  const double q[4] = {0.0, 0.0, sin(yaw / 2), cos(yaw / 2)};
  if (tf_shm_testkit_set(o, p, c, stamp, t, q, is_static) != 0) {
    fprintf(stderr, "scenario: could not set %s -> %s\n", p, c);
    exit(2);
  }
}

/* map -> odom (static), odom -> base_link (5 samples, 100 ms apart), base_link -> laser and
 * -> camera (static), camera -> optical (dynamic, 3 samples); a second tree world2 -> island
 * with one sample. */
static inline void scenario_fill(TestOwner *o) {
  scenario_set(o, "map", "odom", T0, 1.0, 2.0, 0.0, 0.3, 1);
  for (int i = 0; i < 5; i++)
    scenario_set(o, "odom", "base_link", T0 + i * 100 * MS, 0.5 * i, 0.1 * i * i, 0.0, 0.2 * i, 0);
  scenario_set(o, "base_link", "laser", T0, 0.2, 0.0, 0.15, 0.0, 1);
  scenario_set(o, "base_link", "camera", T0, 0.1, 0.0, 0.3, 0.5235987755982988, 1);
  for (int i = 0; i < 3; i++)
    scenario_set(o, "camera", "optical", T0 + 50 * MS + i * 100 * MS, 0.01 * i, 0.0, 0.0, 0.1 * i, 0);
  scenario_set(o, "world2", "island", T0 + 120 * MS, 3.0, 0.0, 0.0, 0.0, 0);
}

static const char *const FRAMES[] = {"map", "odom", "base_link", "laser", "camera", "optical",
                                     "world2", "island", "nope", "", "/map"};
#define N_FRAMES (sizeof FRAMES / sizeof FRAMES[0])
static const int64_t TIMES[] = {0, T0, T0 + 50 * MS, T0 + 120 * MS, T0 + 250 * MS,
                                T0 + 400 * MS, T0 + 401 * MS, T0 - 1, T0 + 10000 * MS, -5};
#define N_TIMES (sizeof TIMES / sizeof TIMES[0])

#endif
