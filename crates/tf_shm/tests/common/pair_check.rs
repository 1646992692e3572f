//! `lookup_pair` (compiled paths) against `walk::lookup_transform` (tf2's literal walk) on the same
//! view, for `tests/frame_pair*.rs`.
// Each test binary uses a different part.
#![allow(dead_code)]

use tf_shm::{ArenaView, FramePair, Transform};

/// One comparison of pair vs walk, the pair called twice (the second call goes through
/// whatever the first compiled): `Err` describes the first difference (a stamp, a value off by
/// `tol` or more, an error class or text); otherwise the walk's answer, or its error text.
pub fn compare(
    view: &ArenaView,
    pair: &mut FramePair,
    time: i64,
    tol: f64,
) -> Result<Result<(i64, Transform), String>, String> {
    let want = tf_shm::walk::lookup_transform(view, pair.target(), pair.source(), time)
        .map(|t| (t.stamp, t.transform));
    for call in 0..2 {
        let got = view.lookup_pair(pair, time);
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

/// [`compare`] with the claim's tolerance (1e-12), panicking on a difference; the walk's
/// answer or error text.
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
