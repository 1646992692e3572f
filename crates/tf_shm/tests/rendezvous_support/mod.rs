//! Shared helpers of the rendezvous tests: unique runtime dirs, child peers with line I/O,
//! raw hellos, and the small arena every owner here creates.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::Duration;

use rustix::net::{AddressFamily, RecvFlags, SocketAddrUnix, SocketFlags, SocketType};
use tf_shm::rendezvous::wire::{Response, RESPONSE_LEN};
use tf_shm::rendezvous::{Join, Owner, Serve};
use tf_shm::validate::TransformInput;
use tf_shm::ArenaConfig;

/// A runtime dir of its own (short: socket paths must fit in 108 bytes), removed on drop.
pub struct TestDir(pub PathBuf);

impl TestDir {
    pub fn new(tag: &str) -> TestDir {
        static N: AtomicU32 = AtomicU32::new(0);
        let p = PathBuf::from(format!(
            "/tmp/tfr-{tag}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&p);
        TestDir(p)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }

    pub fn sock(&self) -> PathBuf {
        self.0.join("0/default.sock")
    }

    pub fn open(&self) -> Join {
        Join::new().runtime_dir(&self.0)
    }

    pub fn serve(&self) -> Serve {
        serve().runtime_dir(&self.0)
    }
}

impl Drop for TestDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

pub fn small_config() -> ArenaConfig {
    ArenaConfig {
        memory_budget_bytes: 4 << 20,
        max_frames: 64,
        ..ArenaConfig::default()
    }
}

/// Serving the small arena.
pub fn serve() -> Serve {
    Serve::new(small_config())
}

/// An owner in this process whose arena says map→base has x = `value`.
pub fn owner_in_process(dir: &TestDir, value: f64, serve: Serve) -> Owner {
    let mut owner = serve
        .runtime_dir(dir.path())
        .require_create(true)
        .serve()
        .expect("owner");
    put(&mut owner, "base", 1_000_000_000, value, true);
    owner
}

/// Writes map→`child` at `stamp` (ns): x = `x`, no rotation.
pub fn put(owner: &mut Owner, child: &str, stamp: i64, x: f64, is_static: bool) {
    let input = TransformInput {
        frame_id: "map",
        child_frame_id: child,
        stamp,
        translation: [x, 0.0, 0.0],
        rotation: [0.0, 0.0, 0.0, 1.0],
    };
    owner
        .writer()
        .set_transform(&input, "test", is_static)
        .expect("write");
}

pub fn mono_ns() -> i64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    t.tv_sec * 1_000_000_000 + t.tv_nsec
}

/// A `tf_shm_test_peer` child; killed (SIGKILL) and reaped on drop.
pub struct Peer {
    pub child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
}

impl Peer {
    pub fn spawn(args: &[&str], dir: &TestDir) -> Peer {
        Self::spawn_with(args, dir, |_| {})
    }

    pub fn spawn_with(args: &[&str], dir: &TestDir, tweak: impl FnOnce(&mut Command)) -> Peer {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_tf_shm_test_peer"));
        cmd.args(args)
            .arg(dir.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .env_remove("TF_SHM_DOMAIN")
            .env_remove("ROS_DOMAIN_ID")
            .env_remove("TF_SHM_NAME");
        tweak(&mut cmd);
        let mut child = cmd.spawn().expect("spawn tf_shm_test_peer");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        Peer {
            stdin: child.stdin.take(),
            child,
            lines: rx,
        }
    }

    /// The next line, which must start with `prefix`; its words after the prefix.
    pub fn expect(&self, prefix: &str, timeout: Duration) -> Vec<String> {
        match self.lines.recv_timeout(timeout) {
            Ok(l) => {
                assert!(
                    l.starts_with(prefix),
                    "expected {prefix:?}, peer said {l:?}"
                );
                l.split_whitespace().skip(1).map(str::to_owned).collect()
            }
            Err(RecvTimeoutError::Timeout) => {
                panic!("peer said nothing within {timeout:?} (wanted {prefix})")
            }
            Err(RecvTimeoutError::Disconnected) => panic!("peer exited (wanted {prefix})"),
        }
    }

    pub fn send(&mut self, line: &str) {
        let s = self.stdin.as_mut().expect("stdin");
        writeln!(s, "{line}").expect("write to peer");
        s.flush().expect("flush");
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// SIGKILL and reap.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Starts an owner child with `value` and waits until it serves; returns it and the
/// monotonic time at which it reported serving.
pub fn owner_child(dir: &TestDir, value: f64) -> (Peer, i64) {
    let p = Peer::spawn(&["owner", &value.to_string()], dir);
    let w = p.expect("READY", Duration::from_secs(10));
    let t = w[1].parse().expect("time");
    (p, t)
}

/// A raw connection to the socket of `dir`.
pub fn raw_connect(dir: &TestDir) -> OwnedFd {
    let fd = rustix::net::socket_with(
        AddressFamily::UNIX,
        SocketType::SEQPACKET,
        SocketFlags::CLOEXEC,
        None,
    )
    .expect("socket");
    rustix::net::connect(&fd, &SocketAddrUnix::new(dir.sock()).expect("addr")).expect("connect");
    fd
}

/// Sends `bytes` as one datagram and reads the owner's response (`None` if it hung up).
pub fn raw_exchange(fd: &OwnedFd, bytes: &[u8]) -> Option<Response> {
    rustix::net::send(fd, bytes, rustix::net::SendFlags::NOSIGNAL).expect("send");
    raw_response(fd)
}

pub fn raw_response(fd: &OwnedFd) -> Option<Response> {
    rustix::net::sockopt::set_socket_timeout(
        fd,
        rustix::net::sockopt::Timeout::Recv,
        Some(Duration::from_secs(10)),
    )
    .expect("timeout");
    let mut buf = [0u8; RESPONSE_LEN];
    let (n, _) = rustix::net::recv(fd, &mut buf[..], RecvFlags::empty()).expect("recv");
    (n > 0).then(|| Response::parse(&buf[..n]).expect("response"))
}
