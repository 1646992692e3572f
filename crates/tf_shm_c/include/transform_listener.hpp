// tf_shm::TransformListener: fills any tf2::BufferCore (so any tf2_ros::Buffer) from a tf_shm
// arena instead of DDS — `tf_shm::TransformListener listener(buffer);` where code had
// `tf2_ros::TransformListener listener(buffer, node);`. Header-only over the C ABI (tf_shm.h:
// tf_shm_tail_*, tf_shm_buffer_wait); needs ROS 2 Jazzy's tf2 and geometry_msgs headers and
// libtf2.
//
// What the buffer gets, on the listener's own thread:
// - at start, every static and dynamic transform the arena holds; then each one the bridge
//   stores, in order (per poll: statics, then dynamic samples oldest stamp first), through
//   tf2's setTransform(msg, authority, is_static) with the frame's publisher as authority;
// - the arena's clear (the bridge clears it when the data's clock jumps back) as
//   buffer.clear(), before the transforms stored after it;
// - across a bridge restart, the old arena's last transforms, then everything the new
//   bridge's arena holds. What the new bridge stored again (the statics, refilled from
//   /tf_static) is given again: setTransform of a transform the buffer has changes nothing in
//   tf2 (TimeCache::insertData drops an exact duplicate; a static frame keeps one value), so the
//   buffer holds each transform once and none is lost.
// The arena stores each rotation as tf2's setTransform would (its quaternion -> matrix ->
// quaternion round trip) and this listener's setTransform applies that round trip once more,
// which for a general quaternion can change its last bit: answers can then differ from a
// DDS-fed buffer's by a few ulp in values computed from that rotation (stamps, frames, errors
// and texts are the same).
// The thread sleeps on the arena's futex (tf_shm_buffer_wait): it runs when the bridge writes,
// clears, or a restarted bridge's arena is joined, never on a timer. A transform the arena
// dropped before the thread read it (history cut short by the bridge's memory budget or
// max_rate_hz) is counted in missed().
#ifndef TF_SHM_TRANSFORM_LISTENER_HPP
#define TF_SHM_TRANSFORM_LISTENER_HPP

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <limits>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

#include <geometry_msgs/msg/transform_stamped.hpp>
#include <tf2/buffer_core.h>

#include "tf_shm.hpp"
#include "tf_shm_geometry_msgs.hpp"

namespace tf_shm
{

/// Feeds a tf2::BufferCore from a tf_shm arena (see the header comment). Not copyable or
/// movable (its thread refers to it). Destroy it before the buffer it feeds.
class TransformListener
{
public:
  /// As tf2_ros::TransformListener(buffer, node): never fails for want of a bridge. Follows the
  /// arena `name` ("" for $TF_SHM_NAME / "default") of ROS domain `domain` (negative for
  /// $TF_SHM_DOMAIN / $ROS_DOMAIN_ID / 0); until a bridge serves it the buffer gets nothing.
  /// Throws tf_shm::Error (TF_SHM_OPEN_ERROR) only for what waiting cannot fix (a bad name, a
  /// bridge that refuses us, an ABI mismatch).
  explicit TransformListener(tf2::BufferCore & buffer, const std::string & name = "", int domain = -1)
  : TransformListener(buffer, Buffer(open_or_empty, name, domain)) {}
  /// Follows the arena of an open tf_shm::Buffer (either constructor), taking it over.
  TransformListener(tf2::BufferCore & buffer, Buffer && arena)
  : buffer_(buffer), arena_(std::move(arena)), h_(arena_.handle())
  {
    detail::check(tf_shm_tail_new(h_, &tail_));
    thread_ = std::thread([this] {run();});
    // As tf2_ros::TransformListener with its dedicated thread: the buffer is filled by
    // another thread, so tf2_ros::Buffer's lookupTransform / canTransform with a timeout wait
    // (without it they return at once with "Do not call canTransform or lookupTransform with
    // a timeout unless you are using another thread for populating data").
    buffer_.setUsingDedicatedThread(true);
  }
  TransformListener(const TransformListener &) = delete;
  TransformListener & operator=(const TransformListener &) = delete;

