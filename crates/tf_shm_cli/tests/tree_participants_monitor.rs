//! `tf_shm tree`, `participants` and `monitor` against an in-process arena.

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use common::*;
use tf_shm::time::unix_now_ns;

#[test]
fn tree_text_is_indented_with_aligned_columns() {
    let dir = TestDir::new("tr");
    let mut owner = dir.owner(small_config());
    known_tree(&mut owner);
    set(
        &mut owner,
        "base_link",
        "camera",
        0,
        [0.0; 3],
        [0.0, 0.0, 0.0, 1.0],
        true,
    );
    let out = dir.run(&["tree"]).expect(0).stdout();
    eprintln!("{out}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 6, "{out}");
    assert!(
        lines[0].starts_with("frame") && lines[0].contains("rate") && lines[0].contains("history")
    );
    // Every column starts at the same character offset on every line.
    let col = |l: &str, word: &str| l.find(word).map(|b| l[..b].chars().count());
    let kind_col = col(lines[0], "kind").unwrap();
    let names: Vec<String> = lines[1..]
        .iter()
        .map(|l| {
            l.chars()
                .take(kind_col)
                .collect::<String>()
                .trim_end()
                .to_owned()
        })
        .collect();
    assert_eq!(
        names,
        [
            "map",
            "└─odom",
            "  └─base_link",
            "    ├─camera",
            "    └─laser"
        ]
    );
    assert_eq!(col(lines[1], "root"), Some(kind_col));
    assert_eq!(col(lines[2], "dynamic"), Some(kind_col));
    assert_eq!(col(lines[4], "static"), Some(kind_col));
    let odom = lines[2];
    assert!(
        odom.contains("10.0 Hz") && odom.contains("1.900000 s") && odom.contains("0.900 s"),
        "{odom}"
    );
    assert!(
        odom.contains(" 10  ") && odom.ends_with("test_pub"),
        "{odom}"
    );
    assert!(!out.contains('\x1b'), "no colour when not on a terminal");
}

/// A PR2-shaped tree: 17 levels, the deepest frames with 50-character names, a dynamic chain
/// at the top.
fn deep_tree(owner: &mut tf_shm::rendezvous::Owner) -> Vec<String> {
    let mut names = vec!["map".to_owned()];
    for d in 1..=17 {
        names.push(format!(
            "link_{d:02}_{}",
            "x".repeat(if d >= 13 { 42 } else { 10 })
        ));
    }
    for (i, pair) in names.windows(2).enumerate() {
        for k in 0..5 {
            set(
                owner,
                &pair[0],
                &pair[1],
                if i < 3 { S + k * S / 50 } else { 0 },
                [0.1, 0.0, 0.0],
                [0.0, 0.0, 0.0, 1.0],
                i >= 3,
            );
        }
    }
    names
}

#[test]
fn tree_fits_the_terminal_width_by_leaving_out_columns() {
    let dir = TestDir::new("trw");
    let mut owner = dir.owner(small_config());
    let names = deep_tree(&mut owner);
    let width = |s: &str| s.lines().map(|l| l.chars().count()).max().unwrap();
    let narrow = dir
        .cmd(&["tree"])
        .env("COLUMNS", "100")
        .output()
        .expect("run");
    let narrow = String::from_utf8(narrow.stdout).unwrap();
    eprintln!("{narrow}");
    assert!(width(&narrow) <= 100, "wider than 100 columns:\n{narrow}");
    let last = narrow.lines().last().unwrap();
    assert!(
        last.contains("to fit 100 columns, left out: authority"),
        "{narrow}"
    );
    let header = narrow.lines().next().unwrap();
    assert!(
        header.starts_with("frame") && header.contains("kind"),
        "{header}"
    );
    assert!(!header.contains("authority"), "{header}");
    // Every frame is still there, in its place, with its kind.
    for (d, n) in names.iter().enumerate() {
        let line = narrow.lines().find(|l| l.contains(n.as_str())).unwrap();
        let indent = line.find(n.as_str()).map(|b| line[..b].chars().count());
        assert_eq!(indent, Some(2 * d), "{line}");
        let kind = if d == 0 {
            "root"
        } else if d <= 3 {
            "dynamic"
        } else {
            "static"
        };
        assert!(line.contains(kind), "{line}");
    }
    // Wider terminals keep more columns; --wide and pipes keep them all.
    let wide_term = dir.cmd(&["tree"]).env("COLUMNS", "200").output().unwrap();
    let wide_term = String::from_utf8(wide_term.stdout).unwrap();
    assert!(width(&wide_term) <= 200 && wide_term.lines().next().unwrap().contains("authority"));
    assert!(!wide_term.contains("left out"), "{wide_term}");
    for out in [
        dir.cmd(&["tree", "--wide"])
            .env("COLUMNS", "100")
            .output()
            .unwrap(),
        dir.cmd(&["tree"]).env_remove("COLUMNS").output().unwrap(),
    ] {
        let s = String::from_utf8(out.stdout).unwrap();
        assert!(s.lines().next().unwrap().ends_with("authority"), "{s}");
        assert!(s.contains("50.0 Hz") && !s.contains("left out"), "{s}");
        assert!(width(&s) > 100, "{s}");
    }
}

#[test]
fn tree_json_lists_every_frame_with_numbers() {
    let dir = TestDir::new("trj");
    let mut owner = dir.owner(small_config());
    known_tree(&mut owner);
    let j = dir.run(&["--json", "tree"]).expect(0).json();
    let frames = j["frames"].as_array().unwrap();
    assert_eq!(frames.len(), 4);
    let get = |n: &str| frames.iter().find(|f| f["name"] == n).unwrap().clone();
    let odom = get("odom");
    assert_eq!(odom["parent"], "map");
    assert_eq!(odom["kind"], "dynamic");
    assert_eq!(odom["samples"], 10);
    assert!(close(odom["rate_hz"].as_f64().unwrap(), 10.0, 1e-9));
    assert!(close(odom["history_span_s"].as_f64().unwrap(), 0.9, 1e-9));
    assert!(close(odom["newest_stamp_s"].as_f64().unwrap(), 1.9, 1e-9));
    assert_eq!(get("laser")["kind"], "static");
    assert_eq!(get("laser")["parent"], "base_link");
    assert_eq!(get("map")["kind"], "root");
    assert!(get("map")["parent"].is_null());
}

/// `tree --dot/--svg/--pdf` draw the graph view_frames draws (and `tf_shm view` lays out):
/// every frame a node, every parent → child an edge with view_frames' label. Needs Graphviz
/// `dot` (scripts/test.sh installs it).
#[test]
fn tree_dot_svg_and_pdf_draw_every_frame_and_edge() {
    let dir = TestDir::new("trd");
    let mut owner = dir.owner(small_config());
    known_tree(&mut owner);
    let edges = [
        ("map", "odom"),
        ("odom", "base_link"),
        ("base_link", "laser"),
    ];
    let dot = dir.run(&["tree", "--dot"]).expect(0).stdout();
    assert!(dot.starts_with("digraph G {"), "{dot}");
    assert!(
        dot.contains(
            "\"map\" -> \"odom\" [id=\"edge:odom\", class=\"dynamic\", label=\"Broadcaster: \
             test_pub\\nAverage rate: 10.0 Hz\\nBuffer length: 0.900 s\\nMost recent transform: \
             1.900000 s\\nOldest transform: 1.000000 s\\nDelay: "
        ),
        "{dot}"
    );
    assert!(
        dot.contains(
            "\"base_link\" -> \"laser\" [id=\"edge:laser\", class=\"static\", style=dashed, \
             color=\"#777777\", label=\"Broadcaster: test_pub\\nstatic\\n\"];"
        ),
        "{dot}"
    );
    assert!(
        dot.contains("Recorded at time: "),
        "view_frames' legend: {dot}"
    );
    assert!(dot.trim_end().ends_with('}'));

    let svg = dir.path().join("frames.svg");
    let pdf = dir.path().join("frames.pdf");
    let r = dir.run(&[
        "tree",
        "--svg",
        svg.to_str().unwrap(),
        "--pdf",
        pdf.to_str().unwrap(),
    ]);
    let out = r.expect(0).stdout();
    assert!(out.contains("wrote") && out.contains("frames.pdf"), "{out}");
    let s = std::fs::read_to_string(&svg).unwrap();
    let mut drawn: Vec<&str> = s
        .match_indices("<g id=\"frame:")
        .map(|(i, m)| {
            let rest = &s[i + m.len()..];
            &rest[..rest.find('"').unwrap()]
        })
        .collect();
    drawn.sort();
    assert_eq!(drawn, ["base_link", "laser", "map", "odom"], "{s}");
    for (parent, child) in edges {
        let edge = format!("<g id=\"edge:{child}\" class=\"edge");
        let at = s
            .find(&edge)
            .unwrap_or_else(|| panic!("no edge into {child}: {s}"));
        let title = format!("<title>{parent}&#45;&gt;{child}</title>");
        let group = &s[at..(at + 300).min(s.len())];
        assert!(group.contains(&title), "{title}: {group}");
    }
    assert_eq!(s.matches("<g id=\"edge:").count(), edges.len(), "{s}");
    let p = std::fs::read(&pdf).unwrap();
    assert!(p.starts_with(b"%PDF-"), "a PDF");
}

#[test]
fn participants_from_the_lock_file_with_and_without_an_owner() {
    let dir = TestDir::new("pa");
    let owner = dir.owner(small_config());
    let consumer = tf_shm::Join::new()
        .runtime_dir(dir.path())
        .participant_name("rviz_like")
        .open()
        .unwrap();
    let me = std::process::id().to_string();
    let out = dir.run(&["participants"]).expect(0).stdout();
    eprintln!("{out}");
    let lines: Vec<&str> = out.lines().collect();
    assert!(
        lines[0].contains("entry") && lines[0].contains("pid") && lines[0].contains("state"),
        "{out}"
    );
    assert!(
        lines[1].trim_start().starts_with("owner")
            && lines[1].contains(&me)
            && lines[1].contains("test_bridge")
    );
    assert!(
        lines[1].contains("read-write") && lines[1].contains("alive"),
        "{out}"
    );
    let consumer_line = lines
        .iter()
        .find(|l| l.contains("rviz_like"))
        .expect("consumer listed");
    assert!(
        consumer_line.contains("read-only") && consumer_line.contains("alive"),
        "{out}"
    );
    let j = dir.run(&["--json", "participants"]).expect(0).json();
    let ps = j["participants"].as_array().unwrap();
    assert_eq!(ps[0]["entry"], "owner");
    // `slot`, the former name of `entry`, is kept for scripts until the next release.
    assert!(ps.iter().all(|p| p["slot"] == p["entry"]), "{j}");
    assert!(ps[1..].iter().all(|p| p["entry"]
        .as_str()
        .is_some_and(|e| e.parse::<u32>().is_ok())));
    assert_eq!(ps[0]["pid"], std::process::id());
    assert!(ps
        .iter()
        .any(|p| p["name"] == "rviz_like" && p["alive"] == true && p["mode"] == "read-only"));
    // The owner gone: the lock file still tells who was there; their entries are free again.
    drop(consumer);
    drop(owner);
    let j = dir.run(&["--json", "participants"]).expect(0).json();
    let ps = j["participants"].as_array().unwrap();
    assert_eq!(ps[0]["alive"], false);
    assert!(ps
        .iter()
        .any(|p| p["name"] == "rviz_like" && p["alive"] == false));
    assert!(ps
        .iter()
        .any(|p| p["name"] == "rviz_like" && p["state"] == "free"));
    assert_eq!(ps[0]["state"], "gone");
    let text = dir.run(&["participants"]).expect(0).stdout();
    assert!(
        text.contains("gone") && text.contains("no bridge serves") && text.contains("free"),
        "{text}"
    );
}

#[test]
fn monitor_measures_rate_delay_and_chain() {
    let dir = TestDir::new("mo");
    let mut owner = dir.owner(small_config());
    set(
        &mut owner,
        "map",
        "odom",
        0,
        [0.0; 3],
        [0.0, 0.0, 0.0, 1.0],
        true,
    );
    let stop = Arc::new(AtomicBool::new(false));
    let s = stop.clone();
    // 50 Hz with wall-clock stamps, each 5 ms old when written.
    let writer = std::thread::spawn(move || {
        while !s.load(Ordering::Relaxed) {
            set(
                &mut owner,
                "odom",
                "base_link",
                unix_now_ns() - 5_000_000,
                [1.0, 0.0, 0.0],
                [0.0, 0.0, 0.0, 1.0],
                false,
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        owner
    });
    let r = dir
        .run(&["--json", "monitor", "--rate", "2", "--count", "2"])
        .expect(0);
    let last: serde_json::Value = serde_json::from_str(r.stdout().lines().last().unwrap()).unwrap();
    assert_eq!(r.stdout().lines().count(), 2);
    let f = &last["frames"][0];
    assert_eq!(f["frame"], "base_link");
    assert_eq!(f["parent"], "odom");
    let rate = f["rate_hz"].as_f64().unwrap();
    assert!((15.0..=55.0).contains(&rate), "rate {rate} Hz");
    let avg = f["delay_avg_s"].as_f64().unwrap();
    let max = f["delay_max_s"].as_f64().unwrap();
    assert!(
        avg >= 0.005 && avg <= max && max < 2.0,
        "delay avg {avg} max {max}"
    );
    assert!(f["max_gap_s"].as_f64().unwrap() < 2.0);
    let r = dir
        .run(&[
            "--json",
            "monitor",
            "map",
            "base_link",
            "--rate",
            "4",
            "--count",
            "1",
        ])
        .expect(0);
    let j = r.json();
    assert_eq!(j["chain"], serde_json::json!(["base_link", "odom", "map"]));
    let d = j["chain_delay_s"].as_f64().unwrap();
    assert!((0.0..2.0).contains(&d), "net delay {d}");
    let text = dir
        .run(&["monitor", "map", "base_link", "--rate", "4", "--count", "1"])
        .expect(0)
        .stdout();
    eprintln!("{text}");
    assert!(
        text.contains("Chain is: base_link -> odom -> map"),
        "{text}"
    );
    assert!(text.contains(" Hz") && text.contains(" s"), "{text}");
    stop.store(true, Ordering::Relaxed);
    drop(writer.join().unwrap());
}
