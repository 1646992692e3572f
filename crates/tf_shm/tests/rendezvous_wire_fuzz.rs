//! Fuzzing the hello parsers: no input makes them panic, every accepted datagram re-encodes to
//! the same bytes, and a valid request with a few bytes changed is refused or re-encodes
//! exactly.
//!
//! Proptest's per-case machinery costs far more than a parse in a debug build (1e6 plain
//! proptest cases took minutes), so each proptest case draws a seed and expands it into
//! `BATCH` inputs with splitmix64: 1 000 proptest cases × 1 000 inputs = 1 000 000 parses per
//! property in a few seconds. A failure reports the seed and the input's index, which
//! reproduce it exactly. `TF_SHM_FUZZ_CASES` overrides the number of proptest cases.

use proptest::prelude::*;
use tf_shm::rendezvous::wire::{Mode, Request, Response, REQUEST_LEN, RESPONSE_LEN};

const BATCH: u64 = 1000;

fn config() -> ProptestConfig {
    let cases = std::env::var("TF_SHM_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000);
    ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// Mostly `len` bytes, so the parser gets past the length check; sometimes any length.
    fn datagram(&mut self, len: usize, out: &mut Vec<u8>) {
        let n = if self.below(4) == 0 {
            self.below(200)
        } else {
            len
        };
        out.clear();
        while out.len() < n {
            let word = self.next().to_le_bytes();
            out.extend_from_slice(&word[..(n - out.len()).min(8)]);
        }
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn request_parser_never_panics(seed in any::<u64>(), magic_ok in any::<bool>()) {
        let mut rng = SplitMix(seed);
        let mut b = Vec::new();
        let valid = Request::new(1, 2, Mode::ReadOnly, 3, [4; 16], "n").encode();
        for i in 0..BATCH {
            rng.datagram(REQUEST_LEN, &mut b);
            if magic_ok && b.len() == REQUEST_LEN {
                // Keep the header valid half the time so the field checks are reached.
                b[..12].copy_from_slice(&valid[..12]);
            }
            if let Ok(r) = Request::parse(&b) {
                prop_assert_eq!(&r.encode()[..], &b[..], "seed {} input {}", seed, i);
            }
        }
    }

    #[test]
    fn response_parser_never_panics(seed in any::<u64>(), magic_ok in any::<bool>()) {
        let mut rng = SplitMix(seed);
        let mut b = Vec::new();
        let head = *b"TFSHMACK\x01\x00\x40\x00";
        for i in 0..BATCH {
            rng.datagram(RESPONSE_LEN, &mut b);
            if magic_ok && b.len() == RESPONSE_LEN {
                b[..12].copy_from_slice(&head);
            }
            if let Ok(r) = Response::parse(&b) {
                prop_assert_eq!(&r.encode()[..], &b[..], "seed {} input {}", seed, i);
            }
        }
    }

    #[test]
    fn mutated_requests_are_refused_or_exact(
        version in any::<u32>(), layout in any::<u64>(), pid in any::<u32>(),
        boot in any::<[u8; 16]>(), name in "[a-z_é]{0,40}", write in any::<bool>(),
        seed in any::<u64>(),
    ) {
        let mode = if write { Mode::ReadWrite } else { Mode::ReadOnly };
        let valid = Request::new(version, layout, mode, pid, boot, &name).encode();
        prop_assert_eq!(Request::parse(&valid).map(|r| r.encode()), Ok(valid));
        let mut rng = SplitMix(seed);
        for i in 0..BATCH {
            let mut b = valid;
            for _ in 0..1 + rng.below(3) {
                b[rng.below(REQUEST_LEN)] = rng.next() as u8;
            }
            if let Ok(r) = Request::parse(&b) {
                prop_assert_eq!(r.encode(), b, "seed {} input {}", seed, i);
            }
        }
    }
}
