//! `tf_shm tree`: the frame tree as indented text, or as view_frames draws it (Graphviz DOT,
//! SVG, PDF: [`crate::graph`]).

use std::collections::{BTreeMap, HashSet};
use std::io::Write;
use std::process::{Command, Stdio};

use serde::Serialize;
use tf_shm::inspect::{FrameInfo, FrameKind};
use tf_shm::ArenaView;

use crate::cli::{DoctorArgs, Global, TreeArgs};
use crate::out::{hz, ns_to_s, print_json, secs, terminal_width, Painter, Style};
use crate::{connect, graph};

/// One frame as `tree` shows it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FrameRow {
    /// Frame name.
    pub name: String,
    /// Parent of the newest sample (`null` for roots).
    pub parent: Option<String>,
    /// `"root"`, `"static"` or `"dynamic"`.
    pub kind: &'static str,
    /// Average rate over the history, Hz: (samples − 1) / span (dynamic, ≥ 2 samples).
    pub rate_hz: Option<f64>,
    /// Stamp of the newest sample, s (dynamic).
    pub newest_stamp_s: Option<f64>,
    /// Stamp of the oldest sample, s (dynamic).
    pub oldest_stamp_s: Option<f64>,
    /// Newest − oldest stamp, s (dynamic).
    pub history_span_s: Option<f64>,
    /// Samples in the history (dynamic), 1 for a static frame, 0 for a root.
    pub samples: usize,
    /// Samples the frame's ring holds at most now (0 without a ring).
    pub ring_capacity: u32,
    /// Samples accepted since the arena was created.
    pub accepted: u64,
    /// Publisher of the newest sample.
    pub authority: Option<String>,
    /// The history is shorter than the cache time (ring pool exhausted).
    pub history_short: bool,
}

/// The kind as printed.
pub fn kind_name(k: FrameKind) -> &'static str {
    match k {
        FrameKind::Root => "root",
        FrameKind::Static => "static",
        FrameKind::Dynamic => "dynamic",
    }
}

impl FrameRow {
    /// The row of one frame.
    pub fn new(f: &FrameInfo) -> FrameRow {
        let h = f.history;
        let span_ns = h.map(|h| h.newest - h.oldest);
        let rate_hz = match (h, span_ns) {
            (Some(h), Some(s)) if h.len >= 2 && s > 0 => Some((h.len - 1) as f64 / ns_to_s(s)),
            _ => None,
        };
        FrameRow {
            name: f.name.clone(),
            parent: f.parent.clone(),
            kind: kind_name(f.kind),
            rate_hz,
            newest_stamp_s: h.map(|h| ns_to_s(h.newest)),
            oldest_stamp_s: h.map(|h| ns_to_s(h.oldest)),
            history_span_s: span_ns.map(ns_to_s),
            samples: match f.kind {
                FrameKind::Root => 0,
                FrameKind::Static => 1,
                FrameKind::Dynamic => h.map_or(0, |h| h.len),
            },
            ring_capacity: f.ring_capacity,
            accepted: f.accepted,
            authority: f.authority.clone(),
            history_short: f.history_short,
        }
    }
}

/// Every frame of the arena, by id.
pub fn rows(view: &ArenaView) -> Result<Vec<FrameRow>, tf_shm::ArenaError> {
    Ok(view.frames()?.iter().map(FrameRow::new).collect())
}

