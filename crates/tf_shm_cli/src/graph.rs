//! The frame tree as a graph, as view_frames draws it: one DOT text for `tree --dot/--svg/--pdf`
//! and for the live page of `view` (which lays it out with Graphviz too), each frame with what
//! `doctor` flags on it.

use std::collections::{BTreeMap, HashSet};

use serde::Serialize;
use tf_shm::inspect::{ArenaStats, FrameInfo};
use tf_shm::ArenaView;

use crate::cli::DoctorArgs;
use crate::doctor::{self, Freshness};
use crate::out::{hz, ns_to_s, secs};
use crate::tree::FrameRow;

/// One of doctor's findings about one frame.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Flag {
    /// The doctor check that fails on it: `"STALE"`, `"PARENTS"` or `"HISTORY"`.
    pub code: &'static str,
    /// What was found, one line.
    pub text: String,
}

/// A frame of the graph: its row (as `tree` shows it) and doctor's flags on it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Node {
    /// The frame.
    #[serde(flatten)]
    pub row: FrameRow,
    /// What doctor flags on this frame (empty when healthy).
    pub flags: Vec<Flag>,
}

/// The flags of one frame: the per-frame verdicts of doctor's STALE, PARENTS and HISTORY
/// checks ([`doctor::freshness`], [`doctor::moved_recently`], [`doctor::history_short`]).
pub fn flags(f: &FrameInfo, now: i64, a: &DoctorArgs, recent_ns: i64) -> Vec<Flag> {
    let mut out = Vec::new();
    if let Freshness::Stale { age_s, period_s } = doctor::freshness(f, now, a.stale_periods) {
        out.push(Flag {
            code: "STALE",
            text: format!("stale: no sample for {age_s:.2} s (period {period_s:.3} s)"),
        });
    }
    if doctor::moved_recently(f, now, recent_ns) {
        out.push(Flag {
            code: "PARENTS",
            text: format!(
                "re-parented: {} parent change(s), last {:.1} s ago, now under {}",
                f.parent_changes,
                ns_to_s(now - f.last_parent_change_unix_ns),
                f.parent.as_deref().unwrap_or("?")
            ),
        });
    }
    if doctor::history_short(f) {
        out.push(Flag {
            code: "HISTORY",
            text: if f.no_ring {
                "no history at all (ring pool exhausted)".to_owned()
            } else {
                "history shorter than the cache time (ring pool exhausted)".to_owned()
            },
        });
    }
    out
}

/// Every frame of the arena with its flags at `now` (Unix ns), and the arena's statistics.
pub fn nodes(
    view: &ArenaView,
    a: &DoctorArgs,
    now: i64,
) -> Result<(Vec<Node>, ArenaStats), tf_shm::ArenaError> {
    let stats = view.stats();
    let recent_ns = doctor::recent_ns(a, &stats);
    let nodes = view
        .frames()?
        .iter()
        .map(|f| Node {
            row: FrameRow::new(f),
            flags: flags(f, now, a, recent_ns),
        })
        .collect();
    Ok((nodes, stats))
}

/// The lines of the edge label into a frame: view_frames' (broadcaster, average rate, buffer
/// length, most recent and oldest transform, with units), then the delay of the newest stamp
/// against `now` (Unix ns). A static frame: its broadcaster and "static".
pub fn edge_label(r: &FrameRow, now: i64) -> Vec<String> {
    let mut lines = vec![format!(
        "Broadcaster: {}",
        r.authority.as_deref().unwrap_or("unknown")
    )];
    if r.kind == "static" {
        lines.push("static".to_owned());
    } else {
        lines.push(format!("Average rate: {}", hz(r.rate_hz)));
        lines.push(format!("Buffer length: {}", secs(r.history_span_s, 3)));
        lines.push(format!(
            "Most recent transform: {}",
            secs(r.newest_stamp_s, 6)
        ));
        lines.push(format!("Oldest transform: {}", secs(r.oldest_stamp_s, 6)));
        lines.push(format!(
            "Delay: {}",
            secs(r.newest_stamp_s.map(|s| ns_to_s(now) - s), 3)
        ));
    }
    lines
}