  /// Stops the thread once the poll in progress, if any, has given its transforms (the buffer
  /// keeps what it was given); a sleeping thread is woken at once.
  ~TransformListener()
  {
    stop_.store(true);
    // The thread may be asleep on the arena's futex: wake it until it has left (a wake just
    // before it goes to sleep is not seen, so repeat).
    std::unique_lock<std::mutex> lk(m_);
    while (!exited_) {
      tf_shm_buffer_wake(h_);
      exited_cv_.wait_for(lk, std::chrono::milliseconds(1));
    }
    lk.unlock();
    thread_.join();
    tf_shm_tail_free(tail_);
  }

  /// Transforms given to the buffer so far (static and dynamic).
  std::uint64_t samples() const {return samples_.load();}
  /// Clears passed on (buffer.clear()).
  std::uint64_t clears() const {return clears_.load();}
  /// Transforms the arena stored but dropped before this listener read them.
  std::uint64_t missed() const {return missed_.load();}
  /// Arena instances read (1, plus one per bridge restart; a buffer made before any bridge
  /// served counts its empty stand-in too).
  std::uint64_t arenas() const {return arenas_.load();}
  /// Polls that failed to read the arena (damaged, or cleared 64 times during one poll); each
  /// is retried after 1 ms and loses nothing the arena still holds.
  std::uint64_t read_errors() const {return read_errors_.load();}
  /// The buffer's setTransform threw (std::bad_alloc and the like): that transform is lost.
  std::uint64_t apply_errors() const {return apply_errors_.load();}

private:
  static void apply(void * ctx, const tf_shm_tail_item * item)
  {
    auto * self = static_cast<TransformListener *>(ctx);
    // No throw: this runs inside the C library's callback, which must not unwind.
    try {
      if (item->kind == TF_SHM_TAIL_CLEAR) {
        self->buffer_.clear();
        self->clears_.fetch_add(1);
        return;
      }
      geometry_msgs::msg::TransformStamped msg;
      msg.header.stamp = toMsg(fromNs(item->transform.stamp_ns));
      msg.header.frame_id = item->parent;
      msg.child_frame_id = item->child;
      msg.transform.translation.x = item->transform.translation[0];
      msg.transform.translation.y = item->transform.translation[1];
      msg.transform.translation.z = item->transform.translation[2];
      msg.transform.rotation.x = item->transform.rotation[0];
      msg.transform.rotation.y = item->transform.rotation[1];
      msg.transform.rotation.z = item->transform.rotation[2];
      msg.transform.rotation.w = item->transform.rotation[3];
      self->buffer_.setTransform(msg, item->authority, item->is_static);
      self->samples_.fetch_add(1);
    } catch (...) {
      self->apply_errors_.fetch_add(1);
    }
  }

  /// One step of tf_shm_buffer_wait: gives the buffer what arrived, then sleeps until the
  /// arena changes (-1 leaves the wait).
  static std::int64_t step(void * ctx)
  {
    auto * self = static_cast<TransformListener *>(ctx);
    if (self->stop_.load()) {return -1;}
    tf_shm_tail_stats st{};
    if (tf_shm_tail_poll(self->tail_, &TransformListener::apply, self, &st) != TF_SHM_OK) {
      self->read_errors_.fetch_add(1);
      return 1000000;
    }
    self->missed_.fetch_add(st.missed);
    self->arenas_.fetch_add(st.new_arenas);
    return std::numeric_limits<std::int64_t>::max();
  }

  void run()
  {
    // Only misuse fails the wait (a closed handle); the destructor still joins.
    tf_shm_buffer_wait(h_, &TransformListener::step, this);
    std::lock_guard<std::mutex> lk(m_);
    exited_ = true;
    exited_cv_.notify_all();
  }

  tf2::BufferCore & buffer_;
  Buffer arena_;
  tf_shm_buffer h_;
  tf_shm_tail tail_{0};
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> samples_{0}, clears_{0}, missed_{0}, arenas_{0}, read_errors_{0},
    apply_errors_{0};
  std::mutex m_;
  std::condition_variable exited_cv_;
  bool exited_ = false;
  std::thread thread_;
};

}  // namespace tf_shm

#endif  // TF_SHM_TRANSFORM_LISTENER_HPP
