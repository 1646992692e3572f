//! `/tf_static` publishers the bridge sees in the ROS graph but has received nothing from.
//!
//! A static broadcaster sends its transforms once; the bridge's transient-local subscription
//! gets them when it matches the publisher. A publisher that never delivers leaves its static
//! transforms out of the arena for good, and nothing else would say so: a volatile publisher
//! (it cannot match a transient-local subscription), or a latched sample that DDS did not
//! deliver (seen once after a SIGKILLed bridge was restarted at once); a broadcaster that has
//! sent nothing yet looks the same, and is counted too. So the graph's
//! publishers are compared, by endpoint id, with the publishers messages came from; one in the
//! graph for [`UNHEARD_AFTER`] without a message is unheard. The bridge logs them and counts
//! them in the arena's header for `tf_shm doctor`.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

/// How long a publisher may be in the graph before it counts as unheard: latched samples
/// reach a restarted subscriber 2.5–3.5 s after it starts in our measurements (as the bound of
/// `ready::GRACE`).
pub const UNHEARD_AFTER: Duration = Duration::from_secs(6);

/// A publisher as the graph shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Publisher {
    /// The endpoint id's first 16 bytes (what a message's info carries as its publisher).
    pub gid: [u8; 16],
    /// Its node, `namespace/name`.
    pub node: String,
    /// Its durability, as rmw reports it (`TransientLocal`, `Volatile`, …).
    pub durability: String,
    /// Whether its QoS lets it deliver its latched sample to the bridge's transient-local,
    /// reliable subscription (a volatile or best-effort writer cannot match it).
    pub can_latch: bool,
}

/// What the bridge knows of the `/tf_static` publishers.
#[derive(Default)]
pub struct StaticPublishers {
    /// Publishers in the graph at the last update, with when each was first seen there.
    seen: HashMap<[u8; 16], (Instant, Publisher)>,
    /// Publishers a message came from.
    heard: HashSet<[u8; 16]>,
    /// When the graph's set of publishers last changed (`None` before the first update).
    changed_at: Option<Instant>,
}

impl StaticPublishers {
    /// A message came from `gid`.
    pub fn heard(&mut self, gid: [u8; 16]) {
        self.heard.insert(gid);
    }

    /// The graph's publishers at `now`; returns those unheard (in the graph for
    /// [`UNHEARD_AFTER`] or longer, nothing received from them), in the graph's order.
    pub fn update(&mut self, now: Instant, graph: Vec<Publisher>) -> Vec<Publisher> {
        let mut seen = HashMap::with_capacity(graph.len());
        let mut unheard = Vec::new();
        for p in graph {
            let first = self.seen.get(&p.gid).map_or(now, |(t, _)| *t);
            if !self.heard.contains(&p.gid) && now.duration_since(first) >= UNHEARD_AFTER {
                unheard.push(p.clone());
            }
            seen.insert(p.gid, (first, p));
        }
        // A publisher that left the graph does not come back under its id: forget it (the
        // memory stays as large as the graph). One heard of before the graph showed it stays.
        for gone in self.seen.keys().filter(|g| !seen.contains_key(*g)) {
            self.heard.remove(gone);
        }
        let same = self.changed_at.is_some()
            && seen.len() == self.seen.len()
            && seen.keys().all(|g| self.seen.contains_key(g));
        if !same {
            self.changed_at = Some(now);
        }
        self.seen = seen;
        unheard
    }

    /// What a starting bridge knows of the static transforms, for [`crate::ready`]: whether
    /// every publisher in the graph that can deliver a latched sample has delivered, and how
    /// long the graph's set of publishers has been as it is (discovery goes on for a while
    /// after start: a publisher not in the graph yet is one the first answer cannot count).
    /// `None` before the graph was first read.
    pub fn evidence(&self, now: Instant) -> Option<StaticsEvidence> {
        Some(StaticsEvidence {
            all_heard: self
                .seen
                .iter()
                .all(|(g, (_, p))| !p.can_latch || self.heard.contains(g)),
            graph_unchanged_for: now.saturating_duration_since(self.changed_at?),
        })
    }
}

/// See [`StaticPublishers::evidence`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StaticsEvidence {
    pub all_heard: bool,
    pub graph_unchanged_for: Duration,
}