/// Frames in tree order, each with its depth and whether it is the last of its siblings;
/// children sorted by name. Frames in a parent loop (not reachable from any root) come last,
/// as roots.
pub(crate) fn ordered(rows: &[FrameRow]) -> Vec<(usize, Vec<bool>)> {
    let index: BTreeMap<&str, usize> = rows
        .iter()
        .enumerate()
        .map(|(i, r)| (r.name.as_str(), i))
        .collect();
    let mut children: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    let mut roots = Vec::new();
    for (i, r) in rows.iter().enumerate() {
        match r.parent.as_deref().filter(|p| index.contains_key(p)) {
            Some(p) => children.entry(p).or_default().push(i),
            None => roots.push(i),
        }
    }
    for c in children.values_mut() {
        c.sort_by(|&a, &b| rows[a].name.cmp(&rows[b].name));
    }
    roots.sort_by(|&a, &b| rows[a].name.cmp(&rows[b].name));
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    fn visit(
        i: usize,
        last: Vec<bool>,
        rows: &[FrameRow],
        children: &BTreeMap<&str, Vec<usize>>,
        seen: &mut HashSet<usize>,
        out: &mut Vec<(usize, Vec<bool>)>,
    ) {
        if !seen.insert(i) {
            return;
        }
        out.push((i, last.clone()));
        if let Some(c) = children.get(rows[i].name.as_str()) {
            for (k, &j) in c.iter().enumerate() {
                let mut l = last.clone();
                l.push(k + 1 == c.len());
                visit(j, l, rows, children, seen, out);
            }
        }
    }
    for &r in &roots {
        visit(r, Vec::new(), rows, &children, &mut seen, &mut out);
    }
    let mut rest: Vec<usize> = (0..rows.len()).filter(|i| !seen.contains(i)).collect();
    rest.sort_by(|&a, &b| rows[a].name.cmp(&rows[b].name));
    for r in rest {
        visit(r, Vec::new(), rows, &children, &mut seen, &mut out);
    }
    out
}

/// The text columns, in order, and which are dropped first when the table is too wide: the
/// frame and its kind always stay.
const COLUMNS: [(&str, crate::out::Align); 7] = {
    use crate::out::Align::{Left, Right};
    [
        ("frame", Left),
        ("kind", Left),
        ("rate", Right),
        ("newest stamp", Right),
        ("history", Right),
        ("samples", Right),
        ("authority", Left),
    ]
};
const DROP_ORDER: [usize; 5] = [6, 3, 4, 5, 2];

/// Tree branches two characters per level (as `lsblk` draws them): a PR2's 17 levels of long
/// link names stay inside a terminal.
fn branch_prefix(last: &[bool]) -> String {
    let mut prefix = String::new();
    for (d, &l) in last.iter().enumerate() {
        prefix += match (d + 1 == last.len(), l) {
            (true, true) => "└─",
            (true, false) => "├─",
            (false, true) => "  ",
            (false, false) => "│ ",
        };
    }
    prefix
}

/// Every column's cell of one row.
fn cells(r: &FrameRow, prefix: &str) -> Vec<(String, Option<Style>)> {
    let kind_style = match r.kind {
        "static" => Some(Style::Dim),
        _ if r.history_short => Some(Style::Yellow),
        _ => None,
    };
    let dynamic = r.kind == "dynamic";
    let only_dynamic = |s: String| if dynamic { s } else { String::new() };
    vec![
        (format!("{prefix}{}", r.name), None),
        (
            if r.history_short {
                format!("{} (history short)", r.kind)
            } else {
                r.kind.to_string()
            },
            kind_style,
        ),
        (only_dynamic(hz(r.rate_hz)), None),
        (only_dynamic(secs(r.newest_stamp_s, 6)), None),
        (only_dynamic(secs(r.history_span_s, 3)), None),
        (
            if r.kind == "root" {
                String::new()
            } else {
                r.samples.to_string()
            },
            None,
        ),
        (r.authority.clone().unwrap_or_default(), Some(Style::Dim)),
    ]
}

