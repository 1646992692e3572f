//! `tf_shm monitor`: tf2_monitor's numbers, sampled from the arena.
//!
//! The arena is polled (`--poll` Hz); between refreshes (`--rate` Hz) each frame's accepted
//! counter gives its rate, each newly seen newest stamp its delay (the wall clock at that poll
//! minus the stamp: stamps must be wall-clock time, as tf2_monitor assumes too; the poll adds
//! half a period on average), and the wall time between two polls that saw new samples its
//! largest gap (resolution: one poll period).

use std::collections::HashMap;
use std::io::IsTerminal;
use std::time::{Duration, Instant};

use serde::Serialize;
use tf_shm::inspect::FrameKind;
use tf_shm::time::unix_now_ns;
use tf_shm::{ArenaView, FrameId};

use crate::cli::{Global, MonitorArgs};
use crate::connect;
use crate::out::{hz, ns_to_s, print_json, secs, Align, Painter, Table};

/// What was seen of one frame since monitoring started.
#[derive(Clone, Debug, Default)]
struct Seen {
    first_accepted: u64,
    accepted: u64,
    newest_stamp: Option<i64>,
    delays: u64,
    delay_sum_ns: i128,
    delay_max_ns: i64,
    last_change: Option<Instant>,
    max_gap: Duration,
}

/// One frame (or chain link) in a refresh.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FrameStats {
    /// Frame name.
    pub frame: String,
    /// Its parent now.
    pub parent: Option<String>,
    /// Publisher of its newest sample.
    pub authority: Option<String>,
    /// Samples accepted per second since monitoring started, Hz.
    pub rate_hz: Option<f64>,
    /// Mean of (wall clock − stamp) over the newest samples seen, s.
    pub delay_avg_s: Option<f64>,
    /// Largest such delay, s.
    pub delay_max_s: Option<f64>,
    /// Largest wall-clock time without a new sample (including the current one), s.
    pub max_gap_s: Option<f64>,
    /// Samples accepted since monitoring started.
    pub samples: u64,
}

/// One refresh.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Snapshot {
    /// Monitoring time so far, s.
    pub elapsed_s: f64,
    /// The chain asked for, source to target (empty when monitoring all frames).
    pub chain: Vec<String>,
    /// Wall clock − latest common time of the chain, s.
    pub chain_delay_s: Option<f64>,
    /// tf2's error when the chain cannot be looked up.
    pub chain_error: Option<String>,
    /// Dynamic frames (or the chain's links).
    pub frames: Vec<FrameStats>,
}

struct Monitor {
    start: Instant,
    seen: HashMap<FrameId, Seen>,
}

impl Monitor {
    fn poll(&mut self, view: &ArenaView) {
        let now = Instant::now();
        let wall = unix_now_ns();
        let Ok(frames) = view.frames() else { return };
        for f in frames.iter().filter(|f| f.kind == FrameKind::Dynamic) {
            let s = self.seen.entry(f.id).or_insert_with(|| Seen {
                first_accepted: f.accepted,
                accepted: f.accepted,
                last_change: Some(now),
                ..Seen::default()
            });
            if f.accepted != s.accepted {
                if let Some(t) = s.last_change {
                    s.max_gap = s.max_gap.max(now - t);
                }
                s.last_change = Some(now);
                s.accepted = f.accepted;
            }
            let newest = f.history.map(|h| h.newest);
            if newest.is_some() && newest != s.newest_stamp {
                let d = wall - newest.unwrap_or_default();
                s.delays += 1;
                s.delay_sum_ns += i128::from(d);
                s.delay_max_ns = if s.delays == 1 {
                    d
                } else {
                    s.delay_max_ns.max(d)
                };
                s.newest_stamp = newest;
            }
        }
    }

    fn snapshot(&self, view: &ArenaView, chain: Option<(&str, &str)>) -> Snapshot {
        let now = Instant::now();
        let elapsed = now - self.start;
        let frames = view.frames().unwrap_or_default();
        let stats = |f: &tf_shm::inspect::FrameInfo| {
            let s = self.seen.get(&f.id);
            let samples = s.map_or(0, |s| s.accepted - s.first_accepted);
            let gap = s.and_then(|s| s.last_change.map(|t| s.max_gap.max(now - t)));
            FrameStats {
                frame: f.name.clone(),
                parent: f.parent.clone(),
                authority: f.authority.clone(),
                rate_hz: (f.kind == FrameKind::Dynamic && elapsed.as_secs_f64() > 0.0)
                    .then(|| samples as f64 / elapsed.as_secs_f64()),
                delay_avg_s: s
                    .filter(|s| s.delays > 0)
                    .map(|s| s.delay_sum_ns as f64 / s.delays as f64 / 1e9),
                delay_max_s: s.filter(|s| s.delays > 0).map(|s| ns_to_s(s.delay_max_ns)),
                max_gap_s: gap.map(|g| g.as_secs_f64()),
                samples,
            }
        };
        let mut snap = Snapshot {
            elapsed_s: elapsed.as_secs_f64(),
            chain: Vec::new(),
            chain_delay_s: None,
            chain_error: None,
            frames: Vec::new(),
        };
        match chain {
            None => {
                let mut fs: Vec<_> = frames
                    .iter()
                    .filter(|f| f.kind == FrameKind::Dynamic)
                    .collect();
                fs.sort_by(|a, b| a.name.cmp(&b.name));
                snap.frames = fs.into_iter().map(stats).collect();
            }
            Some((target, source)) => {
                snap.chain = chain_frames(&frames, target, source);
                snap.frames = snap
                    .chain
                    .iter()
                    .filter_map(|n| {
                        frames
                            .iter()
                            .find(|f| &f.name == n && f.kind != FrameKind::Root)
                    })
                    .map(stats)
                    .collect();
                match view.get_latest_common_time(target, source) {
                    Ok(0) => {}
                    Ok(t) => snap.chain_delay_s = Some(ns_to_s(unix_now_ns() - t)),
                    Err(e) => snap.chain_error = Some(e.to_string()),
                }
            }
        }
        snap
    }
}

