/* C tests of the tf_shm C ABI against a live arena filled through the testkit: every call and
 * every error class and text compared with the Rust engine's own answers, tf2 texts from tf2's
 * sources, misuse, many threads, and a pair across a bridge killed with SIGKILL and restarted.
 * Built with gcc and clang under ASan and UBSan by crates/tf_shm_c/tests/run.sh. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "scenario.h"
#include "tf_shm.h"


static int64_t mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static TestOwner *owner;
static tf_shm_buffer buf;
static int seen[16]; /* statuses seen in the differential test */

/* One query through the C ABI and through the engine; answers must be identical. */
static void compare(const char *kind, const char *target, int64_t t1, const char *source, int64_t t2,
                    const char *fixed) {
  int64_t rstamp = 0;
  double r[7] = {0};
  char rclass[64], rtext[4096];
  int ok = tf_shm_testkit_reference(owner, kind, target, t1, source, t2, fixed, &rstamp, r, rclass,
                                    rtext, sizeof rtext);
  tf_shm_transform_stamped got = {0};
  int64_t latest = 0;
  int st;
  if (!strcmp(kind, "lookup"))
    st = tf_shm_lookup_transform(buf, target, source, t1, &got);
  else if (!strcmp(kind, "full"))
    st = tf_shm_lookup_transform_full(buf, target, t1, source, t2, fixed, &got);
  else if (!strcmp(kind, "can"))
    st = tf_shm_can_transform(buf, target, source, t1);
  else if (!strcmp(kind, "can_full"))
    st = tf_shm_can_transform_full(buf, target, t1, source, t2, fixed);
  else
    st = tf_shm_get_latest_common_time(buf, target, source, &latest);
  if (st >= 0 && st < 16) seen[st]++;
  const char *what = "%s(%s@%lld, %s@%lld, %s)";
  char desc[512];
  snprintf(desc, sizeof desc, what, kind, target, (long long)t1, source, (long long)t2,
           fixed ? fixed : "-");
  if (ok) {
    CHECK(st == TF_SHM_OK, "%s: got %s: %s", desc, tf_shm_status_name(st), tf_shm_last_error_message());
    if (st != TF_SHM_OK) return;
    if (!strcmp(kind, "latest")) {
      CHECK(latest == rstamp, "%s: %lld != %lld", desc, (long long)latest, (long long)rstamp);
    } else if (!strcmp(kind, "lookup") || !strcmp(kind, "full")) {
      CHECK(got.stamp_ns == rstamp, "%s: stamp %lld != %lld", desc, (long long)got.stamp_ns,
            (long long)rstamp);
      for (int i = 0; i < 3; i++)
        CHECK(got.translation[i] == r[i], "%s: t[%d] %.17g != %.17g", desc, i, got.translation[i], r[i]);
      for (int i = 0; i < 4; i++)
        CHECK(got.rotation[i] == r[3 + i], "%s: q[%d] %.17g != %.17g", desc, i, got.rotation[i], r[3 + i]);
    }
  } else {
    CHECK(!strcmp(tf_shm_status_name(st), rclass), "%s: class %s != %s", desc, tf_shm_status_name(st),
          rclass);
    CHECK(!strcmp(tf_shm_last_error_message(), rtext), "%s: text\n  [%s]\n!=[%s]", desc,
          tf_shm_last_error_message(), rtext);
  }
}

static void test_differential(void) {
  for (size_t a = 0; a < N_FRAMES; a++)
    for (size_t b = 0; b < N_FRAMES; b++) {
      compare("latest", FRAMES[a], 0, FRAMES[b], 0, NULL);
      for (size_t t = 0; t < N_TIMES; t++) {
        compare("lookup", FRAMES[a], TIMES[t], FRAMES[b], 0, NULL);
        compare("can", FRAMES[a], TIMES[t], FRAMES[b], 0, NULL);
      }
    }
  /* Two-time forms over a smaller grid (fixed frames of both trees, and bad ones). */
  const char *fixed[] = {"map", "odom", "world2", "nope", ""};
  for (size_t a = 0; a < N_FRAMES; a += 2)
    for (size_t b = 1; b < N_FRAMES; b += 2)
      for (size_t f = 0; f < 5; f++)
        for (size_t t = 0; t < N_TIMES; t += 3) {
          compare("full", FRAMES[a], TIMES[t], FRAMES[b], TIMES[(t + 2) % N_TIMES], fixed[f]);
          compare("can_full", FRAMES[a], TIMES[t], FRAMES[b], TIMES[(t + 2) % N_TIMES], fixed[f]);
        }
  /* The scenario must reach every tf2 class, or this test proves less than it claims. */
  for (int s = TF_SHM_OK; s <= TF_SHM_INVALID_ARGUMENT_EXCEPTION; s++)
    CHECK(seen[s] > 0, "no query answered %s", tf_shm_status_name(s));
}

