//! [`OwnerWatch`]: the recorded arena's owner (the bridge) over a recording, poll by poll.
//!
//! A recorder follows a bridge restart by itself ([`crate::Recorder::poll_buffer`]), but what a
//! restart costs is in no arena: what is published after the old owner's last store and before
//! the new owner stores reaches no arena, so no miss count can hold it. The watch keeps each
//! span without an owner ([`Gap`]) so a recording can say when its source went away and for how
//! long: from the last poll that saw the old owner alive (the earliest it can have gone) to the
//! first poll that saw a new owner's arena. A restart quick enough to fall between two polls is
//! a gap too.
//!
//! ```
//! use tf_shm_bag::owner_watch::{OwnerChange, OwnerWatch};
//! # let (a, b) = (tf_shm::ArenaIdentity { instance_uuid: [1; 16], boot_id: [0; 16], size: 1 },
//! #               tf_shm::ArenaIdentity { instance_uuid: [2; 16], boot_id: [0; 16], size: 1 });
//! let mut w = OwnerWatch::default();
//! w.observe(a, true, 0, || 100);
//! assert!(matches!(w.observe(a, false, 10, || 100), Some(OwnerChange::Lost(_))));
//! assert!(matches!(w.observe(b, true, 30, || 200), Some(OwnerChange::Restarted(_))));
//! assert_eq!(w.without_owner_ns(40), 30);
//! ```

use tf_shm::ArenaIdentity;

/// A span of a recording without an owner. Times are the recorder's poll times (ns, the clock
/// the bag's receive times come from).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Gap {
    /// The last poll that saw the old owner alive.
    pub from_ns: u64,
    /// The first poll that saw a new owner's arena; `None` while none has come.
    pub to_ns: Option<u64>,
    /// The old owner's pid.
    pub owner_pid: u32,
    /// The new owner's pid, once one came.
    pub new_owner_pid: Option<u32>,
}

impl Gap {
    /// How long the recording had no owner, up to `now` for a gap still open.
    pub fn duration_ns(&self, now: u64) -> u64 {
        self.to_ns.unwrap_or(now).saturating_sub(self.from_ns)
    }
}

/// What one observation found changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OwnerChange {
    /// The owner went away; the gap is open.
    Lost(Gap),
    /// A new owner's arena is recorded; the gap is closed.
    Restarted(Gap),
}

/// The owner of a recorded arena over a recording; see the module documentation.
#[derive(Clone, Debug, Default)]
pub struct OwnerWatch {
    arena: Option<ArenaIdentity>,
    pid: u32,
    alive_at: u64,
    gaps: Vec<Gap>,
    restarts: u64,
}

impl OwnerWatch {
    /// One poll's look at the arena being recorded (`arena`, whether its owner is `alive`, at
    /// `now`); `pid` gives its owner's pid, asked once per arena.
    pub fn observe(
        &mut self,
        arena: ArenaIdentity,
        alive: bool,
        now: u64,
        pid: impl FnOnce() -> u32,
    ) -> Option<OwnerChange> {
        let Some(known) = self.arena else {
            self.arena = Some(arena);
            self.pid = pid();
            self.alive_at = now;
            return self.look(alive, now);
        };
        if known == arena {
            return self.look(alive, now);
        }
        let new_pid = pid();
        let gap = match self.gaps.last_mut().filter(|g| g.to_ns.is_none()) {
            Some(open) => open,
            None => {
                // Gone and replaced between two polls.
                self.gaps.push(Gap {
                    from_ns: self.alive_at,
                    to_ns: None,
                    owner_pid: self.pid,
                    new_owner_pid: None,
                });
                self.gaps.last_mut().expect("just pushed")
            }
        };
        gap.to_ns = Some(now);
        gap.new_owner_pid = Some(new_pid);
        let closed = *gap;
        self.arena = Some(arena);
        self.pid = new_pid;
        self.restarts += 1;
        // A new owner already gone opens its own gap at the next look.
        self.alive_at = now;
        Some(OwnerChange::Restarted(closed))
    }

