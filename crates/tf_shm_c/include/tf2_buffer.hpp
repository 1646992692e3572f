// tf2_buffer.hpp (installed as <tf_shm/tf2_buffer.hpp>): tf_shm::Tf2Buffer, a
// tf2::BufferCoreInterface and tf2_ros::AsyncBufferInterface (ROS 2 Jazzy) that answers from the
// shared-memory arena tf_shm_bridge serves. Code written against tf2's interfaces takes it
// unchanged: tf2_ros::MessageFilter<M, tf_shm::Tf2Buffer>, RViz-style users, anything that
// holds a tf2::BufferCoreInterface& or tf2_ros::AsyncBufferInterface&.
//
//   tf_shm::Tf2Buffer buffer;   // the bridge of $ROS_DOMAIN_ID (was: tf2_ros::Buffer + listener);
//                               // empty until that bridge serves, as a tf2_ros::Buffer is
//   geometry_msgs::msg::TransformStamped t =
//     buffer.lookupTransform("map", "base_link", tf2::TimePointZero);  // T_map_base_link
//   try { ... } catch (const tf2::ExtrapolationException & e) { ... }   // tf2's own classes
//
// Needs tf2 (headers, and libtf2 for tf2's exception typeinfo where ROS links it), tf2_ros's
// headers (async_buffer_interface.h, header-only here) and geometry_msgs. CMake:
//   find_package(tf_shm REQUIRED)   # with tf2 / tf2_ros / geometry_msgs findable
//   target_link_libraries(my_node tf_shm::tf2_buffer)   # or ament_target_dependencies(my_node tf_shm)
//
// Answers, stamps, frame ids, exception classes and what() texts are tf2::BufferCore's
// (crates/tf_shm_c/tests/test_tf2_buffer.cpp compares every virtual with a real
// tf2::BufferCore fed the same transforms). Thread-safe: every method may be called from
// several threads at once.
#ifndef TF_SHM_TF2_BUFFER_HPP
#define TF_SHM_TF2_BUFFER_HPP

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <future>
#include <limits>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <geometry_msgs/msg/transform_stamped.hpp>
#include <tf2/buffer_core_interface.h>
#include <tf2/convert.h>
#include <tf2/exceptions.h>
#include <tf2/time.h>
#include <tf2_ros/async_buffer_interface.h>

#include "tf_shm.hpp"
#include "tf_shm_geometry_msgs.hpp"