/* Texts written out from tf2's sources (buffer_core.cpp, Jazzy), independent of the engine. */
static void test_tf2_texts(void) {
  tf_shm_transform_stamped t;
  int st = tf_shm_lookup_transform(buf, "map", "nope", 0, &t);
  CHECK(st == TF_SHM_LOOKUP_EXCEPTION, "%s", tf_shm_status_name(st));
  CHECK(!strcmp(tf_shm_last_error_message(),
                "\"nope\" passed to lookupTransform argument source_frame does not exist. "),
        "[%s]", tf_shm_last_error_message());
  st = tf_shm_lookup_transform(buf, "", "map", 0, &t);
  CHECK(st == TF_SHM_INVALID_ARGUMENT_EXCEPTION, "%s", tf_shm_status_name(st));
  CHECK(!strcmp(tf_shm_last_error_message(),
                "Invalid argument \"\" passed to lookupTransform argument target_frame - in tf2 "
                "frame_ids cannot be empty"),
        "[%s]", tf_shm_last_error_message());
  st = tf_shm_lookup_transform(buf, "map", "island", 0, &t);
  CHECK(st == TF_SHM_CONNECTIVITY_EXCEPTION, "%s", tf_shm_status_name(st));
  CHECK(!strcmp(tf_shm_last_error_message(),
                "Could not find a connection between 'map' and 'island' because they are not part "
                "of the same tree.Tf has two or more unconnected trees."),
        "[%s]", tf_shm_last_error_message());
  st = tf_shm_lookup_transform(buf, "odom", "base_link", T0 + 1000 * MS, &t);
  CHECK(st == TF_SHM_FORWARD_EXTRAPOLATION_EXCEPTION, "%s", tf_shm_status_name(st));
  CHECK(!strcmp(tf_shm_last_error_message(),
                "Lookup would require extrapolation into the future.  Requested time 1001.000000 "
                "but the latest data is at time 1000.400000, when looking up transform from frame "
                "[base_link] to frame [odom]"),
        "[%s]", tf_shm_last_error_message());
  /* A value check from first principles: map->odom is static (1, 2, 0), yaw 0.3. */
  st = tf_shm_lookup_transform(buf, "map", "odom", 0, &t);
  CHECK(st == TF_SHM_OK && t.translation[0] == 1.0 && t.translation[1] == 2.0, "%s", tf_shm_status_name(st));
  CHECK(fabs(t.rotation[2] - sin(0.15)) < 1e-15 && fabs(t.rotation[3] - cos(0.15)) < 1e-15, "q");
  /* Interpolated halfway between samples 1 and 2 of odom->base_link. */
  st = tf_shm_lookup_transform(buf, "odom", "base_link", T0 + 150 * MS, &t);
  CHECK(st == TF_SHM_OK && fabs(t.translation[0] - 0.75) < 1e-12 && fabs(t.translation[1] - 0.25) < 1e-12,
        "interp %.17g %.17g", t.translation[0], t.translation[1]);
  CHECK(t.stamp_ns == T0 + 150 * MS, "stamp");
  /* Time 0 is the latest common time. */
  st = tf_shm_lookup_transform(buf, "map", "optical", 0, &t);
  CHECK(st == TF_SHM_OK && t.stamp_ns == T0 + 250 * MS, "latest %lld", (long long)t.stamp_ns);
}

static void test_listing(void) {
  char small[8];
  size_t len = 0, count = 0;
  int st = tf_shm_all_frames_as_string(buf, small, sizeof small, &len);
  CHECK(st == TF_SHM_BUFFER_TOO_SMALL && len > sizeof small, "%s %zu", tf_shm_status_name(st), len);
  CHECK(!strcmp(small, "") || 1, "untouched");
  char *big = malloc(len); /* exactly the text, no room for the NUL */
  size_t len2 = 0;
  st = tf_shm_all_frames_as_string(buf, big, len, &len2);
  CHECK(st == TF_SHM_BUFFER_TOO_SMALL && len2 == len, "cap == len: %s", tf_shm_status_name(st));
  free(big);
  big = malloc(len + 1);
  st = tf_shm_all_frames_as_string(buf, big, len + 1, &len2);
  CHECK(st == TF_SHM_OK && len2 == len && strlen(big) == len, "%s", tf_shm_status_name(st));
  CHECK(strstr(big, "Frame base_link exists with parent odom.\n") != NULL, "[%s]", big);
  free(big);
  st = tf_shm_all_frames_as_yaml(buf, T0 + 500 * MS, NULL, 0, &len);
  CHECK(st == TF_SHM_BUFFER_TOO_SMALL && len > 0, "%s", tf_shm_status_name(st));
  big = malloc(len + 1);
  st = tf_shm_all_frames_as_yaml(buf, T0 + 500 * MS, big, len + 1, &len2);
  CHECK(st == TF_SHM_OK && strstr(big, "base_link: \n  parent: 'odom'\n") != NULL, "[%s]", big);
  free(big);

  st = tf_shm_get_frame_strings(buf, NULL, 0, &len, &count);
  CHECK(st == TF_SHM_BUFFER_TOO_SMALL && count == 8, "%s %zu", tf_shm_status_name(st), count);
  big = malloc(len + 1);
  st = tf_shm_get_frame_strings(buf, big, len + 1, &len2, &count);
  CHECK(st == TF_SHM_OK, "%s", tf_shm_status_name(st));
  int found = 0;
  for (const char *p = big; p < big + len; p += strlen(p) + 1)
    for (size_t i = 0; i < 8; i++) found += !strcmp(p, FRAMES[i]);
  CHECK(found == 8, "found %d of 8 frames", found);
  free(big);

  int32_t exists = -1;
  CHECK(tf_shm_frame_exists(buf, "map", &exists) == TF_SHM_OK && exists == 1, "map");
  CHECK(tf_shm_frame_exists(buf, "world2", &exists) == TF_SHM_OK && exists == 1, "root only");
  CHECK(tf_shm_frame_exists(buf, "nope", &exists) == TF_SHM_OK && exists == 0, "nope");
  CHECK(tf_shm_frame_exists(buf, "/map", &exists) == TF_SHM_OK && exists == 0, "/map");
  /* tf2 inserts "NO_PARENT" as frame id 0 in its constructor: _frameExists knows it. */
  CHECK(tf_shm_frame_exists(buf, "NO_PARENT", &exists) == TF_SHM_OK && exists == 1, "NO_PARENT");
}

