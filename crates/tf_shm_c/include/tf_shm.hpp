// tf_shm.hpp: header-only C++17 wrapper of the tf_shm C ABI (tf_shm.h), shaped like
// tf2_ros::Buffer / tf2::BufferCore. Reads ROS 2 transforms from the shared-memory arena that
// tf_shm_bridge serves, with tf2's answers, error classes and texts (ROS 2 Jazzy).
//
//   tf_shm::Buffer buffer;  // the arena of $ROS_DOMAIN_ID
//   auto t = buffer.lookupTransform("map", "base_link", tf_shm::TimePointZero);
//   // t.transform: T_map_base_link; translation x, y, z (m); rotation x, y, z, w.
//
// Times and durations are tf2's own types (tf2::TimePoint, tf2::Duration): ns since the epoch
// of the data's clock, so tf2::TimePointZero and tf2_ros::fromMsg(stamp) work unchanged.
// Lookups throw tf_shm's mirrors of tf2's exceptions, each with tf2's what() text.
#ifndef TF_SHM_HPP
#define TF_SHM_HPP

#include <array>
#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "tf_shm.h"

namespace tf_shm
{

/// tf2::Duration: nanoseconds.
using Duration = std::chrono::nanoseconds;
/// tf2::TimePoint: ns since the epoch of the data's clock (system or ROS time).
using TimePoint = std::chrono::time_point<std::chrono::system_clock, Duration>;
/// tf2::TimePointZero: "the latest common time" in lookups.
constexpr TimePoint TimePointZero = TimePoint(Duration::zero());

/// tf2::TransformException and its subclasses (tf2/exceptions.h, ROS 2 Jazzy): same hierarchy,
/// same what() texts.
class TransformException : public std::runtime_error
{
public:
  explicit TransformException(const std::string & what) : std::runtime_error(what) {}
};
class ConnectivityException : public TransformException
{
public:
  explicit ConnectivityException(const std::string & what) : TransformException(what) {}
};
class LookupException : public TransformException
{
public:
  explicit LookupException(const std::string & what) : TransformException(what) {}
};
class ExtrapolationException : public TransformException
{
public:
  explicit ExtrapolationException(const std::string & what) : TransformException(what) {}
};
class BackwardExtrapolationException : public ExtrapolationException
{
public:
  explicit BackwardExtrapolationException(const std::string & what) : ExtrapolationException(what) {}
};
class ForwardExtrapolationException : public ExtrapolationException
{
public:
  explicit ForwardExtrapolationException(const std::string & what) : ExtrapolationException(what) {}
};
class NoDataForExtrapolationException : public ExtrapolationException
{
public:
  explicit NoDataForExtrapolationException(const std::string & what)
  : ExtrapolationException(what) {}
};
class InvalidArgumentException : public TransformException
{
public:
  explicit InvalidArgumentException(const std::string & what) : TransformException(what) {}
};
class TimeoutException : public TransformException
{
public:
  explicit TimeoutException(const std::string & what) : TransformException(what) {}
};
/// Not tf2's: the shared arena could not be read (damaged, or a writer stuck mid-update).
class ArenaException : public TransformException
{
public:
  explicit ArenaException(const std::string & what) : TransformException(what) {}
};
/// Not tf2's: opening failed (no bridge serving, permissions, ABI mismatch) or misuse (a
/// moved-from Buffer or FramePair). status() is the C ABI's code.
class Error : public std::runtime_error
{
public:
  Error(tf_shm_status status, const std::string & what) : std::runtime_error(what), status_(status) {}
  tf_shm_status status() const noexcept {return status_;}

private:
  tf_shm_status status_;
};

/// Throws the exception of a failed C call, with the thread's last error text.
[[noreturn]] inline void throwStatus(tf_shm_status status)
{
  const std::string what = tf_shm_last_error_message();
  switch (status) {
    case TF_SHM_LOOKUP_EXCEPTION: throw LookupException(what);
    case TF_SHM_CONNECTIVITY_EXCEPTION: throw ConnectivityException(what);
    case TF_SHM_FORWARD_EXTRAPOLATION_EXCEPTION: throw ForwardExtrapolationException(what);
    case TF_SHM_BACKWARD_EXTRAPOLATION_EXCEPTION: throw BackwardExtrapolationException(what);
    case TF_SHM_NO_DATA_FOR_EXTRAPOLATION_EXCEPTION: throw NoDataForExtrapolationException(what);
    case TF_SHM_INVALID_ARGUMENT_EXCEPTION: throw InvalidArgumentException(what);
    case TF_SHM_TIMEOUT_EXCEPTION: throw TimeoutException(what);
    case TF_SHM_ARENA_ERROR: throw ArenaException(what);
    default: throw Error(status, what);
  }
}

inline std::int64_t toNs(const TimePoint & t) {return t.time_since_epoch().count();}
inline TimePoint fromNs(std::int64_t ns) {return TimePoint(Duration(ns));}

/// A rigid transform: translation x, y, z in metres; rotation quaternion x, y, z, w.
struct Transform
{
  std::array<double, 3> translation;
  std::array<double, 4> rotation;
};

/// A lookup's answer, as geometry_msgs/TransformStamped: frame_id = target, child_frame_id =
/// source, transform = T_target_source (maps points in the source frame into the target
/// frame); stamp as tf2 returns it (the requested time, or the latest common time for 0).
struct TransformStamped
{
  TimePoint stamp;
  std::string frame_id;
  std::string child_frame_id;
  Transform transform;
};

/// The answer of a FramePair lookup: no strings, for hot loops.
struct StampedTransform
{
  TimePoint stamp;
  Transform transform;
};

namespace detail
{
inline Transform toTransform(const tf_shm_transform_stamped & t)
{
  return Transform{{t.translation[0], t.translation[1], t.translation[2]},
    {t.rotation[0], t.rotation[1], t.rotation[2], t.rotation[3]}};
}
inline TransformStamped toStamped(
  const tf_shm_transform_stamped & t, const std::string & target, const std::string & source)
{
  return TransformStamped{fromNs(t.stamp_ns), target, source, toTransform(t)};
}
inline void check(tf_shm_status st)
{
  if (st != TF_SHM_OK) {throwStatus(st);}
}
/// canTransform's answer: false with the text for tf2's classes (and a damaged arena), a throw
/// for misuse.
inline bool answer(tf_shm_status st, std::string * errstr)
{
  if (st == TF_SHM_OK) {return true;}
  if (st > TF_SHM_ARENA_ERROR) {throwStatus(st);}
  if (errstr) {*errstr = tf_shm_last_error_message();}
  return false;
}
/// Calls `f(buf, cap, &len)` with a growing buffer until the text fits.
template<typename F>
std::string text(F f)
{
  std::string s(256, '\0');
  for (;;) {
    std::size_t len = 0;
    tf_shm_status st = f(&s[0], s.size() + 1, &len);
    if (st == TF_SHM_OK) {
      s.resize(len);
      return s;
    }
    if (st != TF_SHM_BUFFER_TOO_SMALL) {throwStatus(st);}
    s.assign(len, '\0');  // the text can grow between calls: loop
  }
}
}  // namespace detail

/// A (target, source) pair resolved once for hot loops; made by Buffer::pair(). Answers and
/// errors are lookupTransform's. Movable. One caller's, like an iterator: lookups on one
/// FramePair from two threads at once need the caller's synchronization (lookup() is not
/// const); give each thread its own pair (Buffer::pair() may be called from any thread; the
/// Buffer itself is shared freely, as a tf2::BufferCore is).
class FramePair
{
public:
  FramePair(FramePair && o) noexcept
  : p_(std::exchange(o.p_, nullptr)), target_(std::move(o.target_)),
    source_(std::move(o.source_)) {}
  FramePair & operator=(FramePair && o) noexcept
  {
    if (this != &o) {
      tf_shm_frame_pair_free(p_);
      p_ = std::exchange(o.p_, nullptr);
      target_ = std::move(o.target_);
      source_ = std::move(o.source_);
    }
    return *this;
  }
  FramePair(const FramePair &) = delete;
  FramePair & operator=(const FramePair &) = delete;
  ~FramePair() {tf_shm_frame_pair_free(p_);}

