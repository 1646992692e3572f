//! The implementations under test ("arms"), each loaded with every scenario's data.
//!
//! Each arm answers a cell (scenario × query kind) two ways: one query at a time for the
//! agreement check, and a tight loop for timing. The loop cycles through the cell's query list
//! so consecutive lookups ask different times (and, in the tree, different pairs): a single
//! repeated query would measure a branch-predicted, cache-hot best case nobody sees.

use std::hint::black_box;

use tf_shm::validate::TransformInput;
use tf_shm::{ArenaView, ArenaWriter, FramePair};
use tf_tree::{
    Capacity, EdgeCfg, InterpPolicy, Iso3, Plan, Quat, Stamp, SystemDomain, Tree, TreeBuilder, Vec3,
};

use crate::scenario::{Query, Scenario, CACHE_TIME_S};
use crate::tf2::Tf2Buffer;

/// A lookup's result, as every arm can give it.
#[derive(Clone, Copy, Debug)]
pub struct Answer {
    /// tf2 and tf_shm return the resolved stamp; tf_tree does not.
    pub stamp: Option<i64>,
    pub translation: [f64; 3],
    /// `[x, y, z, w]`.
    pub rotation: [f64; 4],
}

/// One (scenario, query kind) combination, with the queries in every arm's preferred form.
pub struct Cell<'a> {
    pub sc: usize,
    pub scenario: &'a Scenario,
    pub queries: Vec<Query>,
    pub pair_idx: Vec<i32>,
    pub times: Vec<i64>,
}

impl<'a> Cell<'a> {
    pub fn new(sc: usize, scenario: &'a Scenario, queries: Vec<Query>) -> Cell<'a> {
        Cell {
            sc,
            scenario,
            pair_idx: queries.iter().map(|q| q.pair as i32).collect(),
            times: queries.iter().map(|q| q.time).collect(),
            queries,
        }
    }
}

pub trait Arm {
    fn name(&self) -> &'static str;
    /// Whether the arm answers this cell at all (cells it does not are shown as "—").
    fn supports(&self, _cell: &Cell) -> bool {
        true
    }
    fn answer(&mut self, cell: &Cell, q: &Query) -> Result<Answer, String>;
    /// `n` lookups cycling over the cell's queries; returns a checksum (Σ translation.x).
    fn run(&mut self, cell: &Cell, n: usize) -> f64;
}

/// Writes a scenario through tf_shm's writer, interleaving links sample by sample as a live
/// `/tf` stream would (statics once, first).
pub fn fill_tf_shm(w: &mut ArenaWriter, sc: &Scenario) {
    for l in sc.links.iter().filter(|l| l.is_static) {
        let s = &l.samples[0];
        w.set_transform(
            &TransformInput {
                frame_id: &l.parent,
                child_frame_id: &l.child,
                stamp: s.stamp,
                translation: s.translation,
                rotation: s.rotation,
            },
            "bench",
            true,
        )
        .expect("static sample accepted");
    }
    let n = sc.links.iter().map(|l| l.samples.len()).max().unwrap_or(0);
    for k in 0..n {
        for l in sc.links.iter().filter(|l| !l.is_static) {
            let s = &l.samples[k];
            w.set_transform(
                &TransformInput {
                    frame_id: &l.parent,
                    child_frame_id: &l.child,
                    stamp: s.stamp,
                    translation: s.translation,
                    rotation: s.rotation,
                },
                "bench",
                false,
            )
            .expect("dynamic sample accepted");
        }
    }
}

/// tf_shm: `lookup_pair` (resolved ids) or `lookup_transform` (names) on a view, which is
/// either in-process or a read-only mapping of an arena another process writes.
pub struct TfShm {
    name: &'static str,
    views: Vec<ArenaView>,
    /// Per scenario, one resolved handle per pair (as a hot loop would keep them).
    pairs: Vec<Vec<FramePair>>,
    how: How,
}

/// How a [`TfShm`] arm looks up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum How {
    /// `lookup_pair` on a `FramePair` per pair, kept across lookups.
    Pair,
    /// `lookup_transform` by names (the per-thread cache of pairs).
    Names,
    /// `tf_shm::walk::lookup_transform`: by names, keeping nothing between lookups — at time
    /// 0 what a lookup costs when its chain changed since the last one (a pair keeps its
    /// time-0 answer only while no link of it changes).
    Walk,
}

