//! The owner server's events (refused or dropped joiners, socket abuse) in the bridge's log,
//! rate-limited: one line per kind of event per period, a bounded number of lines per period in
//! all, and what was held back reported by a timer ([`RendezvousLog::flush`], called from the
//! bridge's tick), so a count is never lost for want of a later event.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::ratelimit::RateLimiter;

/// A kind of event logs at most one line per this period; held-back counts are reported after it.
pub const PERIOD: Duration = Duration::from_secs(10);
/// Event lines per period in all.
pub const BUDGET: u32 = 20;
/// Kinds of events tracked one by one.
const MAX_KINDS: usize = 64;

/// The rate-limited event log, shared by the owner server's hook and the bridge's tick.
#[derive(Clone)]
pub struct RendezvousLog(Arc<Mutex<RateLimiter<String>>>);

impl Default for RendezvousLog {
    fn default() -> Self {
        RendezvousLog(Arc::new(Mutex::new(RateLimiter::new(
            PERIOD, BUDGET, MAX_KINDS,
        ))))
    }
}

impl RendezvousLog {
    fn limiter(&self) -> MutexGuard<'_, RateLimiter<String>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The hook for `Open::on_event`.
    pub fn hook(&self) -> impl Fn(&str) + Send + Sync + 'static {
        let log = self.clone();
        move |e: &str| {
            for line in log.event_lines(e, Instant::now()) {
                tracing::warn!("{line}");
            }
        }
    }

    /// Logs what was held back whose period is over.
    pub fn flush(&self) {
        for line in self.flush_lines(Instant::now()) {
            tracing::warn!("{line}");
        }
    }

    /// The lines to log for event `e` at `now`.
    fn event_lines(&self, e: &str, now: Instant) -> Vec<String> {
        let mut lines = self.flush_lines(now);
        // Events of one kind differ only in pids, slots and counts: one key per kind.
        let kind: String = e.chars().filter(|c| !c.is_ascii_digit()).collect();
        match self.limiter().check(kind, now) {
            Some(0) => lines.push(format!("rendezvous: {e}")),
            Some(n) => lines.push(format!(
                "rendezvous: {e} ({n} more like it since the last report)"
            )),
            None => {}
        }
        lines
    }

    /// The lines reporting what was held back, once its period is over.
    fn flush_lines(&self, now: Instant) -> Vec<String> {
        let mut l = self.limiter();
        let mut lines = Vec::new();
        if let Some(n) = l.take_summary(now) {
            lines.push(format!(
                "rendezvous: {n} more events in the last {} s were not logged",
                PERIOD.as_secs()
            ));
        }
        let mut held = l.take_held(now);
        held.sort();
        for (kind, n) in held {
            lines.push(format!(
                "rendezvous: {n} more like \"{kind}\" in the last {} s (numbers omitted)",
                PERIOD.as_secs()
            ));
        }
        lines
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn held_back_events_are_reported_by_the_timer_without_a_later_event() {
        let log = RendezvousLog::default();
        let t0 = Instant::now();
        let first = log.event_lines("refused pid 12: bad hello", t0);
        assert_eq!(first, ["rendezvous: refused pid 12: bad hello"]);
        for pid in 13..20 {
            assert!(log
                .event_lines(&format!("refused pid {pid}: bad hello"), t0)
                .is_empty());
        }
        // 25 distinct kinds: 19 more fit the budget, the other 6 are held back.
        let logged: usize = (0..25)
            .map(|k| {
                log.event_lines(&format!("kind {} x", "k".repeat(k + 1)), t0)
                    .len()
            })
            .sum();
        assert_eq!(logged, BUDGET as usize - 1);
        assert!(log.flush_lines(t0 + Duration::from_secs(9)).is_empty());
        let flushed = log.flush_lines(t0 + PERIOD);
        assert_eq!(
            flushed,
            [
                "rendezvous: 6 more events in the last 10 s were not logged",
                "rendezvous: 7 more like \"refused pid : bad hello\" in the last 10 s (numbers omitted)",
            ]
        );
        assert!(log.flush_lines(t0 + PERIOD + PERIOD).is_empty(), "once");
    }
}