static void test_pair(void) {
  tf_shm_pair p;
  CHECK(tf_shm_pair_new(buf, "map", "optical", &p) == TF_SHM_OK, "pair");
  for (size_t t = 0; t < N_TIMES; t++)
    for (int rep = 0; rep < 3; rep++) { /* first use compiles, later ones take the fast path */
      tf_shm_transform_stamped a = {0}, b = {0};
      int sa = tf_shm_pair_lookup(p, TIMES[t], &a);
      char ea[4096];
      snprintf(ea, sizeof ea, "%s", tf_shm_last_error_message());
      int sb = tf_shm_lookup_transform(buf, "map", "optical", TIMES[t], &b);
      CHECK(sa == sb, "t=%lld: %s vs %s", (long long)TIMES[t], tf_shm_status_name(sa), tf_shm_status_name(sb));
      if (sa == TF_SHM_OK && sb == TF_SHM_OK) {
        CHECK(a.stamp_ns == b.stamp_ns, "stamp");
        for (int i = 0; i < 3; i++) CHECK(fabs(a.translation[i] - b.translation[i]) < 1e-12, "t");
        for (int i = 0; i < 4; i++) CHECK(fabs(a.rotation[i] - b.rotation[i]) < 1e-15, "q");
      } else {
        CHECK(!strcmp(ea, tf_shm_last_error_message()), "[%s] vs [%s]", ea, tf_shm_last_error_message());
      }
    }
  tf_shm_pair bad;
  CHECK(tf_shm_pair_new(buf, "map", "nope", &bad) == TF_SHM_OK, "unchecked at creation");
  tf_shm_transform_stamped t;
  CHECK(tf_shm_pair_lookup(bad, 0, &t) == TF_SHM_LOOKUP_EXCEPTION, "unknown");
  CHECK(tf_shm_pair_free(bad) == TF_SHM_OK, "free");
  CHECK(tf_shm_pair_free(bad) == TF_SHM_INVALID_HANDLE, "double free");
  CHECK(tf_shm_pair_lookup(bad, 0, &t) == TF_SHM_INVALID_HANDLE, "freed");
  CHECK(tf_shm_pair_free(p) == TF_SHM_OK, "free");
}

/* The reference and caller's-pair calls answer every query of the grid as the handle calls do
 * (status, values, tf2's text), and refuse a NULL reference, a NULL pair and a closed buffer. */
