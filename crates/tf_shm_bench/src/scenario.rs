//! The scenarios every arm is fed: the same links, the same samples, the same queries.
//!
//! Data is generated, not random-at-run-time: a fixed-seed LCG makes every run (and the writer
//! child process) build bit-identical scenarios, so the arms' answers can be compared exactly.

/// 100 Hz, as robot_state_publisher / odometry typically publish.
pub const PERIOD_NS: i64 = 10_000_000;
/// 10 s of history per dynamic link (tf2's default cache time) → 1001 samples.
pub const SAMPLES_PER_LINK: i64 = 1001;
/// First stamp: 1000 s, far from 0 so no arm treats it as "latest".
pub const T0: i64 = 1_000_000_000_000;
/// Newest stamp of every dynamic link.
pub const T_LAST: i64 = T0 + (SAMPLES_PER_LINK - 1) * PERIOD_NS;
/// tf2's default cache time, s.
pub const CACHE_TIME_S: f64 = 10.0;

/// One stored sample of a link (`T_parent_child`).
#[derive(Clone, Copy, Debug)]
pub struct Sample {
    pub stamp: i64,
    pub translation: [f64; 3],
    /// `[x, y, z, w]`, unit norm to the last bit tf2 ROS 1 checks (1e-6).
    pub rotation: [f64; 4],
}

/// A parent → child edge with its history (one sample for a static link).
#[derive(Clone, Debug)]
pub struct Link {
    pub parent: String,
    pub child: String,
    pub is_static: bool,
    pub samples: Vec<Sample>,
}

/// A topology with data and the frame pairs queried on it.
#[derive(Clone, Debug)]
pub struct Scenario {
    pub name: String,
    pub links: Vec<Link>,
    /// `(target, source)` pairs; queries index into this.
    pub pairs: Vec<(String, String)>,
}

/// Which query times a cell uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeKind {
    /// Off-grid times spread uniformly over the whole 10 s window: every link interpolates,
    /// and list-walking caches (tf2's) pay for the distance from the newest sample.
    Interp,
    /// Off-grid times in the newest 100 ms: what a control loop asks for.
    Recent,
    /// Exact sample stamps, spread over the window: no interpolation.
    Exact,
    /// Time 0: tf2's latest common time.
    Latest,
}

impl TimeKind {
    pub const ALL: [TimeKind; 4] = [
        TimeKind::Interp,
        TimeKind::Recent,
        TimeKind::Exact,
        TimeKind::Latest,
    ];

    pub fn label(self) -> &'static str {
        match self {
            TimeKind::Interp => "interp (10 s window)",
            TimeKind::Recent => "interp (newest 100 ms)",
            TimeKind::Exact => "exact stamp",
            TimeKind::Latest => "time 0",
        }
    }
}

/// One lookup: `pairs[pair]` at `time` ns.
#[derive(Clone, Copy, Debug)]
pub struct Query {
    pub pair: usize,
    pub time: i64,
}

/// Minimal deterministic generator (Knuth's MMIX LCG); quality is irrelevant here.
pub struct Lcg(u64);

impl Lcg {
    pub fn new(seed: u64) -> Lcg {
        Lcg(seed ^ 0x9e37_79b9_7f4a_7c15)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 11
    }

    /// Uniform in `0..n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
}

/// A smooth, link-specific motion so interpolation is exercised on real rotations.
fn pose(link: usize, stamp: i64) -> ([f64; 3], [f64; 4]) {
    let t = (stamp - T0) as f64 * 1e-9;
    let i = link as f64;
    let translation = [
        0.5 + 0.1 * (0.7 * t + i).sin(),
        0.2 * (0.3 * t + 2.0 * i).cos(),
        0.05 * i,
    ];
    // Axis varies per link; angle stays in (-0.2, 0.8) rad so w > 0 (no sign ambiguity in
    // what is stored) and consecutive samples are close (slerp well inside one arc).
    let axis = [
        1.0,
        0.5 * ((link % 3) as f64),
        1.0 - 0.1 * ((link % 5) as f64),
    ];
    let n = (axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]).sqrt();
    let angle = 0.3 + 0.5 * (0.2 * t + i).sin();
    let (s, c) = (angle / 2.0).sin_cos();
    let mut q = [axis[0] / n * s, axis[1] / n * s, axis[2] / n * s, c];
    let qn = q.iter().map(|v| v * v).sum::<f64>().sqrt();
    for v in &mut q {
        *v /= qn;
    }
    (translation, q)
}

