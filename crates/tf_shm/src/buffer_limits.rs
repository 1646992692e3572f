//! [`BufferLimits`]: one consumer buffer's own tf2 cache time and `clear()`, applied when it
//! reads the shared arena (whose cache time is the bridge's), for every binding alike.
//!
//! tf2 keeps a cache time as given (`BufferCore::BufferCore(tf2::Duration cache_time)` stores
//! it unchecked, `getCacheLength()` returns it; tf2_ros's Python `Buffer(cache_time=...)`
//! passes it through). A zero or negative one is therefore tf2's too: `TimeCache::pruneList`
//! drops the samples with `stamp + cache_time < latest` before each insert, so with zero a
//! frame holds its newest sample and those stamped at its second newest, with a negative one
//! only the sample inserted last (for samples arriving in time order: the newest). That is
//! what [`CacheLimited`] answers for such a cache time, so it is kept as given, not clamped.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use arc_swap::ArcSwap;

use crate::cache_limit::{CacheLimited, ClearMark};
use crate::error::{ArenaError, TransformError};
use crate::follow::BufferStore;
use crate::queries::BufferCore;
use crate::sample::TransformStamped;
use crate::store::FrameStore;
use crate::velocity::Velocity;
use crate::Buffer;

/// A buffer's tf2 cache time and its last `clear()`, applied to the queries run through
/// [`BufferLimits::query`]. Shared between threads (`&self` everywhere): queries read a
/// snapshot without taking a lock, and one that runs while [`BufferLimits::clear`] or
/// [`BufferLimits::set_cache_time`] does answers with the limits from before or after it.
#[derive(Debug)]
pub struct BufferLimits {
    /// Whether a cache time was given or `clear()` was called: until then a query reads the
    /// plain buffer after this one load.
    set: AtomicBool,
    state: ArcSwap<Limits>,
}

#[derive(Clone, Debug, Default)]
struct Limits {
    /// tf2's cache time, ns, as given (see the module doc); `None`: the arena's.
    cache_time_ns: Option<i64>,
    cleared: Option<Arc<KeyedMark>>,
}

/// A clear's mark with the arena whose frame ids it holds. Keyed by that arena's instance
/// (what an arena swap changes) read from the very store a query reads, so a query after a
/// bridge restart never applies the old arena's ids to the new one.
#[derive(Debug)]
struct KeyedMark {
    instance: [u8; 16],
    mark: ClearMark,
}

/// The instance of the arena whose ids `s` answers in (the old one during a hold: the
/// handover store keeps its ids).
fn ids_of(s: &BufferStore) -> [u8; 16] {
    s.view.identity().instance_uuid
}

impl Default for BufferLimits {
    fn default() -> BufferLimits {
        BufferLimits::new(None)
    }
}

impl BufferLimits {
    /// Limits of a buffer made with tf2's cache time `cache_time_ns` (ns, any value, as tf2
    /// takes it; `None`: the arena's) and never cleared.
    pub fn new(cache_time_ns: Option<i64>) -> BufferLimits {
        BufferLimits {
            set: AtomicBool::new(cache_time_ns.is_some()),
            state: ArcSwap::from_pointee(Limits {
                cache_time_ns,
                cleared: None,
            }),
        }
    }

    /// tf2's cache time from now on, ns as tf2 takes it (zero and negative included, see the
    /// module doc); `None`: the arena's. One shorter than the arena's
    /// ([`BufferCore::get_cache_length`] of the buffer) prunes as tf2 would; a longer one
    /// changes no answer (the arena has pruned what it has pruned).
    pub fn set_cache_time(&self, cache_time_ns: Option<i64>) {
        self.state.rcu(|l| Limits {
            cache_time_ns,
            ..Limits::clone(l)
        });
        self.set.store(true, Ordering::Release);
    }

    /// The cache time given, ns; `None` when none was.
    pub fn cache_time(&self) -> Option<i64> {
        if !self.is_set() {
            return None;
        }
        self.state.load().cache_time_ns
    }

    /// tf2's `getCacheLength()` of the buffer, ns: the cache time given, else the arena's.
    pub fn get_cache_length(&self, buffer: &Buffer) -> i64 {
        self.cache_time()
            .unwrap_or_else(|| buffer.get_cache_length())
    }

    /// Whether a cache time was given or the buffer cleared (one load): when not, queries read
    /// the plain buffer.
    #[inline]
    pub fn is_set(&self) -> bool {
        self.set.load(Ordering::Acquire)
    }

