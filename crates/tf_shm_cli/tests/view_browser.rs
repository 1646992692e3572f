//! `tf_shm view` in a real headless browser (Chromium, driven over the DevTools protocol):
//! the page loads from the command over a ~200-frame arena, shows every frame and edge,
//! updates when a sample arrives, marks a frame stale when its publisher stops and one
//! re-parented as such, shows the picked pair's transform (and the error of a pair with no
//! connection) exactly as `tf_shm lookup` / `tf_shm echo` print them, collapses a subtree and
//! finds a hidden frame by name; requests without the token are refused; Ctrl-C stops it. Keeps screenshots in target/tmp/tf_shm_view*.png and prints the server's CPU.
//!
//! Needs `chromium` (Debian's package; scripts/test.sh installs it) or $CHROMIUM.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine;
use common::{set, TestDir};
use serde_json::{json, Value};
use tf_shm::rendezvous::Owner;
use tf_shm::time::unix_now_ns;
use tf_shm::ArenaConfig;
use tungstenite::{Message, WebSocket};

/// Static links under base_link, four children each: with map, odom, base_link, laser,
/// world2 and thing the tree has 196 frames.
const LINKS: usize = 190;

fn signal(child: &Child, sig: rustix::process::Signal) {
    let pid = rustix::process::Pid::from_raw(child.id() as i32).expect("pid");
    rustix::process::kill_process(pid, sig).expect("signal the child");
}

/// A child process killed when dropped.
struct Proc(Child);
impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn statics(owner: &mut Owner) -> Vec<String> {
    let q = [0.0, 0.0, 0.0, 1.0];
    let mut names = vec!["map", "odom", "base_link", "laser", "world2", "thing"]
        .into_iter()
        .map(String::from)
        .collect::<Vec<_>>();
    set(owner, "base_link", "laser", 0, [0.2, 0.0, 0.1], q, true);
    set(owner, "world2", "thing", 0, [1.0, 0.0, 0.0], q, true);
    for i in 0..LINKS {
        let parent = if i == 0 {
            "base_link".to_owned()
        } else {
            format!("link_{}", (i - 1) / 4)
        };
        let child = format!("link_{i}");
        set(
            owner,
            &parent,
            &child,
            0,
            [0.01 * i as f64, 0.0, 0.0],
            q,
            true,
        );
        names.push(child);
    }
    names
}

fn publish(owner: &mut Owner, parent: &str, child: &str, stamp: i64) {
    set(
        owner,
        parent,
        child,
        stamp,
        [1.0, 2.0, 0.0],
        [0.0, 0.0, 0.0, 1.0],
        false,
    );
}

/// A raw HTTP/1.1 GET; the status code and body.
fn get(addr: &str, path: &str) -> (u16, String) {
    let mut s = TcpStream::connect(addr).expect("connect to tf_shm view");
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    let code = out
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .expect("status");
    let body = out.split_once("\r\n\r\n").map_or("", |b| b.1).to_owned();
    (code, body)
}

/// The DevTools protocol over the browser's websocket, commands sent to one page's session.
struct Cdp {
    ws: WebSocket<tungstenite::stream::MaybeTlsStream<TcpStream>>,
    next: u64,
    session: Option<String>,
}

impl Cdp {
    fn call(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let id = self.next;
        let mut msg = json!({ "id": id, "method": method, "params": params });
        if let Some(s) = &self.session {
            msg["sessionId"] = json!(s);
        }
        self.ws.send(Message::text(msg.to_string())).unwrap();
        loop {
            let m = self.ws.read().expect("DevTools message");
            let Message::Text(t) = m else { continue };
            let v: Value = serde_json::from_str(&t).unwrap();
            if v["id"] == json!(id) {
                assert!(v.get("error").is_none(), "{method}: {v}");
                return v["result"].clone();
            }
        }
    }

    /// Evaluates a JavaScript expression in the page; its value.
    fn eval(&mut self, expr: &str) -> Value {
        let r = self.call(
            "Runtime.evaluate",
            json!({ "expression": expr, "returnByValue": true, "awaitPromise": true }),
        );
        assert!(r.get("exceptionDetails").is_none(), "{expr}: {r}");
        r["result"]["value"].clone()
    }
}