namespace tf_shm
{

/// Not tf2's: the shared arena could not be read (damaged, or a writer stuck mid-update). A
/// tf2::TransformException, so tf2 users' `catch (const tf2::TransformException &)` sees it.
class Tf2ArenaException : public tf2::TransformException
{
public:
  explicit Tf2ArenaException(const std::string & what) : tf2::TransformException(what) {}
};

namespace tf2_detail
{
/// Throws tf2's exception class (tf2/exceptions.h) of a failed C call, with the thread's last
/// error text (tf2's what()); misuse (a closed handle, NULL) is tf_shm::Error.
[[noreturn]] inline void throwTf2(tf_shm_status status)
{
  const std::string what = tf_shm_last_error_message();
  switch (status) {
    case TF_SHM_LOOKUP_EXCEPTION: throw tf2::LookupException(what);
    case TF_SHM_CONNECTIVITY_EXCEPTION: throw tf2::ConnectivityException(what);
    case TF_SHM_FORWARD_EXTRAPOLATION_EXCEPTION: throw tf2::ForwardExtrapolationException(what);
    case TF_SHM_BACKWARD_EXTRAPOLATION_EXCEPTION: throw tf2::BackwardExtrapolationException(what);
    case TF_SHM_NO_DATA_FOR_EXTRAPOLATION_EXCEPTION:
      throw tf2::NoDataForExtrapolationException(what);
    case TF_SHM_INVALID_ARGUMENT_EXCEPTION: throw tf2::InvalidArgumentException(what);
    case TF_SHM_TIMEOUT_EXCEPTION: throw tf2::TimeoutException(what);
    case TF_SHM_ARENA_ERROR: throw Tf2ArenaException(what);
    default: throw Error(status, what);
  }
}

inline void check(tf_shm_status st)
{
  if (st != TF_SHM_OK) {throwTf2(st);}
}

/// canTransform's answer: false with tf2's error string for tf2's classes (and a damaged
/// arena), a throw for misuse.
inline bool answer(tf_shm_status st, std::string * error_msg)
{
  if (st == TF_SHM_OK) {return true;}
  if (st > TF_SHM_ARENA_ERROR) {throwTf2(st);}
  if (error_msg) {*error_msg = tf_shm_last_error_message();}
  return false;
}

/// The message tf2::BufferCore::lookupTransform fills: frame_id = target, child_frame_id =
/// source, transform = T_target_source.
inline geometry_msgs::msg::TransformStamped toMsg(
  const tf_shm_transform_stamped & t, const std::string & target, const std::string & source)
{
  geometry_msgs::msg::TransformStamped msg;
  msg.transform.translation.x = t.translation[0];
  msg.transform.translation.y = t.translation[1];
  msg.transform.translation.z = t.translation[2];
  msg.transform.rotation.x = t.rotation[0];
  msg.transform.rotation.y = t.rotation[1];
  msg.transform.rotation.z = t.rotation[2];
  msg.transform.rotation.w = t.rotation[3];
  msg.header.stamp = tf_shm::toMsg(fromNs(t.stamp_ns));
  msg.header.frame_id = target;
  msg.child_frame_id = source;
  return msg;
}
}  // namespace tf2_detail

/// tf2's BufferCoreInterface and tf2_ros's AsyncBufferInterface over a tf_shm arena. Not
/// copyable or movable (futures and the waiter thread refer to it).
class Tf2Buffer : public tf2::BufferCoreInterface, public tf2_ros::AsyncBufferInterface
{
public:
  /// As a tf2_ros::Buffer is made: never fails for want of a bridge. Joins the arena `name` (""
  /// for $TF_SHM_NAME / "default") of ROS domain `domain` (negative for $TF_SHM_DOMAIN /
  /// $ROS_DOMAIN_ID / 0) at once when a bridge serves it; else the buffer is empty (lookups
  /// throw tf2::LookupException with tf2's text, canTransform is false, waitForTransform
  /// waits) until a bridge serves, which it notices within ~20 ms, completing the waits that
  /// began before (tf_shm::Buffer's open_or_empty constructor). joined() tells which. Throws
  /// tf_shm::Error (TF_SHM_OPEN_ERROR) only for what waiting cannot fix: a bad name, a bridge
  /// that refuses us (another tf_shm version), an ABI mismatch with the loaded library.
  explicit Tf2Buffer(const std::string & name = "", int domain = -1)
  : Tf2Buffer(Buffer(open_or_empty, name, domain)) {}
  /// For tools that need a bridge now: opens the arena as above but throws tf_shm::Error
  /// (TF_SHM_OPEN_ERROR) when no bridge serves it, at once with `wait_for_bridge` zero, else
  /// after waiting up to that long for one (tf_shm::Buffer's opening constructor).
  Tf2Buffer(const std::string & name, int domain, tf2::Duration wait_for_bridge)
  : Tf2Buffer(Buffer(name, domain, wait_for_bridge)) {}
  /// tf2::BufferCore(cache_time) / tf2_ros::Buffer(clock, cache_time): as the default
  /// constructor, answering as a tf2 buffer of that cache time (tf_shm::Buffer::setCacheTime:
  /// older samples pruned as tf2's TimeCache prunes them, with clear() both apply;
  /// getCacheLength() returns it). Longer than the arena's history: accepted, answers
  /// unchanged (lookups older than the arena's history throw tf2's extrapolation exception),
  /// one warning per process on stderr naming the bridge's cache_time parameter.
  explicit Tf2Buffer(tf2::Duration cache_time, const std::string & name = "", int domain = -1)
  : Tf2Buffer(withCacheTime(Buffer(open_or_empty, name, domain), cache_time)) {}
  /// As the opening constructor above (a bridge required), with tf2's cache time.
  Tf2Buffer(
    tf2::Duration cache_time, const std::string & name, int domain,
    tf2::Duration wait_for_bridge)
  : Tf2Buffer(withCacheTime(Buffer(name, domain, wait_for_bridge), cache_time)) {}
  /// Answers from an open tf_shm::Buffer (either constructor of tf_shm.hpp), taking it over.
  explicit Tf2Buffer(Buffer && buffer)
  : buffer_(std::move(buffer)), h_(buffer_.handle())
  {
    waiter_ = std::thread([this] {serve();});
  }
  Tf2Buffer(const Tf2Buffer &) = delete;
  Tf2Buffer & operator=(const Tf2Buffer &) = delete;