/// The frames between `source` and `target` through their nearest common ancestor, from
/// `source` up and down to `target` (as tf2_monitor prints its chain).
pub fn chain_frames(
    frames: &[tf_shm::inspect::FrameInfo],
    target: &str,
    source: &str,
) -> Vec<String> {
    let parent = |n: &str| {
        frames
            .iter()
            .find(|f| f.name == n)
            .and_then(|f| f.parent.clone())
    };
    let up = |start: &str| {
        let mut v = vec![start.to_owned()];
        while let Some(p) = parent(v.last().expect("non-empty")) {
            if v.contains(&p) || v.len() > frames.len() {
                break;
            }
            v.push(p);
        }
        v
    };
    let s_up = up(source);
    let t_up = up(target);
    match s_up.iter().position(|f| t_up.contains(f)) {
        Some(i) => {
            let j = t_up.iter().position(|f| f == &s_up[i]).expect("contained");
            let mut c: Vec<String> = s_up[..=i].to_vec();
            c.extend(t_up[..j].iter().rev().cloned());
            c
        }
        None => {
            let mut c = s_up;
            c.extend(t_up.into_iter().rev());
            c
        }
    }
}

/// The refresh as text.
pub fn text(s: &Snapshot, p: &Painter) -> String {
    let mut out = format!("tf_shm monitor: {:.1} s\n", s.elapsed_s);
    if !s.chain.is_empty() {
        out += &format!("Chain is: {}\n", s.chain.join(" -> "));
        match (&s.chain_error, s.chain_delay_s) {
            (Some(e), _) => out += &format!("Chain lookup fails: {e}\n"),
            (None, Some(d)) => {
                out += &format!(
                    "Net delay (now − latest common time): {}\n",
                    secs(Some(d), 6)
                )
            }
            (None, None) => out += "Net delay: - (static chain)\n",
        }
    }
    let mut t = Table::new(&[
        ("frame", Align::Left),
        ("parent", Align::Left),
        ("rate", Align::Right),
        ("delay avg", Align::Right),
        ("delay max", Align::Right),
        ("max gap", Align::Right),
        ("samples", Align::Right),
        ("authority", Align::Left),
    ]);
    for f in &s.frames {
        t.row(vec![
            f.frame.clone(),
            f.parent.clone().unwrap_or_default(),
            hz(f.rate_hz),
            secs(f.delay_avg_s, 6),
            secs(f.delay_max_s, 6),
            secs(f.max_gap_s, 3),
            f.samples.to_string(),
            f.authority.clone().unwrap_or_default(),
        ]);
    }
    if s.frames.is_empty() {
        out += "no dynamic frames\n";
    } else {
        out += &t.render(p);
    }
    out
}

/// `tf_shm monitor`.
pub fn run(g: &Global, a: &MonitorArgs) -> u8 {
    let buffer = match connect::open(g) {
        Ok(b) => b,
        Err(e) => return connect::report_open_error(&e),
    };
    let chain = a.target.as_deref().zip(a.source.as_deref());
    let refresh = Duration::from_secs_f64(1.0 / a.rate);
    let poll = Duration::from_secs_f64(1.0 / a.poll).min(refresh);
    let mut m = Monitor {
        start: Instant::now(),
        seen: HashMap::new(),
    };
    let painter = Painter::stdout();
    let clear = !g.json && std::io::stdout().is_terminal();
    let mut refreshes = 0u64;
    let mut next_refresh = Instant::now() + refresh;
    loop {
        let view = buffer.view();
        m.poll(&view);
        if Instant::now() >= next_refresh {
            let s = m.snapshot(&view, chain);
            if g.json {
                print_json(&s);
            } else {
                let home = if clear { "\x1b[2J\x1b[H" } else { "" };
                crate::out::emit(&format!("{home}{}\n", text(&s, &painter)));
            }
            refreshes += 1;
            if a.count.is_some_and(|n| refreshes >= n) {
                return 0;
            }
            next_refresh += refresh;
        }
        std::thread::sleep(poll);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tf_shm::inspect::FrameInfo;

    fn f(name: &str, parent: Option<&str>) -> FrameInfo {
        FrameInfo {
            id: 1,
            name: name.into(),
            kind: if parent.is_some() {
                FrameKind::Dynamic
            } else {
                FrameKind::Root
            },
            parent: parent.map(Into::into),
            history: None,
            ring_capacity: 0,
            accepted: 0,
            last_write_unix_ns: 0,
            parent_changes: 0,
            last_parent_change_unix_ns: 0,
            history_short: false,
            no_ring: false,
            authority: None,
        }
    }

    #[test]
    fn chain_goes_up_from_source_and_down_to_target() {
        let fs = [
            f("map", None),
            f("odom", Some("map")),
            f("base", Some("odom")),
            f("laser", Some("base")),
            f("cam", Some("base")),
        ];
        assert_eq!(chain_frames(&fs, "cam", "laser"), ["laser", "base", "cam"]);
        assert_eq!(
            chain_frames(&fs, "map", "laser"),
            ["laser", "base", "odom", "map"]
        );
        assert_eq!(
            chain_frames(&fs, "laser", "map"),
            ["map", "odom", "base", "laser"]
        );
    }
}
