//! Property tests (proptest) of what mwperf-core parses from outside: durations and byte sizes
//! from the command line (the agent's `--duration`, `--rate`, `--payload`, ...) and the wire
//! header every receiver decodes. The same parsers are fuzzed with AFL++ (fuzz/, docs/fuzzing.md).

use mwperf_core::payload;
use mwperf_core::units::{parse_bytes, parse_duration_ns};
use mwperf_core::wire::{self, Header, HEADER_LEN};
use proptest::prelude::*;

const UNITS: [(&str, u64); 7] = [
    ("ns", 1),
    ("us", 1_000),
    ("µs", 1_000),
    ("ms", 1_000_000),
    ("s", 1_000_000_000),
    ("m", 60_000_000_000),
    ("h", 3_600_000_000_000),
];

fn header() -> impl Strategy<Value = Header> {
    (
        any::<u8>(),
        any::<u32>(),
        any::<u16>(),
        any::<u64>(),
        any::<u64>(),
        any::<u64>(),
        any::<u64>(),
        0u32..2048,
    )
        .prop_map(
            |(flags, run_id, topic, seq, intended_ns, sent_ns, peer_rx_ns, payload_len)| Header {
                flags,
                run_id,
                topic,
                seq,
                intended_ns,
                sent_ns,
                peer_rx_ns,
                payload_len,
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn whole_durations_scale_by_their_unit(n in 0u64..1_000_000, unit in 0usize..UNITS.len()) {
        let (name, scale) = UNITS[unit];
        prop_assert_eq!(parse_duration_ns(&format!("{n}{name}")), Ok(n * scale));
        prop_assert_eq!(parse_duration_ns(&format!(" {n}{name}\t")), Ok(n * scale));
    }

    #[test]
    fn the_control_planes_ns_form_round_trips(ns in 0u64..=i64::MAX as u64) {
        // python/mwperf/durations.py format_duration_arg: what every agent flag receives
        prop_assert_eq!(parse_duration_ns(&format!("{ns}ns")), Ok(ns));
    }

    #[test]
    fn decimal_fractions_are_exact(int in 0u64..1000, frac in 0u64..1000) {
        prop_assert_eq!(parse_duration_ns(&format!("{int}.{frac:03}ms")), Ok(int * 1_000_000 + frac * 1_000));
    }

    #[test]
    fn any_text_is_a_duration_or_an_error_naming_it(text in "[0-9.a-zµ ٣+-]{0,12}|\\PC{0,8}") {
        match parse_duration_ns(&text) {
            Ok(ns) => {
                prop_assert!(ns <= i64::MAX as u64);
                let t = text.trim();
                // ASCII digits (one optional '.') then a unit, or a bare "0"
                let digits = t.trim_end_matches(|c: char| c.is_alphabetic());
                prop_assert!(t == "0" || (!digits.is_empty()
                    && digits.chars().all(|c| c.is_ascii_digit() || c == '.')), "{text:?}");
            }
            Err(e) => prop_assert!(e.contains(&text) || e.contains("1 ns"), "{e}"),
        }
    }

    #[test]
    fn sizes_scale_by_their_unit(n in 0usize..1 << 20, unit in prop::sample::select(vec![("", 1usize), ("b", 1), ("k", 1024), ("K", 1024), ("KiB", 1024), ("kib", 1024), ("m", 1 << 20), ("M", 1 << 20), ("MiB", 1 << 20), ("g", 1 << 30), ("GiB", 1 << 30)])) {
        prop_assert_eq!(parse_bytes(&format!("{n}{}", unit.0)), Ok(n * unit.1));
    }

    #[test]
    fn decimal_units_are_refused_as_ambiguous(n in 0usize..1 << 20, unit in prop::sample::select(vec!["KB", "kB", "kb", "MB", "mb", "GB", "gb"])) {
        let err = parse_bytes(&format!("{n}{unit}")).unwrap_err();
        prop_assert!(err.contains("ambiguous"), "{err}");
    }

    #[test]
    fn any_text_is_a_size_or_an_error(text in "\\PC{0,12}") {
        let _ = parse_bytes(&text);
        if let Ok(n) = payload::resolve(&text) {
            prop_assert!(n <= payload::MAX_PAYLOAD);
        }
    }

    #[test]
    fn headers_round_trip(h in header()) {
        let mut buf = Vec::new();
        wire::build_message(&mut buf, &h);
        prop_assert_eq!(buf.len(), h.message_len());
        prop_assert_eq!(Header::decode(&buf), Ok(h));
        prop_assert_eq!(Header::decode_header(&buf[..HEADER_LEN]), Ok(h));
        prop_assert!(wire::payload_intact(&buf[HEADER_LEN..], h.seq));
    }

    #[test]
    fn a_changed_byte_is_always_noticed(h in header(), at in any::<prop::sample::Index>(), x in 1u8..=255) {
        let mut buf = Vec::new();
        wire::build_message(&mut buf, &h);
        let i = at.index(buf.len());
        buf[i] ^= x;
        let ok = Header::decode(&buf).is_ok_and(|d| d == h && wire::payload_intact(&buf[HEADER_LEN..], d.seq));
        prop_assert!(!ok, "byte {} ^ {:#x} went unnoticed", i, x);
    }

    #[test]
    fn truncated_or_extended_messages_are_rejected(h in header(), cut in any::<prop::sample::Index>(), extra in 1usize..64) {
        let mut buf = Vec::new();
        wire::build_message(&mut buf, &h);
        let n = cut.index(buf.len());
        prop_assert!(Header::decode(&buf[..n]).is_err());
        buf.resize(buf.len() + extra, 0);
        prop_assert!(Header::decode(&buf).is_err());
    }
}