    /// A look at the arena already known.
    fn look(&mut self, alive: bool, now: u64) -> Option<OwnerChange> {
        if alive {
            self.alive_at = now;
            return None;
        }
        if self.open().is_some() {
            return None;
        }
        let gap = Gap {
            from_ns: self.alive_at,
            to_ns: None,
            owner_pid: self.pid,
            new_owner_pid: None,
        };
        self.gaps.push(gap);
        Some(OwnerChange::Lost(gap))
    }

    /// Every span without an owner so far, oldest first.
    pub fn gaps(&self) -> &[Gap] {
        &self.gaps
    }

    /// The gap going on now: the owner is gone and no new one came yet.
    pub fn open(&self) -> Option<&Gap> {
        self.gaps.last().filter(|g| g.to_ns.is_none())
    }

    /// New owners followed (arenas recorded after the first).
    pub fn restarts(&self) -> u64 {
        self.restarts
    }

    /// Time without an owner over all gaps, up to `now` for an open one, ns.
    pub fn without_owner_ns(&self, now: u64) -> u64 {
        self.gaps.iter().map(|g| g.duration_ns(now)).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arena(n: u8) -> ArenaIdentity {
        ArenaIdentity {
            instance_uuid: [n; 16],
            boot_id: [0; 16],
            size: 1,
        }
    }

    #[test]
    fn a_loss_opens_a_gap_from_the_last_poll_that_saw_the_owner_and_a_new_arena_closes_it() {
        let mut w = OwnerWatch::default();
        assert_eq!(w.observe(arena(1), true, 100, || 7), None);
        assert_eq!(w.observe(arena(1), true, 110, || unreachable!()), None);
        let lost = w.observe(arena(1), false, 120, || unreachable!());
        let open = Gap {
            from_ns: 110,
            to_ns: None,
            owner_pid: 7,
            new_owner_pid: None,
        };
        assert_eq!(lost, Some(OwnerChange::Lost(open)));
        assert_eq!(w.observe(arena(1), false, 130, || unreachable!()), None);
        assert_eq!(w.open(), Some(&open));
        assert_eq!(w.without_owner_ns(150), 40);
        let closed = Gap {
            to_ns: Some(200),
            new_owner_pid: Some(8),
            ..open
        };
        assert_eq!(
            w.observe(arena(2), true, 200, || 8),
            Some(OwnerChange::Restarted(closed))
        );
        assert_eq!(w.observe(arena(2), true, 210, || unreachable!()), None);
        assert_eq!((w.gaps(), w.restarts(), w.open()), (&[closed][..], 1, None));
        assert_eq!(w.without_owner_ns(1_000), 90);
    }

    #[test]
    fn a_restart_between_two_polls_is_a_gap_and_an_owner_gone_at_the_first_poll_too() {
        let mut w = OwnerWatch::default();
        w.observe(arena(1), true, 100, || 7);
        let quick = w.observe(arena(2), true, 110, || 8);
        let gap = Gap {
            from_ns: 100,
            to_ns: Some(110),
            owner_pid: 7,
            new_owner_pid: Some(8),
        };
        assert_eq!(quick, Some(OwnerChange::Restarted(gap)));
        // The new owner goes too before a poll saw it alive.
        let mut w = OwnerWatch::default();
        assert!(matches!(
            w.observe(arena(1), false, 100, || 7),
            Some(OwnerChange::Lost(g)) if g.from_ns == 100
        ));
        w.observe(arena(2), false, 150, || 8);
        assert!(matches!(
            w.observe(arena(2), false, 160, || unreachable!()),
            Some(OwnerChange::Lost(g)) if g.from_ns == 150 && g.owner_pid == 8
        ));
        assert_eq!((w.gaps().len(), w.restarts()), (2, 1));
        assert_eq!(w.without_owner_ns(170), 50 + 20);
    }
}
