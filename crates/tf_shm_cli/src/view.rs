//! `tf_shm view`: a live page of the tree in a web browser, served from the arena.
//!
//! The server (axum on a single-threaded tokio runtime) answers only under `/<token>/`, a
//! random 128-bit token printed in the URL; anything else gets 403. Under it:
//!
//! | path         | what                                                                     |
//! |--------------|--------------------------------------------------------------------------|
//! | `/`          | the page (`assets/view/index.html`)                                      |
//! | `viz.js`     | Viz.js, Graphviz in WebAssembly (`assets/viz-js`, vendored)              |
//! | `state`      | JSON: header line, frames with edge labels and doctor's flags, doctor's non-ok checks, the structure's key; with `?target=&source=` the pair's transform as `echo` prints it |
//! | `graph.dot`  | the DOT text of [`graph::dot`]; `?collapsed=a,b` leaves their subtrees out, `rankdir=LR` lays it out left to right, `labels=0` leaves the edge labels out |
//!
//! The page polls `state` 4 times a second, lays out `graph.dot` again only when the key of
//! the tree's structure (names, parents, kinds) changes, and updates labels and flags in place.

use std::collections::hash_map::DefaultHasher;
use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};
use std::io::Read;
use std::sync::{Arc, Mutex};

use axum::extract::{Query, State};
use axum::http::{header, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use tf_shm::time::unix_now_ns;
use tf_shm::Buffer;

use crate::cli::{DoctorArgs, Global, ViewArgs};
use crate::doctor::{self, Check, Verdict};
use crate::graph::{self, Node};
use crate::out::Painter;
use crate::report::TransformReport;
use crate::{connect, echo};

const PAGE: &str = include_str!("../assets/view/index.html");
const VIZ_JS: &str = include_str!("../assets/viz-js/viz-global.js");

/// What the server keeps: where the arena is, the joined buffer (joined again after a failure),
/// the token and doctor's thresholds.
struct App {
    global: Global,
    buffer: Mutex<Option<Buffer>>,
    token: String,
    doctor: DoctorArgs,
}

/// One frame of the page's state.
#[derive(Serialize)]
struct LiveFrame {
    #[serde(flatten)]
    node: Node,
    /// The lines of the edge label into it ([`graph::edge_label`]).
    label: Vec<String>,
}

/// The picked pair's lookup at time 0, as `echo` prints it.
#[derive(Serialize)]
struct Pair {
    target: String,
    source: String,
    ok: bool,
    text: String,
}

/// What `state` answers.
#[derive(Serialize, Default)]
struct Live {
    /// Whether the arena could be read; `error` says why not.
    ok: bool,
    error: Option<String>,
    /// The arena's header facts, one line.
    header: String,
    /// Changes when a frame comes, goes, changes parent or kind: the page lays out again.
    structure: String,
    frames: Vec<LiveFrame>,
    /// doctor's checks of the arena that are not ok.
    doctor: Vec<Check>,
    pair: Option<Pair>,
}

/// A random token: 16 bytes of the kernel's random source, as hex.
fn token() -> std::io::Result<String> {
    let mut b = [0u8; 16];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut b)?;
    Ok(b.iter().map(|x| format!("{x:02x}")).collect())
}

fn structure_key(nodes: &[Node]) -> String {
    let mut h = DefaultHasher::new();
    for n in nodes {
        (&n.row.name, &n.row.parent, n.row.kind).hash(&mut h);
    }
    format!("{:016x}", h.finish())
}

fn header_line(stats: &tf_shm::inspect::ArenaStats, b: &Buffer, now: i64) -> String {
    let ready = if stats.ready_unix_ns != 0 {
        "ready".to_owned()
    } else {
        format!(
            "not ready ({:.1} s since creation)",
            (now - stats.created_unix_ns) as f64 / 1e9
        )
    };
    format!(
        "bridge pid {} · {} · cache time {:.1} s · {} of {} frames · {ready} · {} transforms \
         accepted",
        stats.owner_pid,
        b.location(),
        stats.cache_time_ns as f64 / 1e9,
        stats.frames,
        stats.max_frames,
        stats.accepted_total
    )
}