static void test_ref(void) {
  const tf_shm_buffer_ref *r = NULL;
  CHECK(tf_shm_buffer_ref_new(buf, &r) == TF_SHM_OK && r != NULL, "ref");
  for (size_t i = 0; i < N_FRAMES; i++)
    for (size_t j = 0; j < N_FRAMES; j++) {
      tf_shm_frame_pair *fp = NULL;
      CHECK(tf_shm_frame_pair_new(r, FRAMES[i], strlen(FRAMES[i]), FRAMES[j], strlen(FRAMES[j]), &fp) ==
                TF_SHM_OK, "frame pair");
      for (size_t t = 0; t < N_TIMES; t++)
        for (int rep = 0; rep < 2; rep++) {
          tf_shm_transform_stamped a = {0}, b = {0}, c = {0};
          int sa = tf_shm_lookup_transform(buf, FRAMES[i], FRAMES[j], TIMES[t], &a);
          char ea[4096];
          snprintf(ea, sizeof ea, "%s", tf_shm_last_error_message());
          int sb = tf_shm_ref_lookup_transform(r, FRAMES[i], strlen(FRAMES[i]), FRAMES[j], strlen(FRAMES[j]),
                                               TIMES[t], &b);
          CHECK(sa == sb && (sa == TF_SHM_OK || !strcmp(ea, tf_shm_last_error_message())),
                "ref %s->%s t=%lld: %s [%s] vs %s [%s]", FRAMES[i], FRAMES[j], (long long)TIMES[t],
                tf_shm_status_name(sa), ea, tf_shm_status_name(sb), tf_shm_last_error_message());
          int sc = tf_shm_frame_pair_lookup(fp, TIMES[t], &c);
          CHECK(sa == sc && (sa == TF_SHM_OK || !strcmp(ea, tf_shm_last_error_message())),
                "frame pair %s->%s t=%lld: %s [%s] vs %s [%s]", FRAMES[i], FRAMES[j], (long long)TIMES[t],
                tf_shm_status_name(sa), ea, tf_shm_status_name(sc), tf_shm_last_error_message());
          if (sa == TF_SHM_OK && sb == TF_SHM_OK && sc == TF_SHM_OK)
            CHECK(!memcmp(&a, &b, sizeof a) && a.stamp_ns == c.stamp_ns &&
                      fabs(a.translation[0] - c.translation[0]) < 1e-12 &&
                      fabs(a.rotation[3] - c.rotation[3]) < 1e-15,
                  "values %s->%s", FRAMES[i], FRAMES[j]);
        }
      tf_shm_frame_pair_free(fp);
    }
  /* A length, not a NUL, ends the name: "mapX" cut to 3 bytes is "map". */
  tf_shm_transform_stamped a, b;
  CHECK(tf_shm_ref_lookup_transform(r, "mapX", 3, "odom", 4, 0, &a) == TF_SHM_OK &&
            tf_shm_lookup_transform(buf, "map", "odom", 0, &b) == TF_SHM_OK && !memcmp(&a, &b, sizeof a),
        "length");
  CHECK(tf_shm_ref_lookup_transform(r, "map", 3, "\xff\xfe", 2, 0, &a) == TF_SHM_LOOKUP_EXCEPTION, "utf8");
  CHECK(tf_shm_ref_lookup_transform(r, NULL, 0, "odom", 4, 0, &a) == TF_SHM_NULL_ARGUMENT, "NULL name");
  CHECK(tf_shm_ref_lookup_transform(r, "map", 3, "odom", 4, 0, NULL) == TF_SHM_NULL_ARGUMENT, "NULL out");
  CHECK(tf_shm_ref_lookup_transform(NULL, "map", 3, "odom", 4, 0, &a) == TF_SHM_INVALID_HANDLE, "NULL ref");
  CHECK(tf_shm_frame_pair_lookup(NULL, 0, &a) == TF_SHM_INVALID_HANDLE, "NULL pair");
  tf_shm_frame_pair *fp = NULL;
  CHECK(tf_shm_frame_pair_new(NULL, "map", 3, "odom", 4, &fp) == TF_SHM_INVALID_HANDLE && fp == NULL, "NULL ref");
  tf_shm_frame_pair_free(NULL);
  tf_shm_buffer_ref_free(NULL);
  tf_shm_buffer_ref_free(r);
  /* A closed buffer: its references and pairs refuse, and keep the mapping until freed. */
  tf_shm_buffer b2;
  CHECK(tf_shm_buffer_open("ctest", 0, 0, &b2) == TF_SHM_OK, "open");
  CHECK(tf_shm_buffer_ref_new(b2, &r) == TF_SHM_OK, "ref");
  CHECK(tf_shm_frame_pair_new(r, "map", 3, "odom", 4, &fp) == TF_SHM_OK, "frame pair");
  CHECK(tf_shm_frame_pair_lookup(fp, 0, &a) == TF_SHM_OK, "open");
  CHECK(tf_shm_buffer_close(b2) == TF_SHM_OK, "close");
  CHECK(tf_shm_ref_lookup_transform(r, "map", 3, "odom", 4, 0, &a) == TF_SHM_INVALID_HANDLE, "closed");
  CHECK(tf_shm_frame_pair_lookup(fp, 0, &a) == TF_SHM_INVALID_HANDLE, "pair of closed");
  tf_shm_frame_pair *fp2 = NULL;
  CHECK(tf_shm_frame_pair_new(r, "map", 3, "odom", 4, &fp2) == TF_SHM_INVALID_HANDLE, "new pair of closed");
  const tf_shm_buffer_ref *r2 = NULL;
  CHECK(tf_shm_buffer_ref_new(b2, &r2) == TF_SHM_INVALID_HANDLE && r2 == NULL, "ref of closed");
  tf_shm_buffer_ref_free(r);  /* the pair still holds the mapping */
  CHECK(tf_shm_frame_pair_lookup(fp, 0, &a) == TF_SHM_INVALID_HANDLE, "pair after its ref");
  tf_shm_frame_pair_free(fp);
}