fn link(index: usize, parent: String, child: String, is_static: bool) -> Link {
    let stamps: Vec<i64> = if is_static {
        vec![T0]
    } else {
        (0..SAMPLES_PER_LINK).map(|k| T0 + k * PERIOD_NS).collect()
    };
    let samples = stamps
        .into_iter()
        .map(|stamp| {
            let (translation, rotation) = pose(index, stamp);
            Sample {
                stamp,
                translation,
                rotation,
            }
        })
        .collect();
    Link {
        parent,
        child,
        is_static,
        samples,
    }
}

/// A chain `c0 → c1 → … → c<depth>` of dynamic links; queried as `T_c0_c<depth>`.
pub fn chain(depth: usize) -> Scenario {
    let links = (1..=depth)
        .map(|i| link(i, format!("c{}", i - 1), format!("c{i}"), false))
        .collect();
    Scenario {
        name: format!("chain depth {depth}"),
        links,
        pairs: vec![("c0".into(), format!("c{depth}"))],
    }
}

/// A 200-frame random recursive tree (parent of `t<i>` uniform among `t0..t<i-1>`: branching,
/// paths of ~2–12 links), a quarter of its links static, queried between 64 random pairs of
/// frames so lookups go up one branch and down another.
pub fn tree200() -> Scenario {
    let mut rng = Lcg::new(200);
    let parents: Vec<usize> = (1..200).map(|i| rng.below(i as u64) as usize).collect();
    let links = (1..200)
        .map(|i| {
            link(
                i,
                format!("t{}", parents[i - 1]),
                format!("t{i}"),
                i % 4 == 0,
            )
        })
        .collect();
    let mut pairs = Vec::new();
    while pairs.len() < 64 {
        let a = 1 + rng.below(199);
        let b = 1 + rng.below(199);
        if a != b {
            pairs.push((format!("t{a}"), format!("t{b}")));
        }
    }
    Scenario {
        name: "tree 200 frames".into(),
        links,
        pairs,
    }
}

/// The scenarios of the comparison, in table order.
pub fn all() -> Vec<Scenario> {
    let mut v: Vec<Scenario> = [1, 3, 8, 15].into_iter().map(chain).collect();
    v.push(tree200());
    v
}

/// `n` queries of `kind` over `sc`'s pairs, deterministic per (scenario, kind).
pub fn queries(sc: &Scenario, kind: TimeKind, n: usize) -> Vec<Query> {
    let mut rng = Lcg::new(sc.links.len() as u64 * 31 + kind as u64);
    (0..n)
        .map(|i| {
            let pair = i % sc.pairs.len();
            // Off-grid: 1..9 ms (+ some µs) after a sample, never on one.
            let off = || 1_000_000 + (Lcg::new(i as u64).below(8_000_000) as i64);
            let time = match kind {
                TimeKind::Interp => {
                    T0 + (1 + rng.below(SAMPLES_PER_LINK as u64 - 2) as i64) * PERIOD_NS + off()
                }
                TimeKind::Recent => T_LAST - (1 + rng.below(10) as i64) * PERIOD_NS + off(),
                TimeKind::Exact => {
                    T0 + (1 + rng.below(SAMPLES_PER_LINK as u64 - 2) as i64) * PERIOD_NS
                }
                TimeKind::Latest => 0,
            };
            Query { pair, time }
        })
        .collect()
}