/// The indented text tree with columns sized to their content. With `max_width`, columns are
/// dropped (authority, newest stamp, history, samples, rate, in that order) until every line
/// fits, and a last line names those left out.
pub fn text(rows: &[FrameRow], p: &Painter, max_width: Option<usize>) -> String {
    use crate::out::Table;
    if rows.is_empty() {
        return "no frames in the arena yet\n".into();
    }
    let all: Vec<Vec<(String, Option<Style>)>> = ordered(rows)
        .into_iter()
        .map(|(i, last)| cells(&rows[i], &branch_prefix(&last)))
        .collect();
    let table = |keep: &[usize]| {
        let headers: Vec<_> = keep.iter().map(|&c| COLUMNS[c]).collect();
        let mut t = Table::new(&headers);
        for r in &all {
            t.styled_row(keep.iter().map(|&c| r[c].clone()).collect());
        }
        t
    };
    let mut keep: Vec<usize> = (0..COLUMNS.len()).collect();
    let mut dropped = Vec::new();
    for next in DROP_ORDER {
        match max_width {
            Some(w) if table(&keep).width() > w => {}
            _ => break,
        }
        keep.retain(|&c| c != next);
        dropped.push(COLUMNS[next].0);
    }
    let mut out = table(&keep).render(p);
    if !dropped.is_empty() {
        let w = max_width.unwrap_or(0);
        out += &p.paint(
            Style::Dim,
            &format!(
                "(to fit {w} columns, left out: {}; see --wide)",
                dropped.join(", ")
            ),
        );
        out.push('\n');
    }
    out
}

/// The Graphviz DOT of what `tree --dot/--svg/--pdf` draws: every frame with doctor's flags
/// (default thresholds) written on it, and view_frames' legend.
fn file_dot(view: &ArenaView) -> Result<String, tf_shm::ArenaError> {
    let now = tf_shm::time::unix_now_ns();
    let (nodes, _) = graph::nodes(view, &DoctorArgs::defaults(), now)?;
    Ok(graph::dot(
        &nodes,
        &graph::DotOptions {
            now,
            file: true,
            ..Default::default()
        },
    ))
}

/// Renders `dot_text` to `path` with Graphviz in `format` (`svg`, `pdf`: `dot -T`); the error
/// says what to do.
pub fn render(dot_text: &str, format: &str, path: &std::path::Path) -> Result<(), String> {
    let mut child = Command::new("dot")
        .arg(format!("-T{format}"))
        .arg("-o")
        .arg(path)
        .stdin(Stdio::piped())
        .spawn()
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => {
                "Graphviz `dot` is not installed (apt install graphviz); use --dot and render the \
                 text elsewhere"
                    .to_string()
            }
            _ => format!("cannot run Graphviz `dot`: {e}"),
        })?;
    child
        .stdin
        .take()
        .expect("piped")
        .write_all(dot_text.as_bytes())
        .map_err(|e| format!("cannot feed Graphviz `dot`: {e}"))?;
    let status = child
        .wait()
        .map_err(|e| format!("Graphviz `dot` failed: {e}"))?;
    if !status.success() {
        return Err(format!(
            "Graphviz `dot` failed ({status}) writing {}",
            path.display()
        ));
    }
    Ok(())
}

/// `tf_shm tree`.
pub fn run(g: &Global, a: &TreeArgs) -> u8 {
    let buffer = match connect::open(g) {
        Ok(b) => b,
        Err(e) => return connect::report_open_error(&e),
    };
    let view = buffer.view();
    let drawn = (a.dot || a.svg.is_some() || a.pdf.is_some()).then(|| file_dot(&view));
    let rows = match rows(&view).and_then(|r| Ok((r, drawn.transpose()?))) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("tf_shm: {e}");
            return crate::EXIT_NO_ARENA;
        }
    };
    let (rows, dot_text) = rows;
    let files = [("svg", &a.svg), ("pdf", &a.pdf)];
    for (format, path) in files {
        let Some(path) = path else { continue };
        if let Err(e) = render(dot_text.as_deref().unwrap_or_default(), format, path) {
            eprintln!("tf_shm: {e}");
            return crate::EXIT_NO_ARENA;
        }
        if !g.json {
            println!("wrote {}", path.display());
        }
    }
    if (a.svg.is_some() || a.pdf.is_some()) && !g.json && !a.dot {
        return 0;
    }
    if a.dot {
        crate::out::emit(&dot_text.unwrap_or_default());
    } else if g.json {
        #[derive(Serialize)]
        struct Tree<'a> {
            frames: &'a [FrameRow],
        }
        print_json(&Tree { frames: &rows });
    } else {
        let width = if a.wide { None } else { terminal_width() };
        crate::out::emit(&text(&rows, &Painter::stdout(), width));
    }
    0
}