    /// Whether a query on `buffer` now answers other than the plain buffer: it was cleared, or
    /// given a cache time shorter than its arena's.
    pub fn applies(&self, buffer: &Buffer) -> bool {
        if !self.is_set() {
            return false;
        }
        let l = self.state.load();
        l.cleared.is_some()
            || l.cache_time_ns
                .is_some_and(|ns| ns < buffer.get_cache_length())
    }

    /// tf2's `BufferCore::clear()` for this buffer alone (see [`ClearMark`]): from now on its
    /// queries hold no dynamic sample stamped at or before its frame's newest at this call;
    /// static frames stay, frames stay known. The arena and every other buffer on it are
    /// untouched. The mark follows the buffer to a restarted bridge's arena by frame name.
    ///
    /// # Errors
    /// A damaged arena ([`ArenaError`]); nothing changed then.
    pub fn clear(&self, buffer: &Buffer) -> Result<(), ArenaError> {
        let keyed = buffer.with_store(|s| {
            ClearMark::take(s).map(|mark| KeyedMark {
                instance: ids_of(s),
                mark,
            })
        })?;
        let keyed = Arc::new(keyed);
        self.state.rcu(|l| Limits {
            cleared: Some(keyed.clone()),
            ..Limits::clone(l)
        });
        self.set.store(true, Ordering::Release);
        Ok(())
    }