impl TfShm {
    pub fn new(
        name: &'static str,
        views: Vec<ArenaView>,
        scenarios: &[Scenario],
        how: How,
    ) -> TfShm {
        let pairs = scenarios
            .iter()
            .map(|sc| sc.pairs.iter().map(|(t, s)| FramePair::new(t, s)).collect())
            .collect();
        TfShm {
            name,
            views,
            pairs,
            how,
        }
    }
}

impl Arm for TfShm {
    fn name(&self) -> &'static str {
        self.name
    }

    fn answer(&mut self, cell: &Cell, q: &Query) -> Result<Answer, String> {
        let view = &self.views[cell.sc];
        let (target, source) = &cell.scenario.pairs[q.pair];
        let (stamp, t) = match self.how {
            How::Pair => view
                .lookup_pair(&mut self.pairs[cell.sc][q.pair], q.time)
                .map_err(|e| e.to_string())?,
            How::Names => {
                let r = view
                    .lookup_transform(target, source, q.time)
                    .map_err(|e| e.to_string())?;
                (r.stamp, r.transform)
            }
            How::Walk => {
                let r = tf_shm::walk::lookup_transform(view, target, source, q.time)
                    .map_err(|e| e.to_string())?;
                (r.stamp, r.transform)
            }
        };
        Ok(Answer {
            stamp: Some(stamp),
            translation: t.translation,
            rotation: t.rotation,
        })
    }

    fn run(&mut self, cell: &Cell, n: usize) -> f64 {
        let view = &self.views[cell.sc];
        let qs = &cell.queries;
        let mut sum = 0.0;
        let mut i = 0;
        if self.how == How::Pair {
            let pairs = &mut self.pairs[cell.sc];
            for _ in 0..n {
                let q = &qs[i];
                sum += match view.lookup_pair(&mut pairs[q.pair], black_box(q.time)) {
                    Ok((_, t)) => t.translation[0],
                    Err(_) => f64::NAN,
                };
                i = if i + 1 == qs.len() { 0 } else { i + 1 };
            }
        } else {
            let names = &cell.scenario.pairs;
            let walk = self.how == How::Walk;
            for _ in 0..n {
                let q = &qs[i];
                let (target, source) = &names[q.pair];
                let r = if walk {
                    tf_shm::walk::lookup_transform(view, target, source, black_box(q.time))
                } else {
                    view.lookup_transform(target, source, black_box(q.time))
                };
                sum += match r {
                    Ok(r) => r.transform.translation[0],
                    Err(_) => f64::NAN,
                };
                i = if i + 1 == qs.len() { 0 } else { i + 1 };
            }
        }
        sum
    }
}

/// tf2 `BufferCore` (C++), one per scenario.
pub struct Tf2 {
    pub buffers: Vec<Tf2Buffer>,
}

impl Tf2 {
    pub fn new(scenarios: &[Scenario]) -> Tf2 {
        let buffers = scenarios
            .iter()
            .map(|sc| {
                let mut b = Tf2Buffer::new(CACHE_TIME_S);
                for l in sc.links.iter().filter(|l| l.is_static) {
                    let s = &l.samples[0];
                    assert!(b.set(
                        &l.parent,
                        &l.child,
                        s.stamp,
                        &s.translation,
                        &s.rotation,
                        true
                    ));
                }
                let n = sc.links.iter().map(|l| l.samples.len()).max().unwrap_or(0);
                for k in 0..n {
                    for l in sc.links.iter().filter(|l| !l.is_static) {
                        let s = &l.samples[k];
                        assert!(b.set(
                            &l.parent,
                            &l.child,
                            s.stamp,
                            &s.translation,
                            &s.rotation,
                            false
                        ));
                    }
                }
                for (i, (t, s)) in sc.pairs.iter().enumerate() {
                    assert_eq!(b.pair(t, s), i as i32);
                }
                b
            })
            .collect();
        Tf2 { buffers }
    }
}

impl Arm for Tf2 {
    fn name(&self) -> &'static str {
        "tf2"
    }

    fn answer(&mut self, cell: &Cell, q: &Query) -> Result<Answer, String> {
        let (stamp, o) = self.buffers[cell.sc]
            .lookup(q.pair as i32, q.time)
            .map_err(|code| format!("tf2 exception code {code}"))?;
        Ok(Answer {
            stamp: Some(stamp),
            translation: [o[0], o[1], o[2]],
            rotation: [o[3], o[4], o[5], o[6]],
        })
    }

    fn run(&mut self, cell: &Cell, n: usize) -> f64 {
        self.buffers[cell.sc].run(&cell.pair_idx, &cell.times, n)
    }
}

