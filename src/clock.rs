//! Backward jumps of the ROS clock (sim time, bag loops): tf2_ros's C++ `Buffer` clears the
//! buffer on any backward jump and on a change of time source (docs/tf2-semantics.md §10.2); so do we.

/// What a clock observation calls for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Jump {
    /// Time went backwards by this many ns: clear dynamic history.
    Backward(i64),
    /// The clock switched between system and simulated time: clear dynamic history.
    SourceChanged,
}

/// Remembers the last observed ROS time and time source.
#[derive(Default, Debug)]
pub struct JumpDetector {
    last: Option<(i64, bool)>,
}

impl JumpDetector {
    /// Observes `now` (ns) from a clock that is simulated when `sim` is true.
    pub fn observe(&mut self, now: i64, sim: bool) -> Option<Jump> {
        let jump = match self.last {
            Some((_, was_sim)) if was_sim != sim => Some(Jump::SourceChanged),
            // tf2_ros C++ uses a jump threshold of −1 ns: any backward step counts.
            Some((last, _)) if now < last => Some(Jump::Backward(last - now)),
            _ => None,
        };
        self.last = Some((now, sim));
        jump
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn any_backward_step_is_a_jump_forward_is_not() {
        let mut d = JumpDetector::default();
        assert_eq!(d.observe(5_000, false), None);
        assert_eq!(d.observe(9_000, false), None);
        assert_eq!(d.observe(8_999, false), Some(Jump::Backward(1)));
        assert_eq!(d.observe(8_999, false), None);
        assert_eq!(d.observe(1_000_000, false), None);
    }

    #[test]
    fn switching_time_source_is_a_jump() {
        let mut d = JumpDetector::default();
        d.observe(5_000, false);
        assert_eq!(d.observe(10, true), Some(Jump::SourceChanged));
        assert_eq!(d.observe(20, true), None);
    }
}