impl App {
    /// Runs `f` with the buffer, joining the arena first if needed.
    fn with_buffer<T>(&self, f: impl FnOnce(&Buffer) -> Result<T, String>) -> Result<T, String> {
        let mut guard = self.buffer.lock().unwrap_or_else(|p| p.into_inner());
        if guard.is_none() {
            *guard = Some(connect::open(&self.global).map_err(|e| e.to_string())?);
        }
        let r = f(guard.as_ref().expect("joined"));
        if r.is_err() {
            *guard = None;
        }
        r
    }

    fn live(&self, q: &HashMap<String, String>) -> Live {
        let now = unix_now_ns();
        let r = self.with_buffer(|b| {
            let view = b.view();
            let (nodes, stats) =
                graph::nodes(&view, &self.doctor, now).map_err(|e| e.to_string())?;
            let doctor = doctor::arena_checks(&view, &self.doctor, now)
                .into_iter()
                .filter(|c| c.status != Verdict::Ok)
                .collect();
            let pair = match (q.get("target"), q.get("source")) {
                (Some(t), Some(s)) if !t.is_empty() && !s.is_empty() => {
                    let r = b.lookup_transform(t, s, 0);
                    Some(Pair {
                        target: t.clone(),
                        source: s.clone(),
                        ok: r.is_ok(),
                        text: match &r {
                            Ok(x) => TransformReport::new(x).to_text(3),
                            Err(e) => echo::error_text(t, s, e, true, &Painter::plain()),
                        },
                    })
                }
                _ => None,
            };
            Ok(Live {
                ok: true,
                error: None,
                header: header_line(&stats, b, now),
                structure: structure_key(&nodes),
                frames: nodes
                    .into_iter()
                    .map(|n| LiveFrame {
                        label: graph::edge_label(&n.row, now),
                        node: n,
                    })
                    .collect(),
                doctor,
                pair,
            })
        });
        r.unwrap_or_else(|e| Live {
            error: Some(e),
            header: "no arena".to_owned(),
            ..Live::default()
        })
    }

