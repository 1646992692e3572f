//! Rate limiting of repeated warnings: each kind of warning (a key) is logged at most once per
//! period, and all keys together at most `budget` lines per period, so neither one repeating
//! fault nor a flood of distinct ones (random frame names, socket abuse) floods the log.
//! Whatever is held back is counted and reported: with the key's next line, and in a summary
//! line ([`RateLimiter::take_summary`]) for what the overall budget held back.

use std::collections::HashMap;
use std::hash::Hash;
use std::time::{Duration, Instant};

struct Seen {
    /// `None`: held back by the budget before ever being logged.
    last_logged: Option<Instant>,
    suppressed: u64,
}

/// Decides which occurrences of keyed warnings are logged.
pub struct RateLimiter<K> {
    period: Duration,
    budget: u32,
    max_tracked: usize,
    seen: HashMap<K, Seen>,
    /// Start of the budget's current window (`None` before the first occurrence).
    window_start: Option<Instant>,
    window_lines: u32,
    /// Held back by the budget (not by a key's own period) since the last summary.
    over_budget: u64,
    /// When the first of `over_budget` was held back.
    over_budget_since: Option<Instant>,
}

impl<K: Hash + Eq> RateLimiter<K> {
    /// At most one line per key per `period`, at most `budget` lines per `period` in all;
    /// at most `max_tracked` keys remembered (keys past that share the budget only).
    pub fn new(period: Duration, budget: u32, max_tracked: usize) -> RateLimiter<K> {
        RateLimiter {
            period,
            budget,
            max_tracked,
            seen: HashMap::new(),
            window_start: None,
            window_lines: 0,
            over_budget: 0,
            over_budget_since: None,
        }
    }

    /// One occurrence of `key` at `now`: `Some(n)` to log it now, `n` being how many of this
    /// key were held back since its last line; `None` to hold it back (counted).
    pub fn check(&mut self, key: K, now: Instant) -> Option<u64> {
        if self
            .window_start
            .is_none_or(|w| now.duration_since(w) >= self.period)
        {
            self.window_start = Some(now);
            self.window_lines = 0;
        }
        let period = self.period;
        let recent = |s: &Seen| {
            s.last_logged
                .is_some_and(|t| now.duration_since(t) < period)
        };
        if let Some(s) = self.seen.get_mut(&key) {
            if recent(s) {
                s.suppressed += 1;
                return None;
            }
        }
        let over = self.window_lines >= self.budget;
        if over {
            self.over_budget += 1;
            self.over_budget_since.get_or_insert(now);
        } else {
            self.window_lines += 1;
        }
        let tracked = self.seen.len() < self.max_tracked;
        let s = match self.seen.get_mut(&key) {
            Some(s) => s,
            None if tracked => self.seen.entry(key).or_insert(Seen {
                last_logged: None,
                suppressed: 0,
            }),
            None => return (!over).then_some(0),
        };
        if over {
            s.suppressed += 1;
            return None;
        }
        s.last_logged = Some(now);
        Some(std::mem::take(&mut s.suppressed))
    }

    /// How many occurrences the overall budget held back since the last summary, once a
    /// period has passed since the first of them (`None`: nothing to report yet). Call it
    /// periodically: it reports during a flood too, once per period.
    pub fn take_summary(&mut self, now: Instant) -> Option<u64> {
        let since = self.over_budget_since?;
        if now.duration_since(since) < self.period {
            return None;
        }
        self.over_budget_since = None;
        Some(std::mem::take(&mut self.over_budget))
    }
}

impl<K: Hash + Eq + Clone> RateLimiter<K> {
    /// Per key, the occurrences held back since its last line, for keys that have logged a
    /// line at least a period ago and had repeats since (each then counts as logged `now`).
    /// Call it periodically so a count is reported even when the key never occurs again.
    /// Keys held back by the budget before ever logging are left to [`RateLimiter::take_summary`].
    pub fn take_held(&mut self, now: Instant) -> Vec<(K, u64)> {
        let period = self.period;
        self.seen
            .iter_mut()
            .filter(|(_, s)| {
                s.suppressed > 0
                    && s.last_logged
                        .is_some_and(|t| now.duration_since(t) >= period)
            })
            .map(|(k, s)| {
                s.last_logged = Some(now);
                (k.clone(), std::mem::take(&mut s.suppressed))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: Duration = Duration::from_secs(10);

    #[test]
    fn a_key_logs_once_per_period_then_reports_what_it_held_back() {
        let t0 = Instant::now();
        let mut r = RateLimiter::new(P, 100, 100);
        assert_eq!(r.check("a", t0), Some(0));
        for i in 1..=5 {
            assert_eq!(r.check("a", t0 + Duration::from_secs(i)), None);
        }
        assert_eq!(r.check("a", t0 + P), Some(5));
        assert_eq!(r.check("a", t0 + P), None);
    }

    #[test]
    fn a_flood_of_distinct_keys_is_bounded_by_the_budget_and_summarised() {
        let t0 = Instant::now();
        let mut r = RateLimiter::new(P, 10, 1_000);
        let logged = (0..100_000u32)
            .filter(|k| r.check(*k, t0).is_some())
            .count();
        assert_eq!(logged, 10);
        assert_eq!(r.take_summary(t0 + Duration::from_secs(1)), None);
        assert_eq!(r.take_summary(t0 + P), Some(99_990));
        assert_eq!(r.take_summary(t0 + P), None);
        // A new window has its own budget.
        assert_eq!(r.check(200_000, t0 + P), Some(0));
    }

    #[test]
    fn held_back_repeats_are_reported_once_their_period_is_over_without_a_next_line() {
        let t0 = Instant::now();
        let mut r = RateLimiter::new(P, 1, 100);
        assert_eq!(r.check("a", t0), Some(0));
        for i in 1..=3 {
            assert_eq!(r.check("a", t0 + Duration::from_secs(i)), None);
        }
        // Budget-held and never logged: the summary's.
        assert_eq!(r.check("b", t0), None);
        assert!(r.take_held(t0 + Duration::from_secs(9)).is_empty());
        assert_eq!(r.take_held(t0 + P), vec![("a", 3)]);
        assert!(r.take_held(t0 + P + P).is_empty(), "reported once");
        assert_eq!(r.take_summary(t0 + P), Some(1));
        // The report counts as the key's line: a repeat within the period is held back.
        assert_eq!(r.check("a", t0 + P + Duration::from_secs(1)), None);
        assert_eq!(r.take_held(t0 + P + P), vec![("a", 1)]);
    }

    #[test]
    fn a_key_held_back_by_the_budget_reports_it_with_its_next_line() {
        let t0 = Instant::now();
        let mut r = RateLimiter::new(P, 1, 100);
        assert_eq!(r.check("a", t0), Some(0));
        assert_eq!(r.check("b", t0), None);
        assert_eq!(r.check("a", t0 + P), Some(0));
        assert_eq!(r.check("b", t0 + P), None);
        assert_eq!(r.check("b", t0 + P + P), Some(2));
    }
}