    /// `f` on what answers for `buffer` under these limits, run once: the plain buffer when
    /// neither a clear nor a cache time shorter than the arena's applies (with all its fast
    /// paths, at the cost of one load when nothing was ever set), else the buffer's current
    /// store as a tf2 buffer of that cache time after that clear ([`CacheLimited`]). A mark
    /// taken on another arena (the bridge restarted since the clear) is first carried to this
    /// one by frame name ([`ClearMark::rekey`]); on a damaged arena it keeps its old keys and
    /// the query reports the damage.
    #[inline]
    pub fn query<R>(&self, buffer: &Buffer, f: impl FnOnce(&Answering<'_>) -> R) -> R {
        if !self.is_set() {
            return f(&Answering::Buffer(buffer));
        }
        self.query_limited(buffer, f)
    }

    #[inline(never)]
    fn query_limited<R>(&self, buffer: &Buffer, f: impl FnOnce(&Answering<'_>) -> R) -> R {
        let limits = self.state.load_full();
        buffer.with_store(|s| {
            let shorter = limits.cache_time_ns.filter(|&ns| ns < s.cache_time_ns());
            match (&limits.cleared, shorter) {
                (Some(keyed), ct) => {
                    let keyed = self.keyed_for(keyed, s);
                    f(&Answering::Limited(&CacheLimited::cleared(
                        s,
                        ct,
                        &keyed.mark,
                    )))
                }
                (None, Some(ns)) => f(&Answering::Limited(&CacheLimited::new(s, ns))),
                (None, None) => f(&Answering::Buffer(buffer)),
            }
        })
    }

    /// `keyed` for the ids of `s`: itself, or re-keyed by frame name and kept for the queries
    /// after (unless a clear replaced it meanwhile).
    fn keyed_for(&self, keyed: &Arc<KeyedMark>, s: &BufferStore) -> Arc<KeyedMark> {
        let instance = ids_of(s);
        if keyed.instance == instance {
            return keyed.clone();
        }
        let mut mark = keyed.mark.clone();
        if mark.rekey(s).is_err() {
            return keyed.clone();
        }
        let rekeyed = Arc::new(KeyedMark { instance, mark });
        self.state.rcu(|l| match &l.cleared {
            Some(c) if Arc::ptr_eq(c, keyed) => Limits {
                cleared: Some(rekeyed.clone()),
                ..Limits::clone(l)
            },
            _ => Limits::clone(l),
        });
        rekeyed
    }
}

/// What answers a query run through [`BufferLimits::query`]: the plain buffer, or its store
/// under the buffer's limits. Each method is the [`BufferCore`] query of the same name on
/// whichever it is.
pub enum Answering<'a> {
    /// Nothing limits the buffer.
    Buffer(&'a Buffer),
    /// The buffer's store as a tf2 buffer of its cache time after its clear.
    Limited(&'a CacheLimited<'a, BufferStore>),
}

/// `$call` with `$b` bound to the buffer or the limited store.
macro_rules! on_either {
    ($self:ident, $b:ident => $call:expr) => {
        match $self {
            Answering::Buffer($b) => $call,
            Answering::Limited($b) => $call,
        }
    };
}

impl Answering<'_> {
    /// [`BufferCore::lookup_transform`] (ns; 0 = latest).
    ///
    /// # Errors
    /// tf2's exceptions with tf2's texts ([`TransformError`]).
    pub fn lookup_transform<'n>(
        &self,
        target: &'n str,
        source: &'n str,
        time: i64,
    ) -> Result<TransformStamped<'n>, TransformError> {
        on_either!(self, b => b.lookup_transform(target, source, time))
    }

    /// [`BufferCore::lookup_transform_full`] (ns).
    ///
    /// # Errors
    /// As [`Answering::lookup_transform`].
    pub fn lookup_transform_full<'n>(
        &self,
        target: &'n str,
        target_time: i64,
        source: &'n str,
        source_time: i64,
        fixed: &str,
    ) -> Result<TransformStamped<'n>, TransformError> {
        on_either!(self, b => b.lookup_transform_full(target, target_time, source, source_time, fixed))
    }

    /// [`BufferCore::can_transform`] (ns).
    ///
    /// # Errors
    /// The error tf2 would report, in the class the lookup would throw.
    pub fn can_transform(
        &self,
        target: &str,
        source: &str,
        time: i64,
    ) -> Result<(), TransformError> {
        on_either!(self, b => b.can_transform(target, source, time))
    }

    /// [`BufferCore::can_transform_full`] (ns).
    ///
    /// # Errors
    /// As [`Answering::can_transform`].
    pub fn can_transform_full(
        &self,
        target: &str,
        target_time: i64,
        source: &str,
        source_time: i64,
        fixed: &str,
    ) -> Result<(), TransformError> {
        on_either!(self, b => b.can_transform_full(target, target_time, source, source_time, fixed))
    }

    /// [`BufferCore::get_latest_common_time`], ns.
    ///
    /// # Errors
    /// As [`BufferCore::get_latest_common_time`].
    pub fn get_latest_common_time(
        &self,
        target: &str,
        source: &str,
    ) -> Result<i64, TransformError> {
        on_either!(self, b => b.get_latest_common_time(target, source))
    }

    /// [`BufferCore::all_frames_as_string`].
    ///
    /// # Errors
    /// Only an unreadable store.
    pub fn all_frames_as_string(&self) -> Result<String, ArenaError> {
        on_either!(self, b => b.all_frames_as_string())
    }

    /// [`BufferCore::all_frames_as_yaml`] (`now` in ns).
    ///
    /// # Errors
    /// Only an unreadable store.
    pub fn all_frames_as_yaml(&self, now: i64) -> Result<String, ArenaError> {
        on_either!(self, b => b.all_frames_as_yaml(now))
    }

    /// [`BufferCore::all_frames_as_dot`] (`now` in ns).
    ///
    /// # Errors
    /// Only an unreadable store.
    pub fn all_frames_as_dot(&self, now: i64) -> Result<String, ArenaError> {
        on_either!(self, b => b.all_frames_as_dot(now))
    }

    /// [`BufferCore::chain_as_vector`] (ns).
    ///
    /// # Errors
    /// tf2's lookup exceptions and texts.
    pub fn chain_as_vector(
        &self,
        target: &str,
        target_time: i64,
        source: &str,
        source_time: i64,
        fixed: &str,
    ) -> Result<Vec<String>, TransformError> {
        on_either!(self, b => b.chain_as_vector(target, target_time, source, source_time, fixed))
    }

    /// [`BufferCore::lookup_velocity_full`] (ns; metres).
    ///
    /// # Errors
    /// tf2's lookup exceptions and texts.
    #[allow(clippy::too_many_arguments)]
    pub fn lookup_velocity_full(
        &self,
        tracking: &str,
        observation: &str,
        reference: &str,
        reference_point: [f64; 3],
        reference_point_frame: &str,
        time: i64,
        averaging_interval: i64,
    ) -> Result<Velocity, TransformError> {
        on_either!(self, b => b.lookup_velocity_full(
            tracking,
            observation,
            reference,
            reference_point,
            reference_point_frame,
            time,
            averaging_interval
        ))
    }

    /// [`BufferCore::get_cache_length`], ns: the shorter cache time when one applies.
    pub fn get_cache_length(&self) -> i64 {
        on_either!(self, b => b.get_cache_length())
    }
}