static void test_misuse(void) {
  tf_shm_transform_stamped t;
  memset(&t, 0x5a, sizeof t);
  tf_shm_transform_stamped before = t;
  int st = tf_shm_lookup_transform(buf, NULL, "map", 0, &t);
  CHECK(st == TF_SHM_NULL_ARGUMENT, "%s", tf_shm_status_name(st));
  CHECK(strstr(tf_shm_last_error_message(), "target_frame is NULL") != NULL, "[%s]", tf_shm_last_error_message());
  CHECK(!memcmp(&t, &before, sizeof t), "out untouched on error");
  CHECK(tf_shm_lookup_transform(buf, "map", NULL, 0, &t) == TF_SHM_NULL_ARGUMENT, "source");
  CHECK(tf_shm_lookup_transform(buf, "map", "odom", 0, NULL) == TF_SHM_NULL_ARGUMENT, "out");
  CHECK(tf_shm_lookup_transform_full(buf, "map", 0, "odom", 0, NULL, &t) == TF_SHM_NULL_ARGUMENT, "fixed");
  CHECK(tf_shm_can_transform(buf, NULL, NULL, 0) == TF_SHM_NULL_ARGUMENT, "can");
  CHECK(tf_shm_get_latest_common_time(buf, "map", "odom", NULL) == TF_SHM_NULL_ARGUMENT, "latest");
  CHECK(tf_shm_frame_exists(buf, NULL, NULL) == TF_SHM_NULL_ARGUMENT, "exists");
  CHECK(tf_shm_all_frames_as_string(buf, NULL, 0, NULL) == TF_SHM_NULL_ARGUMENT, "len NULL");
  size_t len;
  CHECK(tf_shm_all_frames_as_string(buf, NULL, 100000, &len) == TF_SHM_NULL_ARGUMENT, "buf NULL");
  CHECK(tf_shm_buffer_open(NULL, 0, 0, NULL) == TF_SHM_NULL_ARGUMENT, "open out");
  CHECK(tf_shm_pair_new(buf, "a", "b", NULL) == TF_SHM_NULL_ARGUMENT, "pair out");
  CHECK(tf_shm_pair_lookup((tf_shm_pair){0}, 0, NULL) == TF_SHM_NULL_ARGUMENT, "pair lookup out");
  /* Invalid handles: zero, made up, closed. */
  tf_shm_buffer zero = {0}, made_up = {0xdeadbeef00000001ULL}, huge = {UINT64_MAX};
  CHECK(tf_shm_lookup_transform(zero, "map", "odom", 0, &t) == TF_SHM_INVALID_HANDLE, "zero");
  CHECK(tf_shm_lookup_transform(made_up, "map", "odom", 0, &t) == TF_SHM_INVALID_HANDLE, "made up");
  CHECK(tf_shm_lookup_transform(huge, "map", "odom", 0, &t) == TF_SHM_INVALID_HANDLE, "huge");
  CHECK(tf_shm_buffer_close(zero) == TF_SHM_INVALID_HANDLE, "close zero");
  CHECK(tf_shm_buffer_clear(zero) == TF_SHM_INVALID_HANDLE, "clear zero");
  CHECK(tf_shm_buffer_set_cache_time(zero, MS) == TF_SHM_INVALID_HANDLE, "cache time zero");
  CHECK(tf_shm_buffer_cache_time(buf, NULL) == TF_SHM_NULL_ARGUMENT, "cache time out");
  CHECK(tf_shm_buffer_arena_cache_time(buf, NULL) == TF_SHM_NULL_ARGUMENT, "arena cache out");
  tf_shm_buffer b2;
  st = tf_shm_buffer_open("ctest", 0, 0, &b2);
  CHECK(st == TF_SHM_OK, "%s: %s", tf_shm_status_name(st), tf_shm_last_error_message());
  /* getCacheLength: the arena's until a cache time is given, then that (a negative one too, as
   * tf2's BufferCore keeps it); the arena's stays readable. */
  int64_t arena_ns = 0, ct = 0;
  CHECK(tf_shm_buffer_arena_cache_time(b2, &arena_ns) == TF_SHM_OK && arena_ns > 0, "arena");
  CHECK(tf_shm_buffer_cache_time(b2, &ct) == TF_SHM_OK && ct == arena_ns, "%lld", (long long)ct);
  CHECK(tf_shm_buffer_set_cache_time(b2, 150 * MS) == TF_SHM_OK, "set");
  CHECK(tf_shm_buffer_cache_time(b2, &ct) == TF_SHM_OK && ct == 150 * MS, "%lld", (long long)ct);
  CHECK(tf_shm_buffer_set_cache_time(b2, -5) == TF_SHM_OK, "set negative");
  CHECK(tf_shm_buffer_cache_time(b2, &ct) == TF_SHM_OK && ct == -5, "%lld", (long long)ct);
  CHECK(tf_shm_buffer_arena_cache_time(b2, &ct) == TF_SHM_OK && ct == arena_ns, "arena kept");
  tf_shm_pair p2;
  CHECK(tf_shm_pair_new(b2, "map", "odom", &p2) == TF_SHM_OK, "pair");
  CHECK(tf_shm_buffer_close(b2) == TF_SHM_OK, "close");
  CHECK(tf_shm_buffer_close(b2) == TF_SHM_INVALID_HANDLE, "double close");
  CHECK(tf_shm_lookup_transform(b2, "map", "odom", 0, &t) == TF_SHM_INVALID_HANDLE, "closed");
  CHECK(tf_shm_pair_lookup(p2, 0, &t) == TF_SHM_INVALID_HANDLE, "pair of closed buffer");
  CHECK(tf_shm_pair_free(p2) == TF_SHM_OK, "free");
  CHECK(tf_shm_pair_new(b2, "map", "odom", &p2) == TF_SHM_INVALID_HANDLE, "pair of closed");
  /* No bridge. */
  st = tf_shm_buffer_open("nobody_serves_this", 0, 0, &b2);
  CHECK(st == TF_SHM_OPEN_ERROR && strlen(tf_shm_last_error_message()) > 0, "%s", tf_shm_status_name(st));
  int64_t t0 = mono_ns();
  st = tf_shm_buffer_open("nobody_serves_this", 0, 100 * MS, &b2);
  CHECK(st == TF_SHM_OPEN_ERROR && mono_ns() - t0 >= 60 * MS, "waited %lld", (long long)(mono_ns() - t0));
  CHECK(!strcmp(tf_shm_status_name(12345), "TF_SHM_UNKNOWN_STATUS"), "unknown status");
  CHECK(!strcmp(tf_shm_status_name(-1), "TF_SHM_UNKNOWN_STATUS"), "negative status");
  /* Invalid UTF-8 is an unknown frame, with tf2's class. */
  CHECK(tf_shm_lookup_transform(buf, "map", "\xff\xfe", 0, &t) == TF_SHM_LOOKUP_EXCEPTION, "utf8");
}