/// Evaluates `expr` until `ok` holds for its value (calling `between` each round), or fails
/// after `timeout` with the last value.
fn wait_for(
    cdp: &mut Cdp,
    expr: &str,
    timeout: Duration,
    mut between: impl FnMut(),
    ok: impl Fn(&Value) -> bool,
) -> Value {
    let end = Instant::now() + timeout;
    loop {
        let v = cdp.eval(expr);
        if ok(&v) {
            return v;
        }
        assert!(Instant::now() < end, "timed out waiting on {expr}: {v}");
        between();
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let after = stat.rsplit_once(')').unwrap().1;
    let f: Vec<&str> = after.split_whitespace().collect();
    f[11].parse::<u64>().unwrap() + f[12].parse::<u64>().unwrap()
}

/// Keeps a screenshot of the page under target/tmp/ (CI keeps it as an artifact).
fn screenshot(cdp: &mut Cdp, name: &str) {
    let shot = cdp.call("Page.captureScreenshot", json!({ "format": "png" }));
    let png = base64::engine::general_purpose::STANDARD
        .decode(shot["data"].as_str().unwrap())
        .unwrap();
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::write(&path, png).unwrap();
    println!("screenshot: {}", path.display());
}

fn chromium(profile: &std::path::Path) -> (Proc, String) {
    let bin = std::env::var("CHROMIUM").unwrap_or_else(|_| "chromium".into());
    let mut child = Command::new(&bin)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--no-default-browser-check",
            "--window-size=1600,1000",
            "--remote-debugging-port=0",
            "--remote-debugging-address=127.0.0.1",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg("about:blank")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| {
            panic!("cannot run {bin} ({e}): install Debian's chromium (scripts/test.sh does)")
        });
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if let Some(url) = line.strip_prefix("DevTools listening on ") {
                let _ = tx.send(url.to_owned());
            }
        }
    });
    let url = rx
        .recv_timeout(Duration::from_secs(30))
        .expect("chromium printed its DevTools URL");
    (Proc(child), url)
}

