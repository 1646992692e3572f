//! When a freshly started bridge declares its arena ready. Consumers of the arena it replaces
//! keep answering from the old one until then, so "ready" means: what a consumer was reading
//! before the restart is back. The bridge knows neither the old arena nor the publishers'
//! rates, so it waits for evidence, bounded in time:
//!
//! - `/tf_static`: a message from every static publisher in the ROS graph that can deliver
//!   its latched transforms (transient-local and reliable), by publisher id, with the graph's
//!   set of publishers unchanged for `GRAPH_SETTLE` and `DISCOVERY` since the subscriptions
//!   (discovery is still finding publishers right after start: an empty or partial graph is
//!   not evidence), and the topic quiet for `QUIET`;
//! - `/tf`: the first message stored `TF_SETTLE` ago (publishers at 10 Hz or faster have all
//!   sent once by then);
//! - or, whatever arrived, `GRACE` after the subscriptions were made: a bridge whose
//!   publishers are gone is still followed.

use std::time::{Duration, Instant};

use crate::static_publishers::StaticsEvidence;

/// The graph's set of `/tf_static` publishers must have been unchanged this long, and the
/// subscriptions made `DISCOVERY` ago: a bridge restarted next to running broadcasters declared
/// ready 0.5 s after start, before discovery had shown them all, and its consumers went
/// without those static frames for up to 2 s (8 of 40 restarts); with the graph settled for
/// 1 s alone, 3 of 24 restarts next to six broadcaster processes still did (a participant is
/// found as late as its next announcement, 3 s apart by Fast DDS's default).
pub const GRAPH_SETTLE: Duration = Duration::from_secs(1);
/// See [`GRAPH_SETTLE`].
pub const DISCOVERY: Duration = Duration::from_millis(3500);
/// The static topic must have been quiet this long (latched deliveries come in a burst).
pub const QUIET: Duration = Duration::from_millis(250);
/// Time after the first `/tf` message for the other dynamic publishers to be heard.
pub const TF_SETTLE: Duration = Duration::from_millis(250);
/// Ready at the latest this long after the subscriptions were made. Latched `/tf_static`
/// samples reach a restarted subscriber 2.5–3.5 s after it starts in our measurements (Fast
/// DDS, loopback), so the bound must be well above that.
pub const GRACE: Duration = Duration::from_secs(6);

/// What has arrived since the bridge subscribed.
#[derive(Debug)]
pub struct Readiness {
    start: Instant,
    first_tf: Option<Instant>,
    last_static: Option<Instant>,
    ready: bool,
}

impl Readiness {
    /// Subscriptions made at `start`.
    pub fn new(start: Instant) -> Readiness {
        Readiness {
            start,
            first_tf: None,
            last_static: None,
            ready: false,
        }
    }

    /// A message was written at `now`.
    pub fn received(&mut self, is_static: bool, now: Instant) {
        if is_static {
            self.last_static = Some(now);
        } else if self.first_tf.is_none() {
            self.first_tf = Some(now);
        }
    }

    /// Whether to declare ready at `now`, with what the graph says of the static publishers
    /// (`None`: not read yet). True once, then always.
    pub fn check(&mut self, now: Instant, statics: Option<StaticsEvidence>) -> bool {
        if self.ready {
            return true;
        }
        let statics_in = statics
            .is_some_and(|e| e.all_heard && e.graph_unchanged_for >= GRAPH_SETTLE)
            && now.duration_since(self.start) >= DISCOVERY
            && self
                .last_static
                .is_none_or(|t| now.duration_since(t) >= QUIET);
        let tf_in = self
            .first_tf
            .is_some_and(|t| now.duration_since(t) >= TF_SETTLE);
        self.ready = (statics_in && tf_in) || now.duration_since(self.start) >= GRACE;
        self.ready
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    fn evidence(all_heard: bool, unchanged_ms: u64) -> Option<StaticsEvidence> {
        Some(StaticsEvidence {
            all_heard,
            graph_unchanged_for: ms(unchanged_ms),
        })
    }

    #[test]
    fn ready_once_statics_are_in_and_quiet_the_graph_settled_and_tf_too() {
        let t0 = Instant::now();
        let d = DISCOVERY.as_millis() as u64;
        let mut r = Readiness::new(t0);
        r.received(false, t0 + ms(10));
        r.received(true, t0 + ms(d - 100));
        let at = |r: &mut Readiness, after: u64, e| r.check(t0 + ms(after), e);
        assert!(
            !at(&mut r, d - 150, evidence(true, 3000)),
            "discovery goes on"
        );
        assert!(
            !at(&mut r, d + 100, evidence(true, 3000)),
            "static burst not quiet"
        );
        assert!(
            !at(&mut r, d + 300, evidence(false, 3000)),
            "a publisher not heard"
        );
        assert!(
            !at(&mut r, d + 400, evidence(true, 999)),
            "the graph just changed"
        );
        assert!(at(&mut r, d + 550, evidence(true, 1000)));
        assert!(at(&mut r, d + 551, evidence(false, 0)), "ready stays ready");
    }

    #[test]
    fn an_empty_graph_is_evidence_only_once_discovery_had_its_time() {
        let t0 = Instant::now();
        let d = DISCOVERY.as_millis() as u64;
        let mut r = Readiness::new(t0);
        r.received(false, t0 + ms(5));
        assert!(!r.check(t0 + ms(1000), evidence(true, 1000)));
        assert!(!r.check(t0 + ms(d), evidence(true, 500)));
        assert!(r.check(t0 + ms(d + 500), evidence(true, 1000)));
    }

    #[test]
    fn no_tf_means_waiting_for_the_grace_period() {
        let t0 = Instant::now();
        let mut r = Readiness::new(t0);
        r.received(true, t0);
        assert!(!r.check(t0 + GRACE - ms(1), evidence(true, 5000)));
        assert!(r.check(t0 + GRACE, evidence(true, 6000)));
    }

    #[test]
    fn an_empty_bridge_is_ready_after_the_grace_period() {
        let t0 = Instant::now();
        let mut r = Readiness::new(t0);
        assert!(!r.check(t0 + ms(2_000), None));
        assert!(r.check(t0 + GRACE, None));
    }
}