  /// T_target_source at `time` (TimePointZero: latest common time).
  StampedTransform lookup(const TimePoint & time)
  {
    tf_shm_transform_stamped t;
    detail::check(tf_shm_frame_pair_lookup(p_, toNs(time), &t));
    return StampedTransform{fromNs(t.stamp_ns), detail::toTransform(t)};
  }
  /// lookup() as a TransformStamped with the frame names.
  TransformStamped lookupTransform(const TimePoint & time)
  {
    tf_shm_transform_stamped t;
    detail::check(tf_shm_frame_pair_lookup(p_, toNs(time), &t));
    return detail::toStamped(t, target_, source_);
  }
  const std::string & target() const noexcept {return target_;}
  const std::string & source() const noexcept {return source_;}

private:
  friend class Buffer;
  FramePair(tf_shm_frame_pair * p, std::string target, std::string source)
  : p_(p), target_(std::move(target)), source_(std::move(source)) {}
  tf_shm_frame_pair * p_;
  std::string target_, source_;
};

/// Tag of the Buffer constructor that does not need a bridge yet: `tf_shm::Buffer
/// buffer(tf_shm::open_or_empty);` (tf_shm_buffer_open_or_empty).
struct OpenOrEmpty
{
  explicit OpenOrEmpty() = default;
};
inline constexpr OpenOrEmpty open_or_empty{};

/// tf2_ros::Buffer's reading half over a tf_shm arena: RAII (closes on destruction), movable,
/// every method const and safe to call from several threads at once. A moved-from Buffer
/// throws tf_shm::Error(TF_SHM_INVALID_HANDLE).
class Buffer
{
public:
  /// Opens the arena `name` ("" for $TF_SHM_NAME / "default") of ROS domain `domain` (negative
  /// for $TF_SHM_DOMAIN / $ROS_DOMAIN_ID / 0). With `wait_for_bridge` > 0, waits up to that long
  /// for a bridge to serve it. Throws tf_shm::Error (TF_SHM_OPEN_ERROR, or an ABI mismatch
  /// between this header and the loaded library).
  explicit Buffer(
    const std::string & name = "", int domain = -1, Duration wait_for_bridge = Duration::zero())
  {
    checkAbi();
    detail::check(tf_shm_buffer_open(name.empty() ? nullptr : name.c_str(), domain,
      wait_for_bridge.count(), &h_));
    takeRef();
  }
  /// Opens the arena as a tf2_ros::Buffer is made, whether or not a bridge serves it yet: joined
  /// at once when one does, else empty (lookups throw tf_shm::LookupException with tf2's text,
  /// canTransform is false, timed calls wait) until a bridge serves, which the buffer notices
  /// within ~20 ms (waits that began before wake then); joined() tells which. `name` and
  /// `domain` as above. Throws tf_shm::Error (TF_SHM_OPEN_ERROR) only for what waiting cannot
  /// fix: a bad name, a bridge that refuses us (another tf_shm version), an ABI mismatch.
  explicit Buffer(OpenOrEmpty, const std::string & name = "", int domain = -1)
  {
    checkAbi();
    detail::check(tf_shm_buffer_open_or_empty(name.empty() ? nullptr : name.c_str(), domain,
      &h_));
    takeRef();
  }
  Buffer(Buffer && o) noexcept
  : h_(std::exchange(o.h_, tf_shm_buffer{0})), ref_(std::exchange(o.ref_, nullptr)) {}
  Buffer & operator=(Buffer && o) noexcept
  {
    if (this != &o) {
      reset();
      h_ = std::exchange(o.h_, tf_shm_buffer{0});
      ref_ = std::exchange(o.ref_, nullptr);
    }
    return *this;
  }
  Buffer(const Buffer &) = delete;
  Buffer & operator=(const Buffer &) = delete;
  ~Buffer() {reset();}