/// tf_tree 0.0.9, in-process (`TreeBuilder::build`, heap arena), `LerpSlerp` (its
/// tf2-compatible interpolation) on every edge. Timed path: precompiled `Plan`s evaluated
/// with one `Guard` per batch (`Plan::at` / `Plan::latest_common`), its fastest per-lookup
/// API; `Tree::lookup` (names, plan cache) would be slower.
pub struct TfTree {
    trees: Vec<Tree>,
    plans: Vec<Vec<Plan>>,
}

fn iso(s: &crate::scenario::Sample) -> Iso3 {
    let [x, y, z, w] = s.rotation;
    let [tx, ty, tz] = s.translation;
    Iso3::new(Quat::new(w, x, y, z), Vec3::new(tx, ty, tz))
}

impl TfTree {
    pub fn new(scenarios: &[Scenario]) -> Result<TfTree, String> {
        let mut trees = Vec::new();
        let mut plans = Vec::new();
        for sc in scenarios {
            let mut b = TreeBuilder::new().default_interp(InterpPolicy::LerpSlerp);
            for l in &sc.links {
                b = if l.is_static {
                    b.static_edge(&l.parent, &l.child, &iso(&l.samples[0]))
                } else {
                    b.dynamic_edge(
                        &l.parent,
                        &l.child,
                        EdgeCfg::new(Capacity::history(100.0, CACHE_TIME_S)),
                    )
                };
            }
            let tree = b.build().map_err(|e| format!("tf_tree build: {e}"))?;
            for l in sc.links.iter().filter(|l| !l.is_static) {
                let child = tree.frame(&l.child).map_err(|e| format!("{e:?}"))?;
                let parent = tree.frame(&l.parent).map_err(|e| format!("{e:?}"))?;
                let w = tree
                    .claim(child, parent)
                    .map_err(|e| format!("tf_tree claim: {e:?}"))?;
                for s in &l.samples {
                    w.push(s.stamp, &iso(s))
                        .map_err(|e| format!("tf_tree push: {e:?}"))?;
                }
            }
            let mut ps = Vec::new();
            for (t, s) in &sc.pairs {
                let t = tree.frame(t).map_err(|e| format!("{e:?}"))?;
                let s = tree.frame(s).map_err(|e| format!("{e:?}"))?;
                ps.push(
                    tree.plan(t, s)
                        .map_err(|e| format!("tf_tree plan: {e:?}"))?,
                );
            }
            trees.push(tree);
            plans.push(ps);
        }
        Ok(TfTree { trees, plans })
    }

    pub fn tree(&self, sc: usize) -> &Tree {
        &self.trees[sc]
    }

    pub fn plans(&self, sc: usize) -> &[Plan] {
        &self.plans[sc]
    }
}

/// One tf_tree evaluation: `at(t)`, or tf2's time 0 as `latest_common`.
#[inline]
pub fn tf_tree_eval(
    plan: &Plan,
    g: &tf_tree::Guard,
    time: i64,
) -> Result<Iso3, tf_tree::LookupError> {
    if time == 0 {
        plan.latest_common(g)
    } else {
        plan.at(g, Stamp::<SystemDomain>::from_nanos(time))
    }
}

impl Arm for TfTree {
    fn name(&self) -> &'static str {
        "tf_tree"
    }

    fn answer(&mut self, cell: &Cell, q: &Query) -> Result<Answer, String> {
        let g = self.trees[cell.sc].guard();
        let p =
            tf_tree_eval(&self.plans[cell.sc][q.pair], &g, q.time).map_err(|e| format!("{e:?}"))?;
        Ok(Answer {
            stamp: None,
            translation: [p.t.x, p.t.y, p.t.z],
            rotation: [p.q.x, p.q.y, p.q.z, p.q.w],
        })
    }

    fn run(&mut self, cell: &Cell, n: usize) -> f64 {
        let g = self.trees[cell.sc].guard();
        let plans = &self.plans[cell.sc];
        let qs = &cell.queries;
        let mut sum = 0.0;
        let mut i = 0;
        for _ in 0..n {
            let q = &qs[i];
            sum += match tf_tree_eval(&plans[q.pair], &g, black_box(q.time)) {
                Ok(p) => p.t.x,
                Err(_) => f64::NAN,
            };
            i = if i + 1 == qs.len() { 0 } else { i + 1 };
        }
        sum
    }
}
