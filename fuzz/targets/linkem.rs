//! The link emulator (mwperf-linkem): its impairment spec as given on the command line, the model
//! it drives with the packets that cross it, and the scan for mwperf headers in those packets
//! (`--layer-log`). The emulator is a binary crate: its modules are compiled here from its
//! source files, unchanged.
//!
//! Input: the spec up to the first '\n', then packets, each as a 1-byte gap (in µs, times 64)
//! and a 2-byte length followed by that many bytes. Invariants: a spec that parses keeps every
//! probability in [0, 1] and its overhead below its frame size; an admitted packet is never
//! scheduled before it arrived and in-order packets never overtake; headers found lie within the
//! packet and decode.
#![allow(dead_code)]

#[path = "../../crates/mwperf-linkem/src/medium.rs"]
mod medium;
#[path = "../../crates/mwperf-linkem/src/model.rs"]
mod model;
#[path = "../../crates/mwperf-linkem/src/rng.rs"]
mod rng;
#[path = "../../crates/mwperf-linkem/src/scan.rs"]
mod scan;
#[path = "../../crates/mwperf-linkem/src/spec.rs"]
mod spec;

use mwperf_core::wire::Header;

fn main() {
    afl::fuzz!(|data: &[u8]| {
        let (spec_text, mut rest) = match data.iter().position(|&b| b == b'\n') {
            Some(i) => (&data[..i], &data[i + 1..]),
            None => (data, &[][..]),
        };
        let Ok(spec_text) = std::str::from_utf8(spec_text) else {
            return;
        };
        let imp = match spec::Impairments::parse(spec_text) {
            Ok(imp) => imp,
            Err(e) => {
                assert!(!e.is_empty());
                spec::Impairments::default()
            }
        };
        for p in [imp.loss, imp.corrupt, imp.dup, imp.reorder] {
            assert!((0.0..=1.0).contains(&p));
        }
        assert!(imp.frame_bytes == 0 || imp.frame_overhead_bytes < imp.frame_bytes);
        let mut m = model::Model::new(imp, 42);
        let (mut now, mut last_in_order) = (0u64, 0u64);
        while rest.len() >= 3 {
            now += u64::from(rest[0]) * 64_000;
            let len = (u16::from_le_bytes([rest[1], rest[2]]) as usize).min(rest.len() - 3);
            let mut packet = rest[3..3 + len].to_vec();
            rest = &rest[3 + len..];
            scan::for_each_header(&packet, |h: &Header| {
                assert!(packet.len() >= mwperf_core::wire::HEADER_LEN);
                let _ = h.message_len();
            });
            if let Ok(a) = m.admit(now, &mut packet) {
                assert!(
                    a.at_ns >= now,
                    "scheduled at {} before arriving at {now}",
                    a.at_ns
                );
                assert!(a.copies == 1 || a.copies == 2);
                assert_eq!(packet.len(), len);
                if !a.reordered {
                    assert!(a.at_ns >= last_in_order);
                    last_in_order = a.at_ns;
                }
            }
        }
    });
}