  /// tf2::BufferCore::lookupTransform(target, source, time): T_target_source.
  TransformStamped lookupTransform(
    const std::string & target_frame, const std::string & source_frame,
    const TimePoint & time) const
  {
    tf_shm_transform_stamped t;
    detail::check(lookup(target_frame, source_frame, time, t));
    return detail::toStamped(t, target_frame, source_frame);
  }
  /// The C call under lookupTransform(target, source, time), for wrappers that build their own
  /// result (Tf2Buffer): a status, `out` written on TF_SHM_OK.
  tf_shm_status lookup(
    const std::string & target_frame, const std::string & source_frame,
    const TimePoint & time, tf_shm_transform_stamped & out) const noexcept
  {
    return tf_shm_ref_lookup_transform(ref_, target_frame.data(), target_frame.size(),
      source_frame.data(), source_frame.size(), toNs(time), &out);
  }
  /// tf2_ros::Buffer::lookupTransform with a timeout: sleeps on the arena's futex until
  /// canTransform (or the timeout), then throws the plain lookup's exception if it still fails.
  TransformStamped lookupTransform(
    const std::string & target_frame, const std::string & source_frame,
    const TimePoint & time, const Duration timeout) const
  {
    tf_shm_transform_stamped t;
    detail::check(tf_shm_lookup_transform_timeout(h_, target_frame.c_str(),
      source_frame.c_str(), toNs(time), timeout.count(), &t));
    return detail::toStamped(t, target_frame, source_frame);
  }
  /// tf2's two-time lookupTransform through `fixed_frame`.
  TransformStamped lookupTransform(
    const std::string & target_frame, const TimePoint & target_time,
    const std::string & source_frame, const TimePoint & source_time,
    const std::string & fixed_frame) const
  {
    tf_shm_transform_stamped t;
    detail::check(tf_shm_lookup_transform_full(h_, target_frame.c_str(), toNs(target_time),
      source_frame.c_str(), toNs(source_time), fixed_frame.c_str(), &t));
    return detail::toStamped(t, target_frame, source_frame);
  }
  /// tf2_ros's two-time lookupTransform with a timeout: sleeps on the arena's futex (no
  /// polling) until the two-time canTransform or the timeout, then throws the plain lookup's
  /// exception if it still fails.
  TransformStamped lookupTransform(
    const std::string & target_frame, const TimePoint & target_time,
    const std::string & source_frame, const TimePoint & source_time,
    const std::string & fixed_frame, const Duration timeout) const
  {
    tf_shm_transform_stamped t;
    detail::check(tf_shm_lookup_transform_full_timeout(h_, target_frame.c_str(),
      toNs(target_time), source_frame.c_str(), toNs(source_time), fixed_frame.c_str(),
      timeout.count(), &t));
    return detail::toStamped(t, target_frame, source_frame);
  }

