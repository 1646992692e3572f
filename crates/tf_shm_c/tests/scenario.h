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

/* Where scenario_fill_with puts each transform: parent, child, stamp (ns), translation x, y, z
 * (m), rotation quaternion x, y, z, w, static or not. */
typedef void (*scenario_sink)(void *ctx, const char *parent, const char *child, int64_t stamp,
                              const double t[3], const double q[4], int is_static);

static inline void scenario_set_with(scenario_sink sink, void *ctx, const char *p, const char *c,
                                     int64_t stamp, double x, double y, double z, double yaw,
                                     int is_static) {
  const double t[3] = {x, y, z};
  const double q[4] = {0.0, 0.0, sin(yaw / 2), cos(yaw / 2)};
  sink(ctx, p, c, stamp, t, q, is_static);
}

/* map -> odom (static), odom -> base_link (5 samples, 100 ms apart), base_link -> laser and
 * -> camera (static), camera -> optical (dynamic, 3 samples); a second tree world2 -> island
 * with one sample. */
static inline void scenario_fill_with(scenario_sink sink, void *ctx) {
  scenario_set_with(sink, ctx, "map", "odom", T0, 1.0, 2.0, 0.0, 0.3, 1);
  for (int i = 0; i < 5; i++)
    scenario_set_with(sink, ctx, "odom", "base_link", T0 + i * 100 * MS, 0.5 * i, 0.1 * i * i,
                      0.0, 0.2 * i, 0);
  scenario_set_with(sink, ctx, "base_link", "laser", T0, 0.2, 0.0, 0.15, 0.0, 1);
  scenario_set_with(sink, ctx, "base_link", "camera", T0, 0.1, 0.0, 0.3, 0.5235987755982988, 1);
  for (int i = 0; i < 3; i++)
    scenario_set_with(sink, ctx, "camera", "optical", T0 + 50 * MS + i * 100 * MS, 0.01 * i, 0.0,
                      0.0, 0.1 * i, 0);
  scenario_set_with(sink, ctx, "world2", "island", T0 + 120 * MS, 3.0, 0.0, 0.0, 0.0, 0);
}

static inline void scenario_testkit_sink(void *owner, const char *p, const char *c, int64_t stamp,
                                         const double t[3], const double q[4], int is_static) {
  if (tf_shm_testkit_set((TestOwner *)owner, p, c, stamp, t, q, is_static) != 0) {
    fprintf(stderr, "scenario: could not set %s -> %s\n", p, c);
    exit(2);
  }
}

static inline void scenario_set(TestOwner *o, const char *p, const char *c, int64_t stamp, double x,
                                double y, double z, double yaw, int is_static) {
  scenario_set_with(scenario_testkit_sink, o, p, c, stamp, x, y, z, yaw, is_static);
}

static inline void scenario_fill(TestOwner *o) { scenario_fill_with(scenario_testkit_sink, o); }

static const char *const FRAMES[] = {"map", "odom", "base_link", "laser", "camera", "optical",
                                     "world2", "island", "nope", "", "/map"};
#define N_FRAMES (sizeof FRAMES / sizeof FRAMES[0])
static const int64_t TIMES[] = {0, T0, T0 + 50 * MS, T0 + 120 * MS, T0 + 250 * MS,
                                T0 + 400 * MS, T0 + 401 * MS, T0 - 1, T0 + 10000 * MS, -5};
#define N_TIMES (sizeof TIMES / sizeof TIMES[0])

#endif