  /// Stops the waiter thread. Requests still pending are dropped without their callbacks, as
  /// tf2_ros::Buffer drops them: their futures then throw std::future_error
  /// (broken_promise) from get().
  ~Tf2Buffer() override
  {
    {
      std::lock_guard<std::mutex> lk(m_);
      stop_ = true;
    }
    idle_.notify_all();
    // The waiter may be asleep on the arena's futex: wake it until it has left (a wake just
    // before it goes to sleep is not seen, so repeat).
    std::unique_lock<std::mutex> lk(m_);
    while (!exited_) {
      tf_shm_buffer_wake(h_);
      acked_.wait_for(lk, std::chrono::milliseconds(1));
    }
    lk.unlock();
    waiter_.join();
  }

  /// tf2::BufferCoreInterface::clear, for this buffer alone (tf_shm_buffer_clear): from now on
  /// it answers from no dynamic sample stored before the call, as a cleared tf2::BufferCore
  /// does until new data comes (statics stay, frames stay known; pending waitForTransform
  /// requests see the clear). The shared arena and every other buffer on it are untouched (the
  /// bridge clears the arena itself when the data's clock jumps back). One difference: a
  /// sample that arrives after the clear stamped at or before its frame's newest at the clear
  /// stays hidden (tf2 would hold it); samples in time order answer as tf2's. Throws
  /// tf_shm::Tf2ArenaException for a damaged arena (nothing changed).
  void clear() override {check(tf_shm_buffer_clear(h_));}

  /// tf2::BufferCore::lookupTransform(target, source, time): T_target_source at `time`
  /// (TimePointZero: the latest common time). Throws tf2's exceptions with tf2's texts.
  geometry_msgs::msg::TransformStamped lookupTransform(
    const std::string & target_frame, const std::string & source_frame,
    const tf2::TimePoint & time) const override
  {
    tf_shm_transform_stamped t;
    check(buffer_.lookup(target_frame, source_frame, time, t));
    return tf2_detail::toMsg(t, target_frame, source_frame);
  }

  /// tf2::BufferCore's two-time lookupTransform through `fixed_frame`.
  geometry_msgs::msg::TransformStamped lookupTransform(
    const std::string & target_frame, const tf2::TimePoint & target_time,
    const std::string & source_frame, const tf2::TimePoint & source_time,
    const std::string & fixed_frame) const override
  {
    tf_shm_transform_stamped t;
    check(tf_shm_lookup_transform_full(h_, target_frame.c_str(), toNs(target_time),
      source_frame.c_str(), toNs(source_time), fixed_frame.c_str(), &t));
    return tf2_detail::toMsg(t, target_frame, source_frame);
  }

  /// tf2_ros::Buffer::lookupTransform with a timeout: sleeps on the arena's futex until
  /// canTransform or the timeout (steady clock), then throws the plain lookup's exception if it
  /// still fails.
  geometry_msgs::msg::TransformStamped lookupTransform(
    const std::string & target_frame, const std::string & source_frame,
    const tf2::TimePoint & time, const tf2::Duration timeout) const
  {
    tf_shm_transform_stamped t;
    check(tf_shm_lookup_transform_timeout(h_, target_frame.c_str(), source_frame.c_str(),
      toNs(time), timeout.count(), &t));
    return tf2_detail::toMsg(t, target_frame, source_frame);
  }

