//! When a freshly started bridge declares its arena ready. Consumers of the arena it replaces
//! keep answering from the old one until then, so "ready" means: what a consumer was reading
//! before the restart is back. The bridge knows neither the old arena nor the publishers'
//! rates, so it waits for evidence, bounded in time:
//!
//! - `/tf_static`: at least one message per static publisher in the ROS graph (each latched
//!   publisher delivers its transforms when matched), and the topic quiet for `QUIET`;
//! - `/tf`: the first message stored `TF_SETTLE` ago (publishers at 10 Hz or faster have all
//!   sent once by then);
//! - or, whatever arrived, `GRACE` after the subscriptions were made: a bridge whose
//!   publishers are gone is still followed.

use std::time::{Duration, Instant};

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
    static_messages: usize,
    ready: bool,
}

impl Readiness {
    /// Subscriptions made at `start`.
    pub fn new(start: Instant) -> Readiness {
        Readiness {
            start,
            first_tf: None,
            last_static: None,
            static_messages: 0,
            ready: false,
        }
    }

    /// A message was written at `now`.
    pub fn received(&mut self, is_static: bool, now: Instant) {
        if is_static {
            self.static_messages += 1;
            self.last_static = Some(now);
        } else if self.first_tf.is_none() {
            self.first_tf = Some(now);
        }
    }

    /// Whether to declare ready at `now`, with `static_publishers` seen in the graph
    /// (`None`: unknown). True once, then always.
    pub fn check(&mut self, now: Instant, static_publishers: Option<usize>) -> bool {
        if self.ready {
            return true;
        }
        let statics_in = static_publishers.is_some_and(|n| self.static_messages >= n)
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

    #[test]
    fn ready_once_statics_are_in_and_quiet_and_tf_has_settled() {
        let t0 = Instant::now();
        let mut r = Readiness::new(t0);
        r.received(false, t0 + ms(10));
        for i in 0..3 {
            r.received(true, t0 + ms(20 + i));
        }
        assert!(
            !r.check(t0 + ms(100), Some(3)),
            "static burst not quiet yet"
        );
        assert!(
            !r.check(t0 + ms(300), Some(4)),
            "one static publisher not heard"
        );
        r.received(true, t0 + ms(300));
        assert!(!r.check(t0 + ms(400), Some(4)));
        assert!(r.check(t0 + ms(550), Some(4)));
        assert!(r.check(t0 + ms(551), Some(40)), "ready stays ready");
    }

    #[test]
    fn no_tf_means_waiting_for_the_grace_period() {
        let t0 = Instant::now();
        let mut r = Readiness::new(t0);
        r.received(true, t0);
        assert!(!r.check(t0 + GRACE - ms(1), Some(1)));
        assert!(r.check(t0 + GRACE, Some(1)));
    }

    #[test]
    fn an_empty_bridge_is_ready_after_the_grace_period() {
        let t0 = Instant::now();
        let mut r = Readiness::new(t0);
        assert!(!r.check(t0 + ms(2_000), None));
        assert!(r.check(t0 + GRACE, None));
    }

    #[test]
    fn no_static_publishers_needs_only_tf() {
        let t0 = Instant::now();
        let mut r = Readiness::new(t0);
        r.received(false, t0 + ms(5));
        assert!(!r.check(t0 + ms(200), Some(0)));
        assert!(r.check(t0 + ms(260), Some(0)));
    }
}