  /// tf2::BufferCore::canTransform: false with tf2's error string in *error_msg.
  bool canTransform(
    const std::string & target_frame, const std::string & source_frame,
    const TimePoint & time, std::string * error_msg = nullptr) const
  {
    return detail::answer(tf_shm_can_transform(h_, target_frame.c_str(), source_frame.c_str(),
      toNs(time)), error_msg);
  }
  /// tf2_ros::Buffer::canTransform with a timeout: sleeps on the arena's futex (woken by the
  /// bridge's writes, no polling) until it can or the time is up.
  bool canTransform(
    const std::string & target_frame, const std::string & source_frame,
    const TimePoint & time, const Duration timeout, std::string * errstr = nullptr) const
  {
    return detail::answer(tf_shm_can_transform_timeout(h_, target_frame.c_str(),
      source_frame.c_str(), toNs(time), timeout.count()), errstr);
  }
  /// tf2's two-time canTransform.
  bool canTransform(
    const std::string & target_frame, const TimePoint & target_time,
    const std::string & source_frame, const TimePoint & source_time,
    const std::string & fixed_frame, std::string * error_msg = nullptr) const
  {
    return detail::answer(tf_shm_can_transform_full(h_, target_frame.c_str(), toNs(target_time),
      source_frame.c_str(), toNs(source_time), fixed_frame.c_str()), error_msg);
  }
  /// tf2_ros's two-time canTransform with a timeout: sleeps on the arena's futex (no polling)
  /// until it can or the time is up.
  bool canTransform(
    const std::string & target_frame, const TimePoint & target_time,
    const std::string & source_frame, const TimePoint & source_time,
    const std::string & fixed_frame, const Duration timeout,
    std::string * errstr = nullptr) const
  {
    return detail::answer(tf_shm_can_transform_full_timeout(h_, target_frame.c_str(),
      toNs(target_time), source_frame.c_str(), toNs(source_time), fixed_frame.c_str(),
      timeout.count()), errstr);
  }

