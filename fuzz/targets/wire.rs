//! The mwperf message header and the payload pattern check (mwperf-core wire), as every receiver
//! runs them on whatever a transport delivers.
//!
//! Invariants: a header that decodes re-encodes to the same 56 bytes (reserved bytes aside) and
//! announces exactly the buffer's length; any header built from the input round-trips; a payload
//! filled for a seq is intact for it, and a flipped byte is caught.
use mwperf_core::wire::{self, Header, Reject, HEADER_LEN};

fn main() {
    afl::fuzz!(|data: &[u8]| {
        match Header::decode(data) {
            Ok(h) => {
                assert_eq!(h.message_len(), data.len());
                let mut again = [0u8; HEADER_LEN];
                h.encode(&mut again);
                assert_eq!(again[..14], data[..14]);
                assert_eq!(again[16..], data[16..HEADER_LEN]);
                let _ = wire::payload_intact(&data[HEADER_LEN..], h.seq);
            }
            Err(Reject::Truncated { have, want }) => assert!(have < want && have == data.len()),
            Err(Reject::Oversized { have, want }) => assert!(have > want && have == data.len()),
            Err(_) => {}
        }
        if let Ok(h) = Header::decode_header(data) {
            assert!(data.len() >= HEADER_LEN);
            assert_eq!(Header::decode_header(&data[..HEADER_LEN]), Ok(h));
        }
        // a header made of the input's bytes, with a small payload: encode/decode round trip
        if data.len() >= 47 {
            let u64_at = |o: usize| u64::from_le_bytes(data[o..o + 8].try_into().unwrap());
            let h = Header {
                flags: data[0],
                run_id: u32::from_le_bytes(data[1..5].try_into().unwrap()),
                topic: u16::from_le_bytes([data[5], data[6]]),
                seq: u64_at(7),
                intended_ns: u64_at(15),
                sent_ns: u64_at(23),
                peer_rx_ns: u64_at(31),
                payload_len: u32::from_le_bytes(data[39..43].try_into().unwrap()) % 4096,
            };
            let mut buf = Vec::new();
            wire::build_message(&mut buf, &h);
            assert_eq!(Header::decode(&buf), Ok(h));
            assert!(wire::payload_intact(&buf[HEADER_LEN..], h.seq));
            let every = u64::from(data[43] % 8) + 1;
            let mut sampled = buf[HEADER_LEN..].to_vec();
            wire::fill_payload_sampled(&mut sampled, h.seq, every);
            assert!(wire::payload_intact_sampled(&sampled, h.seq, every));
            if h.payload_len > 0 {
                let at = u16::from_le_bytes([data[44], data[45]]) as usize % buf.len();
                buf[at] ^= data[46] | 1;
                let ok = Header::decode(&buf)
                    .is_ok_and(|d| d == h && wire::payload_intact(&buf[HEADER_LEN..], d.seq));
                assert!(!ok, "a changed byte at {at} went unnoticed");
            }
        }
    });
}
