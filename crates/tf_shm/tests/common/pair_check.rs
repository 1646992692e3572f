//! An arena's lookups (`lookup_pair` and by name: tf2's walk with the arena's close link
//! reads, see `FrameStore::link_at_close`) against tf2's walk with tf2's slerp on every link,
//! literally ([`Tf2Slerp`]), on the same view, for `tests/frame_pair*.rs`.
// Each test binary uses a different part.
#![allow(dead_code)]

use tf_shm::error::ArenaError;
use tf_shm::store::{FrameStore, HistoryLimit, HistorySpan, LinkAt};
use tf_shm::{ArenaView, FrameId, FramePair, Transform};

/// An arena view whose walk interpolates every link with tf2's slerp, literally: the view's
/// required `FrameStore` methods, without its close link read (the trait's default) and
/// without its cache of resolved names.
pub struct Tf2Slerp<'a>(pub &'a ArenaView);

impl FrameStore for Tf2Slerp<'_> {
    type Moment<'m>
        = Self
    where
        Self: 'm;

    fn in_one_moment<'s, R>(&'s self, mut query: impl FnMut(&Self::Moment<'s>) -> R) -> R {
        self.0.in_one_moment(|_| query(self))
    }
    fn frame_id(&self, name: &str) -> Result<Option<FrameId>, ArenaError> {
        self.0.frame_id(name)
    }
    fn frame_name(&self, id: FrameId) -> Result<Option<String>, ArenaError> {
        self.0.frame_name(id)
    }
    fn instance(&self) -> Option<[u8; 16]> {
        // The reference keeps nothing between lookups.
        None
    }
    fn frame_count(&self) -> FrameId {
        self.0.frame_count()
    }
    fn link_at(&self, id: FrameId, time: i64, interpolate: bool) -> Result<LinkAt, ArenaError> {
        self.0.link_at(id, time, interpolate)
    }
    fn latest_time_and_parent(&self, id: FrameId) -> Result<Option<(i64, FrameId)>, ArenaError> {
        self.0.latest_time_and_parent(id)
    }
    fn is_static(&self, id: FrameId) -> Result<bool, ArenaError> {
        self.0.is_static(id)
    }
    fn history_span(&self, id: FrameId) -> Result<Option<HistorySpan>, ArenaError> {
        self.0.history_span(id)
    }
    fn authority(&self, id: FrameId) -> Result<Option<String>, ArenaError> {
        self.0.authority(id)
    }
    fn cache_time_ns(&self) -> i64 {
        self.0.cache_time_ns()
    }
    fn link_at_within(
        &self,
        id: FrameId,
        time: i64,
        interpolate: bool,
        limit: HistoryLimit,
    ) -> Result<LinkAt, ArenaError> {
        self.0.link_at_within(id, time, interpolate, limit)
    }
    fn history_span_within(
        &self,
        id: FrameId,
        limit: HistoryLimit,
    ) -> Result<Option<HistorySpan>, ArenaError> {
        self.0.history_span_within(id, limit)
    }
    // The reference: tf2's slerp, not the arena's close read; no answer is kept.
    tf_shm::store_without_fast_reads!();
}

/// tf2's walk with tf2's slerp on every link ([`Tf2Slerp`]): the reference.
pub fn tf2_walk(
    view: &ArenaView,
    target: &str,
    source: &str,
    time: i64,
) -> Result<(i64, Transform), tf_shm::TransformError> {
    tf_shm::walk::lookup_transform(&Tf2Slerp(view), target, source, time)
        .map(|t| (t.stamp, t.transform))
}

/// One comparison of the arena's lookups with [`tf2_walk`], the pair called twice and the
/// names API once (the same bits as the pair): `Err` describes the first difference (a stamp,
/// a value off by `tol` or more, an error class or text); otherwise the reference's answer, or
/// its error text.
pub fn compare(
    view: &ArenaView,
    pair: &mut FramePair,
    time: i64,
    tol: f64,
) -> Result<Result<(i64, Transform), String>, String> {
    let want = tf2_walk(view, pair.target(), pair.source(), time);
    let bits = |r: &Result<(i64, Transform), tf_shm::TransformError>| {
        r.as_ref()
            .map(|(stamp, t)| {
                let mut v = vec![*stamp as u64];
                v.extend(t.translation.iter().chain(&t.rotation).map(|x| x.to_bits()));
                v
            })
            .map_err(|e| e.to_string())
    };
    let by_name = view
        .lookup_transform(pair.target(), pair.source(), time)
        .map(|t| (t.stamp, t.transform));
    for call in 0..2 {
        let got = view.lookup_pair(pair, time);
        if bits(&got) != bits(&by_name) {
            return Err(format!(
                "{} <- {} at {time}, call {call}: pair {got:?} vs names {by_name:?}",
                pair.target(),
                pair.source()
            ));
        }
        let ctx = format!(
            "{} <- {} at {time}, call {call}",
            pair.target(),
            pair.source()
        );
        match (&want, &got) {
            (Ok((ws, wt)), Ok((gs, gt))) => {
                if ws != gs {
                    return Err(format!("{ctx}: stamp {ws} vs {gs}"));
                }
                let w = [wt.translation.as_slice(), wt.rotation.as_slice()].concat();
                let g = [gt.translation.as_slice(), gt.rotation.as_slice()].concat();
                // NaN only where the walk has NaN; infinities equal.
                let differ = |(a, b): (&f64, &f64)| {
                    a != b && a.is_nan() != b.is_nan() || (a - b).abs() >= tol
                };
                if w.iter().zip(&g).any(differ) {
                    return Err(format!("{ctx}: walk {w:?} vs pair {g:?}"));
                }
            }
            (Err(we), Err(ge)) => {
                if we.class_name() != ge.class_name() || we.to_string() != ge.to_string() {
                    return Err(format!("{ctx}: walk error {we:?} vs pair error {ge:?}"));
                }
            }
            _ => return Err(format!("{ctx}: walk {want:?}, pair {got:?}")),
        }
    }
    Ok(want.map_err(|e| e.to_string()))
}

/// [`compare`] with the claim's tolerance (1e-12), panicking on a difference; the
/// reference's answer or error text.
pub fn agree(
    view: &ArenaView,
    pair: &mut FramePair,
    time: i64,
) -> Result<(i64, Transform), String> {
    compare(view, pair, time, 1e-12).unwrap_or_else(|d| panic!("{d}"))
}

/// [`agree`] where only the agreement matters.
pub fn assert_agree(view: &ArenaView, pair: &mut FramePair, time: i64) {
    let _ = agree(view, pair, time);
}

/// Knuth's MMIX LCG: deterministic random histories.
pub struct Lcg(pub u64);

impl Lcg {
    /// Uniform-ish in `0..n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % n
    }
}

/// `count` pairs of frames drawn from `names` (a frame may be paired with itself).
pub fn random_pairs(rng: &mut Lcg, names: &[String], count: usize) -> Vec<FramePair> {
    let n = names.len() as u64;
    (0..count)
        .map(|_| {
            let a = rng.below(n) as usize;
            let b = rng.below(n) as usize;
            FramePair::new(&names[a], &names[b])
        })
        .collect()
}