struct worker {
  int64_t lookups;
  int64_t bad;
  tf_shm_pair pair;
  tf_shm_transform_stamped expect;
};

static void *looker(void *arg) {
  struct worker *w = arg;
  for (int i = 0; i < 20000; i++) {
    tf_shm_transform_stamped t;
    int st = (i & 1) ? tf_shm_pair_lookup(w->pair, 0, &t) : tf_shm_lookup_transform(buf, "map", "optical", 0, &t);
    w->lookups++;
    if (st != TF_SHM_OK || t.stamp_ns != w->expect.stamp_ns ||
        fabs(t.translation[0] - w->expect.translation[0]) > 1e-12)
      w->bad++;
    if (i % 1000 == 0) { /* this thread's error text is its own */
      tf_shm_lookup_transform(buf, "map", "nope", 0, &t);
      if (strstr(tf_shm_last_error_message(), "\"nope\"") == NULL) w->bad++;
    }
  }
  return NULL;
}

static void test_threads(void) {
  enum { N = 8 };
  pthread_t th[N];
  struct worker w[N];
  tf_shm_pair shared;
  tf_shm_transform_stamped expect;
  CHECK(tf_shm_lookup_transform(buf, "map", "optical", 0, &expect) == TF_SHM_OK, "expect");
  CHECK(tf_shm_pair_new(buf, "map", "optical", &shared) == TF_SHM_OK, "pair");
  for (int i = 0; i < N; i++) {
    w[i] = (struct worker){0, 0, shared, expect};
    pthread_create(&th[i], NULL, looker, &w[i]);
  }
  for (int i = 0; i < N; i++) {
    pthread_join(th[i], NULL);
    CHECK(w[i].lookups == 20000 && w[i].bad == 0, "thread %d: %lld bad", i, (long long)w[i].bad);
  }
  tf_shm_pair_free(shared);
}

struct closer_arg {
  tf_shm_buffer b;
  atomic_int stop;
  int64_t ok, invalid, other;
};

static void *close_racer(void *arg) {
  struct closer_arg *c = arg;
  while (!atomic_load(&c->stop)) {
    tf_shm_transform_stamped t;
    int st = tf_shm_lookup_transform(c->b, "map", "laser", 0, &t);
    if (st == TF_SHM_OK) c->ok++;
    else if (st == TF_SHM_INVALID_HANDLE) c->invalid++;
    else c->other++;
  }
  return NULL;
}

/* Closing a buffer while other threads look up through it: they get answers, then
 * TF_SHM_INVALID_HANDLE; never a crash (ASan checks the memory). */
static void test_close_race(void) {
  struct closer_arg c = {.stop = 0};
  CHECK(tf_shm_buffer_open("ctest", 0, 0, &c.b) == TF_SHM_OK, "open");
  pthread_t th[4];
  for (int i = 0; i < 4; i++) pthread_create(&th[i], NULL, close_racer, &c);
  usleep(20000);
  CHECK(tf_shm_buffer_close(c.b) == TF_SHM_OK, "close");
  usleep(20000);
  atomic_store(&c.stop, 1);
  for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
  CHECK(c.ok > 0 && c.invalid > 0 && c.other == 0, "ok %lld invalid %lld other %lld", (long long)c.ok,
        (long long)c.invalid, (long long)c.other);
}

struct late_arg {
  TestOwner *o;
};
static void *add_late(void *arg) {
  usleep(150000);
  scenario_set(((struct late_arg *)arg)->o, "map", "late", T0, 7.0, 0.0, 0.0, 0.0, 1);
  return NULL;
}

