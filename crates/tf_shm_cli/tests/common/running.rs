//! A `tf_shm` command running as a child process, its output lines arriving on a channel: for
//! tests that signal it (SIGINT, SIGTERM, SIGKILL) and wait for what it says meanwhile.

use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::TestDir;

pub fn signal(child: &Child, sig: rustix::process::Signal) {
    let pid = rustix::process::Pid::from_raw(child.id() as i32).expect("pid");
    rustix::process::kill_process(pid, sig).expect("signal the child");
}

/// A running `tf_shm` whose stderr lines (with `json`: stdout lines) arrive on a channel.
pub struct Running {
    pub child: Child,
    pub lines: mpsc::Receiver<String>,
    tag: String,
}

impl Running {
    /// `tf_shm ARGS`, its lines echoed to the test's stderr marked with `tag`.
    pub fn spawn(dir: &TestDir, tag: &str, args: &[&str], json: bool) -> Running {
        let mut child = dir
            .cmd(args)
            .stderr(if json {
                Stdio::inherit()
            } else {
                Stdio::piped()
            })
            .stdout(if json { Stdio::piped() } else { Stdio::null() })
            .spawn()
            .unwrap_or_else(|e| panic!("spawn tf_shm {tag}: {e}"));
        let out: Box<dyn std::io::Read + Send> = if json {
            Box::new(child.stdout.take().unwrap())
        } else {
            Box::new(child.stderr.take().unwrap())
        };
        let (tx, lines) = mpsc::channel();
        let mark = tag.to_string();
        std::thread::spawn(move || {
            for l in BufReader::new(out).lines().map_while(Result::ok) {
                eprintln!("[{mark}] {l}");
                if tx.send(l).is_err() {
                    break;
                }
            }
        });
        Running {
            child,
            lines,
            tag: tag.to_string(),
        }
    }

    /// Waits for a line containing `what`.
    pub fn wait_for(&self, what: &str, timeout: Duration) -> String {
        let end = Instant::now() + timeout;
        loop {
            let left = end.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(l) if l.contains(what) => return l,
                Ok(_) => {}
                Err(e) => panic!("no line with {what:?} from tf_shm {}: {e}", self.tag),
            }
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends `sig`, then waits for the exit; returns the exit code and the lines not yet read.
    pub fn end(mut self, sig: rustix::process::Signal) -> (Option<i32>, Vec<String>) {
        signal(&self.child, sig);
        let status = self.child.wait().unwrap();
        // The reader thread ends at the pipe's end, after the last line.
        let rest = self.lines.iter().collect();
        (status.code(), rest)
    }

    /// SIGTERM, then the exit status must be 0.
    pub fn stop(self) {
        let tag = self.tag.clone();
        let (code, _) = self.end(rustix::process::Signal::TERM);
        assert_eq!(code, Some(0), "tf_shm {tag} exited {code:?}");
    }
}

impl Drop for Running {
    /// A test that failed midway must not leave a looping or holding process behind.
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// `tf_shm replay -q ARGS`.
pub fn replay(dir: &TestDir, args: &[&str]) -> Running {
    Running::spawn(dir, "replay", &[&["replay", "-q"], args].concat(), false)
}

/// `tf_shm --json replay -q ARGS`: the lines are its JSON events.
pub fn replay_json(dir: &TestDir, args: &[&str]) -> Running {
    Running::spawn(
        dir,
        "replay",
        &[&["--json", "replay", "-q"], args].concat(),
        true,
    )
}