  /// tf2_ros's two-time lookupTransform with a timeout: sleeps on the arena's futex (no
  /// polling) until the two-time canTransform or the timeout, then throws the plain lookup's
  /// exception if it still fails.
  geometry_msgs::msg::TransformStamped lookupTransform(
    const std::string & target_frame, const tf2::TimePoint & target_time,
    const std::string & source_frame, const tf2::TimePoint & source_time,
    const std::string & fixed_frame, const tf2::Duration timeout) const
  {
    tf_shm_transform_stamped t;
    check(tf_shm_lookup_transform_full_timeout(h_, target_frame.c_str(), toNs(target_time),
      source_frame.c_str(), toNs(source_time), fixed_frame.c_str(), timeout.count(), &t));
    return tf2_detail::toMsg(t, target_frame, source_frame);
  }

  /// tf2::BufferCore::canTransform: false with tf2's error string in *error_msg (if not null).
  bool canTransform(
    const std::string & target_frame, const std::string & source_frame,
    const tf2::TimePoint & time, std::string * error_msg) const override
  {
    return tf2_detail::answer(tf_shm_can_transform(h_, target_frame.c_str(),
      source_frame.c_str(), toNs(time)), error_msg);
  }
  /// canTransform without an error string.
  bool canTransform(
    const std::string & target_frame, const std::string & source_frame,
    const tf2::TimePoint & time) const
  {
    return canTransform(target_frame, source_frame, time, nullptr);
  }

  /// tf2::BufferCore's two-time canTransform.
  bool canTransform(
    const std::string & target_frame, const tf2::TimePoint & target_time,
    const std::string & source_frame, const tf2::TimePoint & source_time,
    const std::string & fixed_frame, std::string * error_msg) const override
  {
    return tf2_detail::answer(tf_shm_can_transform_full(h_, target_frame.c_str(),
      toNs(target_time), source_frame.c_str(), toNs(source_time), fixed_frame.c_str()),
      error_msg);
  }

  /// tf2_ros::Buffer::canTransform with a timeout: sleeps on the arena's futex until it can or
  /// the timeout passed (steady clock); the failure text is the last check's.
  bool canTransform(
    const std::string & target_frame, const std::string & source_frame,
    const tf2::TimePoint & time, const tf2::Duration timeout,
    std::string * errstr = nullptr) const
  {
    return tf2_detail::answer(tf_shm_can_transform_timeout(h_, target_frame.c_str(),
      source_frame.c_str(), toNs(time), timeout.count()), errstr);
  }

  /// tf2::BufferCore::getAllFrameNames: every frame name, in the order frames were first seen.
  std::vector<std::string> getAllFrameNames() const override
  {
    return buffer_.getAllFrameNames();
  }
  /// tf2::BufferCore::_getFrameStrings.
  void _getFrameStrings(std::vector<std::string> & ids) const {buffer_._getFrameStrings(ids);}
  /// tf2::BufferCore::_frameExists.
  bool _frameExists(const std::string & frame_id_str) const
  {
    return buffer_._frameExists(frame_id_str);
  }
  /// tf2::BufferCore::allFramesAsYAML(current_time).
  std::string allFramesAsYAML(tf2::TimePoint current_time) const
  {
    return buffer_.allFramesAsYAML(current_time);
  }
  /// tf2::BufferCore::allFramesAsYAML(): as of TimePointZero, as tf2 does.
  std::string allFramesAsYAML() const {return buffer_.allFramesAsYAML();}
  /// tf2::BufferCore::allFramesAsString.
  std::string allFramesAsString() const {return buffer_.allFramesAsString();}
  /// tf2::BufferCore::getCacheLength: the cache time given to the constructor, else the
  /// arena's (the bridge's; read at each call: an empty buffer takes the bridge's when it
  /// joins).
  tf2::Duration getCacheLength() const
  {
    std::int64_t ns = 0;
    check(tf_shm_buffer_cache_time(h_, &ns));
    return tf2::Duration(ns);
  }