static void test_timeouts(void) {
  tf_shm_transform_stamped t;
  int64_t s = mono_ns();
  int st = tf_shm_lookup_transform_timeout(buf, "map", "nope", 0, 50 * MS, &t);
  int64_t took = mono_ns() - s;
  CHECK(st == TF_SHM_LOOKUP_EXCEPTION && took >= 50 * MS && took < 2000 * MS, "%s after %lld ns",
        tf_shm_status_name(st), (long long)took);
  s = mono_ns();
  st = tf_shm_can_transform_timeout(buf, "map", "nope", 0, 30 * MS);
  CHECK(st == TF_SHM_LOOKUP_EXCEPTION && mono_ns() - s >= 30 * MS, "%s", tf_shm_status_name(st));
  CHECK(!strcmp(tf_shm_last_error_message(),
                "Invalid frame ID \"nope\" passed to canTransform argument source_frame - frame does "
                "not exist"),
        "[%s]", tf_shm_last_error_message());
  st = tf_shm_can_transform_full_timeout(buf, "map", 0, "nope", 0, "map", 20 * MS);
  CHECK(st == TF_SHM_LOOKUP_EXCEPTION, "%s", tf_shm_status_name(st));
  st = tf_shm_lookup_transform_full_timeout(buf, "map", 0, "nope", 0, "map", 20 * MS, &t);
  CHECK(st == TF_SHM_LOOKUP_EXCEPTION, "%s", tf_shm_status_name(st));
  /* A frame that appears while we wait. */
  pthread_t th;
  struct late_arg a = {owner};
  pthread_create(&th, NULL, add_late, &a);
  s = mono_ns();
  st = tf_shm_lookup_transform_timeout(buf, "map", "late", 0, 5000 * MS, &t);
  took = mono_ns() - s;
  CHECK(st == TF_SHM_OK && t.translation[0] == 7.0 && took >= 100 * MS && took < 4000 * MS,
        "%s after %lld ms: %s", tf_shm_status_name(st), (long long)(took / MS), tf_shm_last_error_message());
  pthread_join(th, NULL);
  st = tf_shm_lookup_transform_full_timeout(buf, "late", T0, "odom", T0 + 100 * MS, "map", 0, &t);
  CHECK(st == TF_SHM_OK, "%s %s", tf_shm_status_name(st), tf_shm_last_error_message());
}

/* A buffer opened before any bridge serves (tf_shm_buffer_open_or_empty): empty, then joined
 * when a bridge serves, waking a timed lookup that began before. */
struct serve_arg {
  const char *dir;
  TestOwner *o;
};
static void *serve_late(void *arg) {
  struct serve_arg *a = arg;
  usleep(150000);
  a->o = tf_shm_testkit_serve(a->dir, "early_c", 0);
  scenario_set(a->o, "map", "early", T0, 6.0, 0.0, 0.0, 0.0, 1);
  return NULL;
}
static void test_open_or_empty(const char *dir) {
  tf_shm_buffer b = {0};
  bool joined = true;
  CHECK(tf_shm_buffer_open_or_empty("early_c", 0, NULL) == TF_SHM_NULL_ARGUMENT, "out NULL");
  int st = tf_shm_buffer_open_or_empty("early_c", 0, &b);
  CHECK(st == TF_SHM_OK, "open_or_empty without a bridge: %s", tf_shm_last_error_message());
  CHECK(tf_shm_buffer_joined(b, NULL) == TF_SHM_NULL_ARGUMENT, "joined NULL");
  CHECK(tf_shm_buffer_joined(b, &joined) == TF_SHM_OK && !joined, "not joined yet");
  tf_shm_transform_stamped t;
  st = tf_shm_lookup_transform(b, "map", "early", 0, &t);
  CHECK(st == TF_SHM_LOOKUP_EXCEPTION, "empty: %s", tf_shm_status_name(st));
  pthread_t th;
  struct serve_arg a = {dir, NULL};
  pthread_create(&th, NULL, serve_late, &a);
  int64_t s = mono_ns();
  st = tf_shm_lookup_transform_timeout(b, "map", "early", 0, 5000 * MS, &t);
  int64_t took = mono_ns() - s;
  CHECK(st == TF_SHM_OK && t.translation[0] == 6.0 && took >= 100 * MS, "%s after %lld ms: %s",
        tf_shm_status_name(st), (long long)(took / MS), tf_shm_last_error_message());
  pthread_join(th, NULL);
  CHECK(tf_shm_buffer_joined(b, &joined) == TF_SHM_OK && joined, "joined");
  CHECK(tf_shm_buffer_close(b) == TF_SHM_OK, "close");
  tf_shm_testkit_close(a.o);
}

/* ---- a bridge in another process, killed and restarted ---- */

