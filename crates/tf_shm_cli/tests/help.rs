//! `tf_shm --help` and every sub-command's help document their options and units.

mod common;

use common::TestDir;

#[test]
fn help_documents_options_and_units() {
    let dir = TestDir::new("hp");
    let top = dir.run(&["--help"]).expect(0).stdout();
    for word in [
        "seconds (s)",
        "hertz (Hz)",
        "metres (m)",
        "--domain",
        "--name",
        "--json",
        "TF_SHM_RUNTIME_DIR",
        "ROS_DOMAIN_ID",
        "Exit status",
        "4 record: the bridge went away",
    ] {
        assert!(top.contains(word), "--help lacks {word:?}:\n{top}");
    }
    let cases: [(&str, &[&str]); 8] = [
        (
            "echo",
            &[
                "--rate <HZ>",
                "Hz",
                "--time <SEC>",
                ", s (0 = latest",
                "--once",
                "Global options",
            ],
        ),
        (
            "lookup",
            &[
                "--time <SEC>",
                "--target-time <SEC>",
                "--source-time <SEC>",
                "--fixed <FRAME>",
            ],
        ),
        (
            "tree",
            &["--dot", "--svg <FILE>", "--pdf <FILE>", "Hz", "(s)"],
        ),
        (
            "view",
            &[
                "--bind <ADDR>",
                "--port <PORT>",
                "--open",
                "token",
                "403",
                "Ctrl-C",
                "loopback",
            ],
        ),
        (
            "monitor",
            &["--rate <HZ>", "--poll <HZ>", "--count <N>", "wall clock"],
        ),
        (
            "record",
            &["--poll <HZ>", "follows its restart", "owner_gaps", "exit"],
        ),
        (
            "participants",
            &["pid", "alive, stuck or free", "--json", "`entry`", "`slot`"],
        ),
        (
            "doctor",
            &[
                "--stale-periods <PERIODS>",
                "--no-data-after <SEC>",
                "--recent <SEC>",
                "--strict",
                "exit status 1",
                "PARTICIPANTS was called SLOTS",
            ],
        ),
    ];
    for (cmd, words) in cases {
        let h = dir.run(&[cmd, "--help"]).expect(0).stdout();
        for w in words {
            assert!(h.contains(w), "{cmd} --help lacks {w:?}:\n{h}");
        }
    }
}
