//! Helper process for the rendezvous integration tests: an owner, a consumer, or a peer that
//! probes the mapping. Commands and replies are single lines on stdin/stdout; stdin's EOF
//! (the test process died or is done) ends every mode that waits.
//!
//! Usage: `tf_shm_test_peer <owner VALUE | owner-deferred VALUE | consumer | hold | write-probe |
//! join | raw-hello> <runtime dir>` (`--help` for each). Built only with the `test-peer`
//! feature, which the crate's own tests turn on: never installed with the library.
//!
//! `owner-deferred` creates its arena not ready and empty; on "write" it stores map→base with
//! x = VALUE, on "ready" it declares the arena ready (each answered "DONE").

use std::io::{BufRead, Write};
use std::time::Duration;

use tf_shm::rendezvous::{Join, Mode, Serve};
use tf_shm::validate::TransformInput;
use tf_shm::{ArenaConfig, Buffer};

fn mono_ns() -> i64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    t.tv_sec * 1_000_000_000 + t.tv_nsec
}

fn say(line: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

fn wait_for_eof(mut on_line: impl FnMut(&str)) {
    for line in std::io::stdin().lock().lines() {
        match line {
            Ok(l) if l == "quit" => return,
            Ok(l) => on_line(&l),
            Err(_) => return,
        }
    }
}

fn x_of(b: &Buffer) -> String {
    match b.lookup_transform("map", "base", 0) {
        Ok(t) => t.transform.translation[0].to_string(),
        Err(e) => format!("ERR:{}", e.class_name()),
    }
}

/// Helper process for tf_shm's rendezvous tests: an owner, a consumer, or a peer that probes
/// the mapping or the socket. Replies are lines on stdout; "quit" or the end of stdin ends the
/// modes that wait.
#[derive(clap::Parser)]
#[command(name = "tf_shm_test_peer")]
struct Cli {
    #[command(subcommand)]
    peer: Peer,
}

#[derive(clap::Subcommand)]
enum Peer {
    /// Create the arena (require_create), write map → base with x = VALUE m, print
    /// "READY <pid> <serving since, monotonic ns>", serve until stdin ends
    Owner {
        /// Translation x of map → base, m
        #[arg(allow_negative_numbers = true)]
        value: f64,
        /// Rendezvous runtime directory
        runtime_dir: String,
    },
    /// Create the arena empty and not declared ready, print "READY <pid> <serving since>"; then
    /// on "write" store map → base with x = VALUE m, on "ready" declare the arena ready (each
    /// answered "DONE <monotonic ns>")
    OwnerDeferred {
        /// Translation x of map → base, m
        #[arg(allow_negative_numbers = true)]
        value: f64,
        /// Rendezvous runtime directory
        runtime_dir: String,
    },
    /// Join (waiting up to 10 s), print "JOINED <slot> <x> <ns taken>", then report each new
    /// arena generation as "GEN <generation> <x> <monotonic ns>"
    Consumer {
        /// Rendezvous runtime directory
        runtime_dir: String,
    },
    /// Join like `consumer` and hold the slot until stdin ends
    Hold {
        /// Rendezvous runtime directory
        runtime_dir: String,
    },
    /// Join, then write through the read-only mapping (expected to die of SIGSEGV)
    WriteProbe {
        /// Rendezvous runtime directory
        runtime_dir: String,
    },
    /// Join once without waiting: print "OK" or "ERR <error>"
    Join {
        /// Rendezvous runtime directory
        runtime_dir: String,
    },
    /// Send a raw hello on the socket and print the owner's status
    RawHello {
        /// Rendezvous runtime directory
        runtime_dir: String,
    },
}

impl Peer {
    /// The mode's name (also the participant name), its runtime dir and owner's value.
    fn split(self) -> (&'static str, String, f64) {
        match self {
            Peer::Owner { value, runtime_dir } => ("owner", runtime_dir, value),
            Peer::OwnerDeferred { value, runtime_dir } => ("owner-deferred", runtime_dir, value),
            Peer::Consumer { runtime_dir } => ("consumer", runtime_dir, 0.0),
            Peer::Hold { runtime_dir } => ("hold", runtime_dir, 0.0),
            Peer::WriteProbe { runtime_dir } => ("write-probe", runtime_dir, 0.0),
            Peer::Join { runtime_dir } => ("join", runtime_dir, 0.0),
            Peer::RawHello { runtime_dir } => ("raw-hello", runtime_dir, 0.0),
        }
    }
}

fn main() {
    let (cmd, dir, value) = <Cli as clap::Parser>::parse().peer.split();
    let open = Join::new().runtime_dir(&dir).participant_name(cmd);
    match cmd {
        "owner" | "owner-deferred" => {
            let deferred = cmd == "owner-deferred";
            let config = ArenaConfig {
                memory_budget_bytes: 4 << 20,
                max_frames: 64,
                ..ArenaConfig::default()
            };
            let mut owner = match Serve::new(config)
                .runtime_dir(&dir)
                .participant_name(cmd)
                .require_create(true)
                .defer_ready(deferred)
                .serve()
            {
                Ok(o) => o,
                Err(e) => {
                    say(&format!("ERR {e}"));
                    std::process::exit(2);
                }
            };
            // Serving starts inside serve(); the arena is empty until the write below.
            let serving_at = mono_ns();
            let input = TransformInput {
                frame_id: "map",
                child_frame_id: "base",
                stamp: 1_000_000_000,
                translation: [value, 0.0, 0.0],
                rotation: [0.0, 0.0, 0.0, 1.0],
            };
            if deferred {
                say(&format!("READY {} {serving_at}", std::process::id()));
                wait_for_eof(|l| {
                    match l {
                        "write" => {
                            owner
                                .writer()
                                .set_transform(&input, "peer", true)
                                .expect("write");
                        }
                        "ready" => owner.writer().declare_ready(),
                        other => panic!("unknown owner command {other}"),
                    }
                    say(&format!("DONE {}", mono_ns()));
                });
                return;
            }
            owner
                .writer()
                .set_transform(&input, "peer", true)
                .expect("write");
            say(&format!("READY {} {serving_at}", std::process::id()));
            wait_for_eof(|_| {});
        }
        "consumer" | "hold" => {
            let t0 = mono_ns();
            let buffer = match open.await_open(Duration::from_secs(10)) {
                Ok(b) => b,
                Err(e) => {
                    say(&format!("ERR {e}"));
                    std::process::exit(2);
                }
            };
            say(&format!(
                "JOINED {} {} {}",
                buffer.slot(),
                x_of(&buffer),
                mono_ns() - t0
            ));
            if cmd == "hold" {
                wait_for_eof(|_| {});
                return;
            }
            let buffer = std::sync::Arc::new(buffer);
            let b = buffer.clone();
            std::thread::spawn(move || {
                let mut seen = b.arena_swaps();
                loop {
                    let g = b.arena_swaps();
                    if g != seen {
                        seen = g;
                        // A new owner may serve before it has written anything: report when
                        // the new arena answers.
                        let deadline = mono_ns() + 2_000_000_000;
                        while x_of(&b).starts_with("ERR") && mono_ns() < deadline {
                            std::thread::sleep(Duration::from_micros(200));
                        }
                        say(&format!("GEN {g} {} {}", x_of(&b), mono_ns()));
                    }
                    std::thread::sleep(Duration::from_micros(200));
                }
            });
            wait_for_eof(|_| {
                say(&format!(
                    "X {} {} {}",
                    x_of(&buffer),
                    buffer.arena_swaps(),
                    buffer.owner_alive()
                ))
            });
        }
        "write-probe" => {
            let buffer = open.open().expect("join");
            let maps = std::fs::read_to_string("/proc/self/maps").expect("maps");
            let line = maps
                .lines()
                .find(|l| l.contains("memfd:tf_shm"))
                .expect("arena mapping");
            let start =
                usize::from_str_radix(line.split('-').next().expect("range"), 16).expect("hex");
            say(&format!("WRITING {line}"));
            // SAFETY: deliberately writes through the arena's read-only mapping: the test
            // expects this process to die of SIGSEGV right here.
            unsafe { std::ptr::write_volatile(start as *mut u8, 0xff) };
            say("SURVIVED");
            drop(buffer);
        }
        "raw-hello" => {
            use tf_shm::arena::{layout_hash, FORMAT_VERSION};
            use tf_shm::rendezvous::wire::{Request, Response, RESPONSE_LEN};
            let sock = std::path::Path::new(&dir).join("0/default.sock");
            let fd = rustix::net::socket(
                rustix::net::AddressFamily::UNIX,
                rustix::net::SocketType::SEQPACKET,
                None,
            )
            .expect("socket");
            rustix::net::connect(&fd, &rustix::net::SocketAddrUnix::new(&sock).expect("addr"))
                .expect("connect");
            let hello = Request::new(
                FORMAT_VERSION,
                layout_hash(),
                Mode::ReadOnly,
                std::process::id(),
                tf_shm::arena::boot_id(),
                "raw",
            );
            // The owner may refuse (and hang up) before reading the hello; its answer is queued.
            let _ = rustix::net::send(&fd, &hello.encode(), rustix::net::SendFlags::NOSIGNAL);
            let mut buf = [0u8; RESPONSE_LEN];
            let (n, _) = rustix::net::recv(&fd, &mut buf[..], rustix::net::RecvFlags::empty())
                .expect("recv");
            match Response::parse(&buf[..n]) {
                Ok(r) => say(&format!("STATUS {:?}", r.status)),
                Err(e) => say(&format!("BAD {e}")),
            }
        }
        "join" => match open.open() {
            Ok(_) => say("OK"),
            Err(e) => say(&format!("ERR {e}")),
        },
        other => unreachable!("mode {other} has no arm"),
    }
}