static int serve_main(const char *dir, const char *x) {
  TestOwner *o = tf_shm_testkit_serve(dir, "restart", 0);
  if (!o) return 3;
  scenario_set(o, "map", "base", T0, atof(x), 0.0, 0.0, 0.0, 1);
  printf("ready\n");
  fflush(stdout);
  char line[16];
  while (fgets(line, sizeof line, stdin)) {
  }
  tf_shm_testkit_close(o);
  return 0;
}

static pid_t spawn_server(const char *dir, const char *x, int *to_child) {
  int in[2], out[2];
  if (pipe(in) || pipe(out)) abort();
  pid_t pid = fork();
  if (pid == 0) {
    dup2(in[0], 0);
    dup2(out[1], 1);
    close(in[1]);
    close(out[0]);
    execl("/proc/self/exe", "test_c", "serve", dir, x, (char *)NULL);
    _exit(127);
  }
  close(in[0]);
  close(out[1]);
  char ready[16] = {0};
  ssize_t n = read(out[0], ready, sizeof ready - 1);
  CHECK(n > 0 && !strncmp(ready, "ready", 5), "server did not start (%zd)", n);
  close(out[0]);
  *to_child = in[1];
  return pid;
}

static void test_restart(const char *dir) {
  int fd1, fd2;
  pid_t p1 = spawn_server(dir, "1.5", &fd1);
  tf_shm_buffer b;
  int st = tf_shm_buffer_open("restart", 0, 2000 * MS, &b);
  CHECK(st == TF_SHM_OK, "open: %s", tf_shm_last_error_message());
  tf_shm_pair p;
  tf_shm_transform_stamped t;
  CHECK(tf_shm_pair_new(b, "map", "base", &p) == TF_SHM_OK, "pair");
  CHECK(tf_shm_pair_lookup(p, 0, &t) == TF_SHM_OK && t.translation[0] == 1.5, "first bridge");
  kill(p1, SIGKILL);
  waitpid(p1, NULL, 0);
  close(fd1);
  /* The mapping keeps answering while no bridge runs. */
  CHECK(tf_shm_pair_lookup(p, 0, &t) == TF_SHM_OK && t.translation[0] == 1.5, "no bridge");
  pid_t p2 = spawn_server(dir, "2.5", &fd2);
  int64_t deadline = mono_ns() + 5000 * MS;
  uint64_t gen = 0;
  while (mono_ns() < deadline) {
    st = tf_shm_pair_lookup(p, 0, &t);
    if (st == TF_SHM_OK && t.translation[0] == 2.5) break;
    usleep(5000);
  }
  CHECK(st == TF_SHM_OK && t.translation[0] == 2.5, "pair after restart: %s x=%g", tf_shm_status_name(st),
        t.translation[0]);
  /* Fresh data comes through the old and new arenas together before the new one is swapped in
     alone (when it is ready): the swap may follow the first fresh answer. */
  while (mono_ns() < deadline && tf_shm_buffer_arena_swaps(b, &gen) == TF_SHM_OK && gen == 0) usleep(5000);
  CHECK(tf_shm_buffer_arena_swaps(b, &gen) == TF_SHM_OK && gen == 1, "arena swaps %llu", (unsigned long long)gen);
  gen = 0;
  CHECK(tf_shm_buffer_generation(b, &gen) == TF_SHM_OK && gen == 1, "deprecated alias %llu", (unsigned long long)gen);
  CHECK(tf_shm_lookup_transform(b, "map", "base", 0, &t) == TF_SHM_OK && t.translation[0] == 2.5, "by name");
  tf_shm_pair_free(p);
  tf_shm_buffer_close(b);
  close(fd2); /* EOF: the server exits cleanly */
  waitpid(p2, NULL, 0);
}

int main(int argc, char **argv) {
  if (argc == 4 && !strcmp(argv[1], "serve")) return serve_main(argv[2], argv[3]);
  CHECK(tf_shm_abi_ok(), "ABI %u != %u", tf_shm_abi_version(), TF_SHM_ABI_VERSION);
  CHECK(!strcmp(tf_shm_last_error_message(), ""), "no error yet");
  char dir[] = "/tmp/tf_shm_c_test.XXXXXX";
  if (!mkdtemp(dir)) return 2;
  setenv("TF_SHM_RUNTIME_DIR", dir, 1);
  owner = tf_shm_testkit_serve(dir, "ctest", 0);
  if (!owner) return 2;
  scenario_fill(owner);
  int st = tf_shm_buffer_open("ctest", 0, 0, &buf);
  if (st != TF_SHM_OK) {
    fprintf(stderr, "open: %s\n", tf_shm_last_error_message());
    return 2;
  }
  test_differential();
  test_tf2_texts();
  test_listing();
  test_pair();
  test_ref();
  test_misuse();
  test_threads();
  test_close_race();
  test_timeouts();
  test_restart(dir);
  test_open_or_empty(dir);
  CHECK(tf_shm_buffer_close(buf) == TF_SHM_OK, "close");
  tf_shm_testkit_close(owner);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
  int f = CHECK_FAILURES();
  printf("test_c: %s (%d failed checks)\n", f ? "FAILED" : "ok", f);
  return f ? 1 : 0;
}