  /// Whether the buffer has joined a bridge's arena (false while the default constructor waits
  /// for a bridge; see tf_shm::Buffer::joined()).
  bool joined() const {return buffer_.joined();}

  /// tf2_ros::Buffer::waitForTransform. The future is completed, and then `callback` called
  /// with it, as tf2_ros::Buffer does:
  /// - at once (handle 0), when canTransform already holds (the lookup's exception, if any,
  ///   leaves this call as in tf2_ros);
  /// - at once with tf2::LookupException("Failed to transform from <source> to <target>")
  ///   (handle 0xffffffffffffffff), when `time` is older than the latest common time by more
  ///   than the cache time (tf2::BufferCore's check);
  /// - later, from this buffer's waiter thread, sleeping on the arena's futex (no polling):
  ///   with the transform when the bridge's data makes it available, with that LookupException
  ///   when the data moves past it, or with tf2::TimeoutException("Timed out waiting for
  ///   transform") once `timeout` (steady clock) passed.
  /// Callbacks run on the waiter thread without locks held (they may call this buffer); an
  /// exception one throws is caught and written to stderr with its what() (tf2_ros's would end
  /// the spin of the executor running it), and the waiter goes on with the other requests.
  tf2_ros::TransformStampedFuture waitForTransform(
    const std::string & target_frame, const std::string & source_frame,
    const tf2::TimePoint & time, const tf2::Duration & timeout,
    tf2_ros::TransformReadyCallback callback) override
  {
    auto promise = std::make_shared<std::promise<geometry_msgs::msg::TransformStamped>>();
    tf2_ros::TransformStampedFuture future(promise->get_future());
    if (target_frame == source_frame || canTransform(target_frame, source_frame, time)) {
      future.setHandle(0);
      promise->set_value(lookupTransform(target_frame, source_frame, time));
      callback(future);
      return future;
    }
    if (tooOld(target_frame, source_frame, time)) {
      future.setHandle(0xffffffffffffffffULL);
      promise->set_exception(failed(target_frame, source_frame));
      callback(future);
      return future;
    }
    const auto deadline = deadlineAfter(timeout);
    std::unique_lock<std::mutex> lk(m_);
    std::uint64_t handle = ++counter_;
    if (handle == 0 || handle == 0xffffffffffffffffULL) {handle = counter_ = 1;}
    future.setHandle(handle);
    pending_.push_back(Request{handle, target_frame, source_frame, time, deadline, promise,
        future, std::move(callback), Outcome::Pending});
    if (!waiting_) {
      idle_.notify_all();
    } else if (deadline < sleep_until_) {
      // The waiter sleeps past this request's deadline: wake it until it has seen the request.
      const std::uint64_t seen = steps_;
      while (steps_ == seen && !exited_) {
        lk.unlock();
        tf_shm_buffer_wake(h_);
        lk.lock();
        acked_.wait_for(lk, std::chrono::milliseconds(1));
      }
    }
    return future;
  }

  /// tf2_ros::Buffer::cancel: forgets the request. Its callback is not called (unless the
  /// waiter thread is completing it at this moment) and its future is left without a value:
  /// get() throws std::future_error (broken_promise). (tf2_ros::Buffer's cancel drops the
  /// request but not its timer, which later completes it with TimeoutException.)
  void cancel(const tf2_ros::TransformStampedFuture & ts_future) override
  {
    std::lock_guard<std::mutex> lk(m_);
    const auto h = ts_future.getHandle();
    pending_.remove_if([h](const Request & r) {return r.handle == h;});
  }