    fn dot(&self, q: &HashMap<String, String>) -> Result<String, String> {
        let now = unix_now_ns();
        let collapsed: HashSet<String> = q
            .get("collapsed")
            .map(|c| {
                c.split(',')
                    .filter(|s| !s.is_empty())
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default();
        self.with_buffer(|b| {
            let (nodes, _) =
                graph::nodes(&b.view(), &self.doctor, now).map_err(|e| e.to_string())?;
            Ok(graph::dot(
                &nodes,
                &graph::DotOptions {
                    now,
                    collapsed,
                    left_to_right: q.get("rankdir").is_some_and(|d| d == "LR"),
                    no_edge_labels: q.get("labels").is_some_and(|l| l == "0"),
                    file: false,
                },
            ))
        })
    }
}

fn reply(status: StatusCode, content_type: &'static str, body: impl IntoResponse) -> Response {
    (
        status,
        [
            (header::CONTENT_TYPE, content_type),
            (header::CACHE_CONTROL, "no-store"),
            (header::REFERRER_POLICY, "no-referrer"),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            (
                header::CONTENT_SECURITY_POLICY,
                "default-src 'self'; script-src 'self' 'unsafe-inline' 'wasm-unsafe-eval'; \
                 style-src 'self' 'unsafe-inline'; connect-src 'self' data:; img-src 'self' data:",
            ),
        ],
        body,
    )
        .into_response()
}

/// Every request: the token first, then the path under it.
async fn handle(
    State(app): State<Arc<App>>,
    uri: Uri,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    let path = uri.path().strip_prefix('/').unwrap_or_default();
    let (token, rest) = path.split_once('/').unwrap_or((path, ""));
    if token != app.token {
        return reply(
            StatusCode::FORBIDDEN,
            "text/plain; charset=utf-8",
            "403: this page needs the URL tf_shm view printed (with its token)\n",
        );
    }
    match rest {
        "" if !path.ends_with('/') => (
            StatusCode::PERMANENT_REDIRECT,
            [(header::LOCATION, format!("/{token}/"))],
        )
            .into_response(),
        "" => reply(StatusCode::OK, "text/html; charset=utf-8", PAGE),
        "viz.js" => reply(StatusCode::OK, "text/javascript; charset=utf-8", VIZ_JS),
        "state" => {
            let live = app.live(&q);
            reply(
                StatusCode::OK,
                "application/json",
                serde_json::to_string(&live).expect("serialisable"),
            )
        }
        "graph.dot" => match app.dot(&q) {
            Ok(d) => reply(StatusCode::OK, "text/vnd.graphviz; charset=utf-8", d),
            Err(e) => reply(
                StatusCode::SERVICE_UNAVAILABLE,
                "text/plain; charset=utf-8",
                e,
            ),
        },
        _ => reply(
            StatusCode::NOT_FOUND,
            "text/plain; charset=utf-8",
            "404: not found\n",
        ),
    }
}

async fn stopped() {
    use tokio::signal::unix::{signal, SignalKind};
    match signal(SignalKind::terminate()) {
        Ok(mut term) => {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
        }
        Err(_) => {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}

/// `tf_shm view`.
pub fn run(g: &Global, a: &ViewArgs) -> u8 {
    let token = match token() {
        Ok(t) => t,
        Err(e) => {
            eprintln!("tf_shm: cannot read /dev/urandom for the page's token: {e}");
            return crate::EXIT_NO_ARENA;
        }
    };
    let mut doctor = DoctorArgs::defaults();
    doctor.stale_periods = a.stale_periods;
    doctor.recent = a.recent;
    let app = Arc::new(App {
        global: g.clone(),
        buffer: Mutex::new(None),
        token,
        doctor,
    });
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("tf_shm: cannot start the server's runtime: {e}");
            return crate::EXIT_NO_ARENA;
        }
    };
    rt.block_on(async {
        let listener = match tokio::net::TcpListener::bind((a.bind, a.port)).await {
            Ok(l) => l,
            Err(e) => {
                eprintln!("tf_shm: cannot listen on {}:{}: {e}", a.bind, a.port);
                return crate::EXIT_NO_ARENA;
            }
        };
        let addr = match listener.local_addr() {
            Ok(addr) => addr,
            Err(e) => {
                eprintln!("tf_shm: {e}");
                return crate::EXIT_NO_ARENA;
            }
        };
        let url = format!("http://{addr}/{}/", app.token);
        println!("tf_shm view: serving {url}");
        println!("(the URL is the key: whoever has it sees the TF data; Ctrl-C stops)");
        if !a.bind.is_loopback() {
            eprintln!(
                "tf_shm: warning: listening on {}, not loopback: other machines can reach the page",
                a.bind
            );
        }
        if a.open {
            open_in_browser(&url);
        }
        let router = axum::Router::new().fallback(handle).with_state(app);
        match axum::serve(listener, router)
            .with_graceful_shutdown(stopped())
            .await
        {
            Ok(()) => 0,
            Err(e) => {
                eprintln!("tf_shm: the server failed: {e}");
                crate::EXIT_NO_ARENA
            }
        }
    })
}

/// `xdg-open URL`, its own output hidden (on a machine without a browser it prints one line per
/// method it tried): one line of ours when it cannot start or fails.
fn open_in_browser(url: &str) {
    use std::process::{Command, Stdio};
    let child = Command::new("xdg-open")
        .arg(url)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
    match child {
        Err(e) => eprintln!("tf_shm: cannot start xdg-open ({e}); open the URL yourself"),
        Ok(mut child) => {
            std::thread::spawn(move || match child.wait() {
                Ok(status) if status.success() => {}
                Ok(status) => eprintln!(
                    "tf_shm: xdg-open found no browser to open the page ({status}); open the URL \
                     yourself"
                ),
                Err(e) => eprintln!("tf_shm: xdg-open: {e}; open the URL yourself"),
            });
        }
    }
}