  /// The latest time at which both frames have data (tf2's getLatestCommonTime); throws tf2's
  /// exceptions.
  TimePoint getLatestCommonTime(
    const std::string & target_frame, const std::string & source_frame) const
  {
    std::int64_t t = 0;
    detail::check(tf_shm_get_latest_common_time(h_, target_frame.c_str(), source_frame.c_str(),
      &t));
    return fromNs(t);
  }

  /// tf2::BufferCore::allFramesAsString.
  std::string allFramesAsString() const
  {
    return detail::text([this](char * b, std::size_t cap, std::size_t * len) {
        return tf_shm_all_frames_as_string(h_, b, cap, len);
      });
  }
  /// tf2::BufferCore::allFramesAsYAML(current_time).
  std::string allFramesAsYAML(TimePoint current_time) const
  {
    return detail::text([&](char * b, std::size_t cap, std::size_t * len) {
        return tf_shm_all_frames_as_yaml(h_, toNs(current_time), b, cap, len);
      });
  }
  /// tf2::BufferCore::allFramesAsYAML(): as of TimePointZero, as tf2 does.
  std::string allFramesAsYAML() const {return allFramesAsYAML(TimePointZero);}

  /// tf2::BufferCore::_frameExists.
  bool _frameExists(const std::string & frame_id_str) const
  {
    std::int32_t e = 0;
    detail::check(tf_shm_frame_exists(h_, frame_id_str.c_str(), &e));
    return e != 0;
  }
  /// tf2::BufferCore::_getFrameStrings: every frame name.
  void _getFrameStrings(std::vector<std::string> & ids) const
  {
    ids.clear();
    std::size_t count = 0;
    const std::string packed = detail::text([&](char * b, std::size_t cap, std::size_t * len) {
          return tf_shm_get_frame_strings(h_, b, cap, len, &count);
        });
    for (std::size_t i = 0; i < packed.size(); ) {
      ids.emplace_back(packed.c_str() + i);
      i += ids.back().size() + 1;
    }
  }
  /// tf2::BufferCore::getAllFrameNames.
  std::vector<std::string> getAllFrameNames() const
  {
    std::vector<std::string> v;
    _getFrameStrings(v);
    return v;
  }

  /// tf2::BufferCore::clear for this buffer alone (tf_shm_buffer_clear): from now on its
  /// queries, pairs and waits answer from no dynamic sample stored before the call (statics
  /// stay, frames stay known, as in tf2); the shared arena and other buffers are untouched. A
  /// later sample stamped at or before its frame's newest at the clear stays hidden. Safe to
  /// call while other threads query.
  void clear() {detail::check(tf_shm_buffer_clear(h_));}