  /// tf2_ros::BufferInterface::transform(in, out, target_frame, timeout) for PointStamped,
  /// PoseStamped and Vector3Stamped: tf2_geometry_msgs's doTransform arithmetic (see
  /// tf_shm_geometry_msgs.hpp), bit for bit.
  template<typename T>
  auto transform(const T & in, T & out, const std::string & target_frame,
    tf2::Duration timeout = tf2::Duration::zero()) const
  -> decltype(tf_shm::doTransform(in, out, std::declval<geometry_msgs::msg::TransformStamped>()),
    std::declval<T &>())
  {
    tf_shm::doTransform(in, out, lookupTransform(target_frame, in.header.frame_id,
      tf_shm::fromMsg(in.header.stamp), timeout));
    return out;
  }
  /// transform() returning the result.
  template<typename T>
  auto transform(const T & in, const std::string & target_frame,
    tf2::Duration timeout = tf2::Duration::zero()) const
  -> decltype(tf_shm::doTransform(in, std::declval<T &>(),
    std::declval<geometry_msgs::msg::TransformStamped>()), T())
  {
    T out;
    return transform(in, out, target_frame, timeout);
  }
  /// tf2_ros::BufferInterface::transform for any type tf2 knows (tf2::getFrameId,
  /// tf2::getTimestamp and tf2::doTransform, e.g. from tf2_geometry_msgs or tf2_sensor_msgs).
  template<typename T>
  T & transformWithTf2(const T & in, T & out, const std::string & target_frame,
    tf2::Duration timeout = tf2::Duration::zero()) const
  {
    tf2::doTransform(in, out, lookupTransform(target_frame, tf2::getFrameId(in),
      tf2::getTimestamp(in), timeout));
    return out;
  }

  /// The tf_shm::Buffer underneath (tf_shm.hpp: FramePair hot loops, arena_swaps()).
  const Buffer & tfShm() const noexcept {return buffer_;}

private:
  enum class Outcome { Pending, Available, Failed, TimedOut };
  struct Request
  {
    std::uint64_t handle;
    std::string target, source;
    tf2::TimePoint time;
    std::chrono::steady_clock::time_point deadline;
    std::shared_ptr<std::promise<geometry_msgs::msg::TransformStamped>> promise;
    tf2_ros::TransformStampedFuture future;
    tf2_ros::TransformReadyCallback callback;
    Outcome outcome = Outcome::Pending;
  };

  static void check(tf_shm_status st) {tf2_detail::check(st);}

  static Buffer withCacheTime(Buffer && b, tf2::Duration cache_time)
  {
    b.setCacheTime(cache_time);
    return std::move(b);
  }

  static std::chrono::steady_clock::time_point deadlineAfter(tf2::Duration timeout)
  {
    const auto now = std::chrono::steady_clock::now();
    const auto left = std::chrono::steady_clock::time_point::max() - now;
    return timeout >= left ? std::chrono::steady_clock::time_point::max() :
           now + std::max(timeout, tf2::Duration::zero());
  }

  static std::exception_ptr failed(const std::string & target, const std::string & source)
  {
    return std::make_exception_ptr(tf2::LookupException(
      "Failed to transform from " + source + " to " + target));
  }

  /// tf2::BufferCore's "never transformable" test: a latest common time (where both frames are
  /// known) newer than `time` by more than the cache time.
  bool tooOld(const std::string & target, const std::string & source, tf2::TimePoint time) const
  {
    // No throw: this runs in the waiter's step, which must not unwind.
    std::int64_t latest = 0, cache = 0;
    if (tf_shm_get_latest_common_time(h_, target.c_str(), source.c_str(), &latest) != TF_SHM_OK ||
      tf_shm_buffer_cache_time(h_, &cache) != TF_SHM_OK)
    {
      return false;
    }
    return latest != 0 && toNs(time) + cache < latest;
  }

  Outcome test(const Request & r, std::chrono::steady_clock::time_point now) const
  {
    if (tooOld(r.target, r.source, r.time)) {return Outcome::Failed;}
    const tf_shm_status st = tf_shm_can_transform(h_, r.target.c_str(), r.source.c_str(),
        toNs(r.time));
    if (st == TF_SHM_OK) {return Outcome::Available;}
    return now >= r.deadline ? Outcome::TimedOut : Outcome::Pending;
  }