/// How [`dot`] draws.
#[derive(Clone, Debug, Default)]
pub struct DotOptions {
    /// Now, Unix ns: the delays are measured against it.
    pub now: i64,
    /// Frames whose subtrees are left out (drawn as one node saying how many are hidden).
    pub collapsed: HashSet<String>,
    /// Left to right instead of view_frames' top to bottom (a tall page for a wide tree).
    pub left_to_right: bool,
    /// Without the edge labels: a compact graph of names (the page shows them on hover).
    pub no_edge_labels: bool,
    /// For a file (`tree --svg/--pdf`): flags written in the frame's label and coloured in
    /// the graph, and view_frames' "Recorded at time" legend. The live page colours flags
    /// itself, so that a flag coming or going does not move the layout.
    pub file: bool,
}

fn esc(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

/// The flag's colour in a file (the page uses the same colours, in its style sheet).
fn flag_color(code: &str) -> &'static str {
    match code {
        "STALE" => "#f4a6a6",
        "PARENTS" => "#f7c27a",
        _ => "#f3e58a",
    }
}

/// Graphviz DOT of the tree (top to bottom, parent → child), as view_frames lays it out. Node
/// ids are `frame:NAME`, the edge into a frame `edge:NAME`; classes name the frame's kind
/// (`root`, `static`, `dynamic`), static edges are dashed.
pub fn dot(nodes: &[Node], o: &DotOptions) -> String {
    let rows: Vec<FrameRow> = nodes.iter().map(|n| n.row.clone()).collect();
    let by_name: BTreeMap<&str, &Node> = nodes.iter().map(|n| (n.row.name.as_str(), n)).collect();
    let mut children: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for n in nodes {
        if let Some(p) = n.row.parent.as_deref() {
            children.entry(p).or_default().push(&n.row.name);
        }
    }
    let hidden_below = |name: &str| {
        let mut count = 0;
        let mut stack = vec![name];
        let mut seen = HashSet::new();
        while let Some(f) = stack.pop() {
            for &c in children.get(f).into_iter().flatten() {
                if seen.insert(c) {
                    count += 1;
                    stack.push(c);
                }
            }
        }
        count
    };
    let mut s = format!(
        "digraph G {{\n  rankdir={};\n  node [shape=ellipse, style=filled, fillcolor=white, \
         fontname=\"Helvetica\"];\n  edge [fontname=\"Helvetica\", fontsize=10];\n",
        if o.left_to_right { "LR" } else { "TB" }
    );
    let mut hidden: HashSet<&str> = HashSet::new();
    let mut roots = Vec::new();
    for (i, _) in crate::tree::ordered(&rows) {
        let r = &rows[i];
        let name = r.name.as_str();
        let parent = r.parent.as_deref().filter(|p| by_name.contains_key(p));
        if parent.is_some_and(|p| hidden.contains(p) || o.collapsed.contains(p)) {
            hidden.insert(name);
            continue;
        }
        let node = by_name[name];
        let mut label = esc(name);
        let mut attrs = format!("id=\"frame:{}\", class=\"{}\"", esc(name), r.kind);
        if o.collapsed.contains(name) {
            let n = hidden_below(name);
            if n > 0 {
                label += &format!("\\n(+{n} hidden)");
                attrs += ", peripheries=2";
            }
        }
        if o.file && !node.flags.is_empty() {
            for f in &node.flags {
                label += &format!("\\n{}", esc(&f.text));
            }
            attrs += &format!(", fillcolor=\"{}\"", flag_color(node.flags[0].code));
        }
        s += &format!("  \"{}\" [{attrs}, label=\"{label}\"];\n", esc(name));
        let Some(p) = r.parent.as_deref() else {
            roots.push(name);
            continue;
        };
        let label: String = if o.no_edge_labels {
            String::new()
        } else {
            edge_label(r, o.now)
                .iter()
                .map(|l| esc(l) + "\\n")
                .collect()
        };
        let style = if r.kind == "static" {
            ", style=dashed, color=\"#777777\""
        } else {
            ""
        };
        s += &format!(
            "  \"{}\" -> \"{}\" [id=\"edge:{}\", class=\"{}\"{style}, label=\"{label}\"];\n",
            esc(p),
            esc(name),
            esc(name),
            r.kind
        );
    }
    if o.file {
        if let Some(root) = roots.first() {
            s += &format!(
                "  subgraph cluster_legend {{ style=bold; color=black; label=\"view_frames Result \
                 (tf_shm)\";\n    \"Recorded at time: {}\" [shape=plaintext, style=\"\"];\n  }}\n  \
                 \"Recorded at time: {}\" -> \"{}\" [style=invis];\n",
                crate::out::stamp(o.now),
                crate::out::stamp(o.now),
                esc(root)
            );
        }
    }
    s += "}\n";
    s
}