/// A graph endpoint id as a message's publisher id: its first 16 bytes (rmw's GUID; the rest of
/// rmw's 24-byte storage is zero).
pub fn gid16(endpoint_gid: &[u8]) -> [u8; 16] {
    let mut g = [0u8; 16];
    let n = endpoint_gid.len().min(16);
    g[..n].copy_from_slice(&endpoint_gid[..n]);
    g
}

#[cfg(test)]
mod tests {
    use super::*;

    fn publisher(id: u8) -> Publisher {
        Publisher {
            gid: [id; 16],
            node: format!("/node{id}"),
            durability: "Volatile".into(),
            can_latch: false,
        }
    }

    fn latched(id: u8) -> Publisher {
        Publisher {
            durability: "TransientLocal".into(),
            can_latch: true,
            ..publisher(id)
        }
    }

    #[test]
    fn the_evidence_counts_publishers_that_can_latch_and_times_the_graph() {
        let t0 = Instant::now();
        let mut s = StaticPublishers::default();
        assert_eq!(s.evidence(t0), None, "the graph not read yet");
        s.update(t0, vec![latched(1), publisher(2)]);
        let e = s.evidence(t0 + UNHEARD_AFTER / 8).unwrap();
        assert!(!e.all_heard, "a latched publisher not heard from");
        assert_eq!(e.graph_unchanged_for, UNHEARD_AFTER / 8);
        // Heard from: the volatile one cannot deliver and is not waited for.
        s.heard([1; 16]);
        s.update(t0 + UNHEARD_AFTER / 4, vec![latched(1), publisher(2)]);
        let e = s.evidence(t0 + UNHEARD_AFTER / 4).unwrap();
        assert!(e.all_heard);
        assert_eq!(e.graph_unchanged_for, UNHEARD_AFTER / 4, "the same set");
        // Discovery finds another one: not heard from, and the graph changed just now.
        let later = t0 + UNHEARD_AFTER / 2;
        s.update(later, vec![latched(1), publisher(2), latched(3)]);
        assert_eq!(
            s.evidence(later),
            Some(StaticsEvidence {
                all_heard: false,
                graph_unchanged_for: Duration::ZERO
            })
        );
    }

    #[test]
    fn a_publisher_in_the_graph_that_never_delivers_is_unheard_after_the_bound() {
        let t0 = Instant::now();
        let mut s = StaticPublishers::default();
        let graph = || vec![publisher(1), publisher(2)];
        assert!(s.update(t0, graph()).is_empty());
        s.heard([1; 16]);
        assert!(s.update(t0 + UNHEARD_AFTER / 2, graph()).is_empty());
        assert_eq!(s.update(t0 + UNHEARD_AFTER, graph()), vec![publisher(2)]);
        // It delivers late: no longer unheard.
        s.heard([2; 16]);
        assert!(s.update(t0 + UNHEARD_AFTER * 2, graph()).is_empty());
    }

    #[test]
    fn a_publisher_that_left_the_graph_is_forgotten_and_timed_again_if_it_returns() {
        let t0 = Instant::now();
        let mut s = StaticPublishers::default();
        s.update(t0, vec![publisher(3)]);
        assert_eq!(s.update(t0 + UNHEARD_AFTER, vec![publisher(3)]).len(), 1);
        assert!(s.update(t0 + UNHEARD_AFTER, vec![]).is_empty());
        let back = t0 + UNHEARD_AFTER * 2;
        assert!(s.update(back, vec![publisher(3)]).is_empty());
        assert_eq!(s.update(back + UNHEARD_AFTER, vec![publisher(3)]).len(), 1);
    }

    #[test]
    fn what_is_remembered_is_bounded_by_the_graph() {
        let t0 = Instant::now();
        let mut s = StaticPublishers::default();
        // Heard before the graph shows it: kept, and never unheard once it appears.
        s.heard([4; 16]);
        s.update(t0, vec![]);
        s.update(t0, vec![publisher(4)]);
        assert!(s.update(t0 + UNHEARD_AFTER, vec![publisher(4)]).is_empty());
        // Gone from the graph: forgotten.
        s.update(t0 + UNHEARD_AFTER, vec![]);
        assert!(s.heard.is_empty() && s.seen.is_empty());
    }

    #[test]
    fn endpoint_ids_compare_by_their_first_16_bytes() {
        let mut e = [7u8; 24];
        e[16..].fill(0);
        assert_eq!(gid16(&e), [7u8; 16]);
        assert_eq!(gid16(&[1, 2]), {
            let mut g = [0u8; 16];
            g[..2].copy_from_slice(&[1, 2]);
            g
        });
    }
}