#[test]
fn the_page_in_a_headless_browser() {
    let dir = TestDir::new("vb");
    let mut owner = dir.owner(ArenaConfig {
        memory_budget_bytes: 16 << 20,
        max_frames: 256,
        ..ArenaConfig::default()
    });
    let names = statics(&mut owner);
    let t0 = unix_now_ns();
    for i in 0..5 {
        let stamp = t0 - (5 - i) * 50_000_000;
        publish(&mut owner, "map", "odom", stamp);
        publish(&mut owner, "odom", "base_link", stamp);
    }

    // 20 periods (1 s at 20 Hz): a loaded machine's pause in this test's publishing loop is
    // not taken for a stopped publisher.
    let mut view = dir.cmd(&["view", "--port", "0", "--stale-periods", "20"]);
    let mut view = Proc(view.stdout(Stdio::piped()).spawn().expect("tf_shm view"));
    let mut first = String::new();
    let mut out = BufReader::new(view.0.stdout.take().unwrap());
    out.read_line(&mut first).unwrap();
    std::thread::spawn(move || std::io::copy(&mut out, &mut std::io::sink()));
    let url = first
        .trim()
        .strip_prefix("tf_shm view: serving ")
        .unwrap_or_else(|| panic!("no URL printed: {first:?}"))
        .to_owned();
    let rest = url.strip_prefix("http://").unwrap();
    let (addr, path) = rest.split_once('/').unwrap();
    assert!(addr.starts_with("127.0.0.1:"), "loopback by default: {url}");
    let token = path.trim_end_matches('/');
    assert_eq!(token.len(), 32, "a 128-bit token: {url}");

    // Without the token, or with another, nothing is served.
    for p in [
        "/",
        "/state",
        "/graph.dot",
        "/viz.js",
        "/0123456789abcdef0123456789abcdef/state",
    ] {
        assert_eq!(get(addr, p).0, 403, "{p} without the token");
    }
    let (code, body) = get(addr, &format!("/{token}/state"));
    assert_eq!(code, 200);
    let state: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(state["frames"].as_array().unwrap().len(), names.len());

    let profile = dir.path().join("chromium");
    let (_browser, ws_url) = chromium(&profile);
    let (ws, _) = tungstenite::connect(ws_url.as_str()).expect("DevTools websocket");
    let mut cdp = Cdp {
        ws,
        next: 0,
        session: None,
    };
    let target = cdp.call("Target.createTarget", json!({ "url": url }))["targetId"].clone();
    let session = cdp.call(
        "Target.attachToTarget",
        json!({ "targetId": target, "flatten": true }),
    )["sessionId"]
        .as_str()
        .unwrap()
        .to_owned();
    cdp.session = Some(session);

    // Every frame drawn as a node, every parent → child as an edge; both published at 20 Hz.
    let mut last = Instant::now();
    let mut keep_publishing = |owner: &mut Owner, frames: &[(&str, &str)]| {
        if last.elapsed() >= Duration::from_millis(50) {
            last = Instant::now();
            for (p, c) in frames {
                publish(owner, p, c, unix_now_ns());
            }
        }
    };
    let both = [("map", "odom"), ("odom", "base_link")];
    let drawn = wait_for(
        &mut cdp,
        "window.tfView && tfView.layouts > 0 ? \
         [...document.querySelectorAll('g.node')].map(g => g.id) : null",
        Duration::from_secs(30),
        || keep_publishing(&mut owner, &both),
        |v| v.as_array().is_some_and(|a| a.len() == names.len()),
    );
    let mut drawn: Vec<String> = drawn
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_owned())
        .collect();
    drawn.sort();
    let mut expected: Vec<String> = names.iter().map(|n| format!("frame:{n}")).collect();
    expected.sort();
    assert_eq!(drawn, expected);
    let edges = cdp.eval("[...document.querySelectorAll('g.edge')].map(g => g.id).length");
    assert_eq!(
        edges,
        json!(names.len() - 2),
        "one edge per frame but the two roots"
    );
    let header = cdp.eval("document.getElementById('header').textContent");
    let header = header.as_str().unwrap();
    assert!(
        header.contains(&format!("bridge pid {}", std::process::id()))
            && header.contains(&format!("{} of 256 frames", names.len()))
            && header.contains("cache time 10.0 s")
            && header.contains("ready"),
        "{header}"
    );
    // A big tree starts compact (no edge labels, left to right); turn the labels on.
    let edge_odom = "document.getElementById('edge:odom').textContent";
    let compact = cdp.eval(edge_odom);
    assert!(
        !compact.as_str().unwrap().contains("Broadcaster"),
        "{compact}"
    );
    cdp.eval(
        "const l = document.getElementById('labels'); l.checked = true; \
         l.dispatchEvent(new Event('change'))",
    );
    wait_for(
        &mut cdp,
        edge_odom,
        Duration::from_secs(30),
        || keep_publishing(&mut owner, &both),
        |v| {
            v.as_str()
                .is_some_and(|s| s.contains("Broadcaster: test_pub"))
        },
    );
    let static_edge = cdp.eval("document.getElementById('edge:laser').textContent");
    assert!(
        static_edge.as_str().unwrap().contains("static"),
        "{static_edge}"
    );
    let dashed = cdp.eval(
        "document.querySelector('#edge\\\\:laser path').getAttribute('stroke-dasharray') !== null",
    );
    assert_eq!(dashed, json!(true), "a static edge is dashed");
    let text = cdp.eval(edge_odom);
    assert!(
        text.as_str().unwrap().contains("Average rate: ") && text.as_str().unwrap().contains(" Hz"),
        "{text}"
    );

    // A sample arrives: the page shows its stamp without reloading. Then odom's publisher
    // stops (base_link's goes on): odom is marked stale, base_link is not.
    let layouts = cdp.eval("tfView.layouts");
    let stamp = unix_now_ns();
    publish(&mut owner, "map", "odom", stamp);
    let want = format!("Most recent transform: {:.6} s", stamp as f64 / 1e9);
    wait_for(
        &mut cdp,
        edge_odom,
        Duration::from_secs(10),
        || keep_publishing(&mut owner, &both[1..]),
        |v| v.as_str().is_some_and(|s| s.contains(&want)),
    );
    wait_for(
        &mut cdp,
        "document.getElementById('frame:odom').classList.contains('flag-STALE')",
        Duration::from_secs(10),
        || keep_publishing(&mut owner, &both[1..]),
        |v| v == &json!(true),
    );
    assert_eq!(
        cdp.eval("document.getElementById('frame:base_link').classList.contains('flag-STALE')"),
        json!(false),
        "base_link is still published"
    );
    assert_eq!(
        cdp.eval("tfView.layouts"),
        layouts,
        "updated in place, not laid out again"
    );
    let info = cdp.eval("document.getElementById('frame:odom').querySelector('title').textContent");
    assert!(
        info.as_str().unwrap().contains("stale: no sample for"),
        "{info}"
    );
    let doctor = cdp.eval("document.getElementById('doctor').textContent");
    assert!(doctor.as_str().unwrap().contains("STALE"), "{doctor}");

    // The CPU the server spends while the page polls the ~200-frame tree.
    let pid = view.0.id();
    let polls0 = cdp.eval("tfView.ticks").as_u64().unwrap();
    let (c0, w0) = (cpu_ticks(pid), Instant::now());
    std::thread::sleep(Duration::from_secs(5));
    let ticks_per_s = 100.0; // USER_HZ on Linux
    let secs = w0.elapsed().as_secs_f64();
    let cpu = (cpu_ticks(pid) - c0) as f64 / ticks_per_s / secs;
    let polls = cdp.eval("tfView.ticks").as_u64().unwrap() - polls0;
    println!(
        "tf_shm view over {} frames, the page polling {:.1} times a second: server CPU {:.1} % \
         of a core",
        names.len(),
        polls as f64 / secs,
        cpu * 100.0
    );
    assert!(
        polls as f64 >= secs,
        "the page polls every second at least: {polls} in {secs:.1} s"
    );

    // Pick two frames by clicking them: the transform as `tf_shm lookup` prints it; then a
    // pair with no connection: the error as `tf_shm echo` prints it.
    let click = |cdp: &mut Cdp, name: &str| {
        cdp.eval(&format!(
            "document.getElementById('frame:{name}').dispatchEvent(new MouseEvent('click', \
             {{bubbles: true}})); new Promise(r => setTimeout(r, 400))"
        ));
    };
    click(&mut cdp, "map");
    click(&mut cdp, "laser");
    let cli = dir.run(&["lookup", "map", "laser"]).expect(0).stdout();
    let echo = wait_for(
        &mut cdp,
        "document.getElementById('echo').textContent",
        Duration::from_secs(10),
        || {},
        |v| v.as_str().is_some_and(|s| s.trim() == cli.trim()),
    );
    assert!(echo.as_str().unwrap().contains("- Translation: ["));
    click(&mut cdp, "map");
    click(&mut cdp, "thing");
    let err = dir
        .run(&["echo", "--once", "map", "thing"])
        .expect(1)
        .stderr();
    assert!(err.contains("Waiting for transform map -> thing:"), "{err}");
    wait_for(
        &mut cdp,
        "document.getElementById('echo').textContent",
        Duration::from_secs(10),
        || {},
        |v| v.as_str().is_some_and(|s| s.trim() == err.trim()),
    );

    screenshot(&mut cdp, "tf_shm_view.png");

    // Collapse a subtree (double-click): its frames leave the graph, the node says how many.
    cdp.eval(
        "document.getElementById('frame:link_0').dispatchEvent(new MouseEvent('dblclick', \
         {bubbles: true}))",
    );
    let shown = wait_for(
        &mut cdp,
        "document.querySelectorAll('g.node').length",
        Duration::from_secs(10),
        || {},
        |v| v.as_u64().is_some_and(|n| n < 10),
    );
    assert_eq!(shown, json!(names.len() - (LINKS - 1)));
    let label = cdp.eval("document.getElementById('frame:link_0').textContent");
    assert!(
        label
            .as_str()
            .unwrap()
            .contains(&format!("(+{} hidden)", LINKS - 1)),
        "{label}"
    );
    // Search finds a hidden frame and expands what hides it.
    cdp.eval(
        "const s = document.getElementById('search'); s.value = 'link_77'; \
         s.dispatchEvent(new KeyboardEvent('keydown', {key: 'Enter'}))",
    );
    wait_for(
        &mut cdp,
        "(() => { const g = document.getElementById('frame:link_77'); \
         if (!g || !g.classList.contains('search-hit')) return false; \
         const n = g.getBoundingClientRect(), a = document.getElementById('graph') \
           .getBoundingClientRect(), x = n.x + n.width / 2, y = n.y + n.height / 2; \
         return x > a.left && x < a.right && y > a.top && y < a.bottom; })()",
        Duration::from_secs(10),
        || {},
        |v| v == &json!(true),
    );

    screenshot(&mut cdp, "tf_shm_view_search.png");

    // A frame re-parented (thing: world2 → map) is drawn under its new parent and flagged.
    let q = [0.0, 0.0, 0.0, 1.0];
    set(&mut owner, "map", "thing", 0, [1.0, 0.0, 0.0], q, true);
    wait_for(
        &mut cdp,
        "(() => { const e = document.getElementById('edge:thing'); \
         return !!e && e.querySelector('title').textContent === 'map->thing' && \
         document.getElementById('frame:thing').classList.contains('flag-PARENTS'); })()",
        Duration::from_secs(10),
        || {},
        |v| v == &json!(true),
    );

    // Ctrl-C stops the server.
    signal(&view.0, rustix::process::Signal::INT);
    let end = Instant::now() + Duration::from_secs(5);
    loop {
        if let Some(status) = view.0.try_wait().unwrap() {
            assert!(status.success(), "{status}");
            break;
        }
        assert!(Instant::now() < end, "tf_shm view did not stop on SIGINT");
        std::thread::sleep(Duration::from_millis(20));
    }
}
