//! The start-up timeline: when each phase from process start to the first delivered message
//! ended, for the log (`tf_shm_bridge` at info) and the restart benchmark
//! (scripts/bridge_bench.sh).

use std::time::Instant;

/// Phases of a start, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// r2r's context (rcl init).
    Context,
    /// The node and with it the DDS participant.
    Node,
    /// The arena created and served.
    Arena,
    /// Both subscriptions made.
    Subscribed,
    /// A publisher of `/tf` seen in the ROS graph (discovery of its endpoint).
    TfPublisherSeen,
    /// The first `/tf` message written.
    FirstTf,
    /// The first `/tf_static` message written.
    FirstStatic,
}

/// When `main` began (unix ns, and as an `Instant`), and each phase since.
#[derive(Debug)]
pub struct Timeline {
    main_unix_ns: i64,
    main: Instant,
    marks: Vec<(Phase, Instant)>,
}

impl Timeline {
    /// Starts the timeline now (call first thing in `main`).
    pub fn start() -> Timeline {
        Timeline {
            main_unix_ns: tf_shm::time::unix_now_ns(),
            main: Instant::now(),
            marks: Vec::new(),
        }
    }

    /// Marks `phase` as ended now, once (later marks of the same phase are ignored); returns
    /// whether this was its first mark.
    pub fn mark(&mut self, phase: Phase) -> bool {
        if self.has(phase) {
            return false;
        }
        self.marks.push((phase, Instant::now()));
        true
    }

    /// Whether `phase` was marked.
    pub fn has(&self, phase: Phase) -> bool {
        self.marks.iter().any(|(p, _)| *p == phase)
    }

    /// `main at <unix ns>; context +12.3 ms, node +45.6 ms, …` (ms since `main`).
    pub fn line(&self) -> String {
        let mut s = format!("main at {} unix ns", self.main_unix_ns);
        for (p, t) in &self.marks {
            let ms = t.duration_since(self.main).as_secs_f64() * 1e3;
            s += &format!("; {} +{ms:.1} ms", name(*p));
        }
        s
    }
}

fn name(p: Phase) -> &'static str {
    match p {
        Phase::Context => "context",
        Phase::Node => "node",
        Phase::Arena => "arena",
        Phase::Subscribed => "subscribed",
        Phase::TfPublisherSeen => "tf_publisher_seen",
        Phase::FirstTf => "first_tf",
        Phase::FirstStatic => "first_static",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phases_are_marked_once_in_order() {
        let mut t = Timeline::start();
        assert!(t.mark(Phase::Context));
        assert!(!t.mark(Phase::Context));
        assert!(t.mark(Phase::FirstTf));
        assert!(t.has(Phase::FirstTf) && !t.has(Phase::Node));
        let line = t.line();
        let (a, b) = (
            line.find("context +").unwrap(),
            line.find("first_tf +").unwrap(),
        );
        assert!(a < b, "{line}");
        assert_eq!(line.matches("context").count(), 1);
    }
}