  /// tf2::BufferCore(cache_time) for this buffer alone (tf_shm_buffer_set_cache_time): its
  /// queries, pairs and waits answer as a tf2 buffer of that cache time (older samples pruned
  /// as tf2's TimeCache prunes them: lookups before them throw tf2's extrapolation exception
  /// with tf2's text; zero and negative are kept, as tf2 keeps them); with clear(), both apply. Longer than the arena's history
  /// (arenaCacheTime()): accepted, answers unchanged, one warning per process on stderr. Call
  /// it before sharing the buffer with other threads. Returns *this.
  Buffer & setCacheTime(Duration cache_time)
  {
    detail::check(tf_shm_buffer_set_cache_time(h_, cache_time.count()));
    return *this;
  }
  /// tf2::BufferCore::getCacheLength: the cache time given to setCacheTime, else the arena's.
  Duration getCacheLength() const
  {
    std::int64_t ns = 0;
    detail::check(tf_shm_buffer_cache_time(h_, &ns));
    return Duration(ns);
  }
  /// How long the arena keeps each frame's history (the bridge's cache_time): the longest
  /// cache time this buffer can answer for. Read at each call (an empty buffer takes the
  /// bridge's when it joins).
  Duration arenaCacheTime() const
  {
    std::int64_t ns = 0;
    detail::check(tf_shm_buffer_arena_cache_time(h_, &ns));
    return Duration(ns);
  }

  /// A pair for hot loops: lookups without string work, re-resolved after a bridge restart.
  FramePair pair(const std::string & target_frame, const std::string & source_frame) const
  {
    tf_shm_frame_pair * p = nullptr;
    detail::check(tf_shm_frame_pair_new(ref_, target_frame.data(), target_frame.size(),
      source_frame.data(), source_frame.size(), &p));
    return FramePair(p, target_frame, source_frame);
  }

  /// How many times a restarted bridge's new arena was attached since opening.
  std::uint64_t arena_swaps() const
  {
    std::uint64_t n = 0;
    detail::check(tf_shm_buffer_arena_swaps(h_, &n));
    return n;
  }

  /// Whether the buffer has joined a bridge's arena: always for the opening constructor; for
  /// the open_or_empty one, false until a bridge served (then true for good, also while a
  /// restarted bridge is awaited).
  bool joined() const
  {
    bool j = false;
    detail::check(tf_shm_buffer_joined(h_, &j));
    return j;
  }

  /// Deprecated: use arena_swaps(), which this returns (the old name counts arena swaps, not
  /// a generation).
  std::uint64_t generation() const {return arena_swaps();}

  /// The C handle, for calling tf_shm.h directly.
  tf_shm_buffer handle() const noexcept {return h_;}

private:
  static void checkAbi()
  {
    if (!tf_shm_abi_ok()) {
      throw Error(TF_SHM_OPEN_ERROR, "tf_shm: libtf_shm_c has ABI " +
        std::to_string(tf_shm_abi_version()) + ", this tf_shm.hpp was built for ABI " +
        std::to_string(TF_SHM_ABI_VERSION));
    }
  }
  /// The reference the hot calls take: the handle is checked once, here, instead of at every
  /// lookup (tf_shm_buffer_ref).
  void takeRef()
  {
    const tf_shm_status st = tf_shm_buffer_ref_new(h_, &ref_);
    if (st != TF_SHM_OK) {
      reset();
      detail::check(st);
    }
  }
  void reset() noexcept
  {
    tf_shm_buffer_ref_free(ref_);
    ref_ = nullptr;
    if (h_.id != 0) {tf_shm_buffer_close(h_);}
    h_.id = 0;
  }
  tf_shm_buffer h_{0};
  const tf_shm_buffer_ref * ref_ = nullptr;
};

}  // namespace tf_shm

#endif  // TF_SHM_HPP