  void complete(Request & r) const
  {
    const Outcome o = r.outcome;
    try {
      if (o == Outcome::Available) {
        try {
          r.promise->set_value(lookupTransform(r.target, r.source, r.time));
        } catch (...) {
          r.promise->set_exception(std::current_exception());
        }
      } else if (o == Outcome::Failed) {
        r.promise->set_exception(failed(r.target, r.source));
      } else {
        r.promise->set_exception(std::make_exception_ptr(
          tf2::TimeoutException(std::string("Timed out waiting for transform"))));
      }
      r.callback(r.future);
    } catch (const std::exception & e) {
      // tf2_ros's callback throws into the executor that runs it, which ends its spin; here it
      // would end the waiter thread and every other request with it. Said, not lost; the
      // request is done either way.
      std::fprintf(stderr, "tf_shm::Tf2Buffer: a waitForTransform callback threw: %s\n",
        e.what());
    } catch (...) {
      std::fprintf(stderr,
        "tf_shm::Tf2Buffer: a waitForTransform callback threw an exception not derived from "
        "std::exception\n");
    }
  }

  /// One step of tf_shm_buffer_wait: completes what the arena now answers (outside the lock),
  /// returns how long to sleep at most, or -1 to leave the wait.
  static std::int64_t step(void * self) noexcept
  {
    return static_cast<Tf2Buffer *>(self)->stepOnce();
  }

  std::int64_t stepOnce() noexcept
  {
    std::list<Request> done;
    std::int64_t sleep_ns = std::numeric_limits<std::int64_t>::max();
    {
      std::lock_guard<std::mutex> lk(m_);
      ++steps_;
      acked_.notify_all();
      if (stop_) {return -1;}
      const auto now = std::chrono::steady_clock::now();
      auto next = std::chrono::steady_clock::time_point::max();
      for (auto it = pending_.begin(); it != pending_.end(); ) {
        it->outcome = test(*it, now);
        if (it->outcome == Outcome::Pending) {
          next = std::min(next, it->deadline);
          ++it;
        } else {
          done.splice(done.end(), pending_, it++);
        }
      }
      sleep_until_ = next;
      if (next != std::chrono::steady_clock::time_point::max()) {
        sleep_ns = std::max<std::int64_t>(1,
            std::chrono::duration_cast<std::chrono::nanoseconds>(next - now).count());
      }
      if (pending_.empty()) {sleep_ns = -1;}
    }
    for (auto & r : done) {complete(r);}
    // Completions take time: check again at once rather than sleep on a stale view.
    return (!done.empty() && sleep_ns >= 0) ? 0 : sleep_ns;
  }

  /// The waiter thread: idle (no arena wait announced, so the bridge's writes cost nothing)
  /// while nothing is pending, else in tf_shm_buffer_wait.
  void serve()
  {
    std::unique_lock<std::mutex> lk(m_);
    for (;;) {
      idle_.wait(lk, [this] {return stop_ || !pending_.empty();});
      if (stop_) {break;}
      waiting_ = true;
      sleep_until_ = std::chrono::steady_clock::time_point::min();
      lk.unlock();
      const tf_shm_status st = tf_shm_buffer_wait(h_, &Tf2Buffer::step, this);
      lk.lock();
      waiting_ = false;
      if (st != TF_SHM_OK) {break;}  // only misuse can fail it; the destructor still joins
    }
    exited_ = true;
    acked_.notify_all();
  }

  Buffer buffer_;
  tf_shm_buffer h_;

  mutable std::mutex m_;
  std::condition_variable idle_, acked_;
  std::list<Request> pending_;
  std::uint64_t counter_ = 0;
  std::uint64_t steps_ = 0;
  std::chrono::steady_clock::time_point sleep_until_ = std::chrono::steady_clock::time_point::min();
  bool waiting_ = false, stop_ = false, exited_ = false;
  std::thread waiter_;
};

}  // namespace tf_shm

#endif  // TF_SHM_TF2_BUFFER_HPP
