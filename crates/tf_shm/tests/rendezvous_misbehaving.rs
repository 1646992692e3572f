//! Clients that misbehave never stop the owner from serving the others, and a peer of another
//! uid is refused.

mod rendezvous_support;

use std::os::unix::process::CommandExt;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rendezvous_support::*;
use tf_shm::rendezvous::wire::{Status, REQUEST_LEN};

const T: Duration = Duration::from_secs(10);

fn joins(dir: &TestDir) {
    let b = dir.open().open().expect("a well-behaved consumer joins");
    assert_eq!(
        b.lookup_transform("map", "base", 0)
            .unwrap()
            .transform
            .translation[0],
        1.0
    );
}

#[test]
fn bad_clients_do_not_block_good_ones() {
    let dir = TestDir::new("bad");
    let events = Arc::new(Mutex::new(Vec::<String>::new()));
    let ev = events.clone();
    let open = serve()
        .timeout(Duration::from_millis(500))
        .on_event(move |m| ev.lock().unwrap().push(m.to_owned()));
    let owner = owner_in_process(&dir, 1.0, open);

    // Silent clients hold connections open and send nothing.
    let silent: Vec<_> = (0..5).map(|_| raw_connect(&dir)).collect();
    joins(&dir);

    // Garbage, short and oversized datagrams each get `Malformed` and a hang-up.
    let garbage = [0xa5u8; REQUEST_LEN];
    let short = [1u8; 5];
    let oversized = vec![0u8; 4096];
    for bytes in [&garbage[..], &short[..], &oversized[..]] {
        let fd = raw_connect(&dir);
        let r = raw_exchange(&fd, bytes).expect("an answer");
        assert_eq!(r.status, Status::Malformed);
        assert_eq!(raw_response(&fd), None, "the owner hangs up after refusing");
        joins(&dir);
    }

    // A client that closes mid-handshake, with and without half a hello.
    drop(raw_connect(&dir));
    let half = raw_connect(&dir);
    rustix::net::shutdown(&half, rustix::net::Shutdown::Write).unwrap();
    drop(half);
    joins(&dir);

    // The silent ones are dropped at their deadline; the owner still serves.
    for fd in &silent {
        assert_eq!(raw_response(fd), None, "a silent client is hung up on");
    }
    joins(&dir);

    let s = owner.stats();
    assert_eq!(s.malformed, 3);
    assert_eq!(s.timed_out, 5);
    assert!(s.closed_early >= 2, "{s:?}");
    assert_eq!(s.granted, 6);
    let deadline = Instant::now() + T;
    while owner.stats().attached != 0 {
        assert!(
            Instant::now() < deadline,
            "attachments of dropped buffers never ended"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(events
        .lock()
        .unwrap()
        .iter()
        .any(|m| m.contains("bad hello")));
}

#[test]
fn a_peer_of_another_uid_is_refused() {
    if rustix::process::geteuid().as_raw() != 0 {
        eprintln!("skipped: needs root to run a peer as uid 65534");
        return;
    }
    let dir = TestDir::new("uid");
    // Dirs nobody can traverse (not list), and a socket it may connect to, so that the refusal
    // comes from the owner's SO_PEERCRED check rather than from file permissions.
    for d in [dir.path().to_owned(), dir.path().join("0")] {
        std::fs::create_dir_all(&d).unwrap();
        std::fs::set_permissions(&d, std::os::unix::fs::PermissionsExt::from_mode(0o711)).unwrap();
    }
    let events = Arc::new(Mutex::new(Vec::<String>::new()));
    let ev = events.clone();
    let owner = owner_in_process(
        &dir,
        1.0,
        serve().on_event(move |m| ev.lock().unwrap().push(m.to_owned())),
    );
    std::fs::set_permissions(
        dir.sock(),
        std::os::unix::fs::PermissionsExt::from_mode(0o666),
    )
    .unwrap();

    let nobody = Peer::spawn_with(&["raw-hello"], &dir, |c| {
        c.uid(65534).gid(65534);
    });
    let words = nobody.expect("STATUS", T);
    assert_eq!(words[0], format!("{:?}", Status::PermissionDenied));
    assert_eq!(owner.stats().refused_credentials, 1);
    assert_eq!(owner.stats().granted, 0);
    let ev = events.lock().unwrap();
    assert!(ev.iter().any(|m| m.contains("uid 65534")), "{ev:?}");

    // The full `open()` as that user fails too (it cannot even read the lock file).
    let joiner = Peer::spawn_with(&["join"], &dir, |c| {
        c.uid(65534).gid(65534);
    });
    joiner.expect("ERR", T);
    joins(&dir);
}
