//! The mwperf wire header, carried at the start of every message, and the payload pattern after it.
//!
//! Layout (little-endian, [`HEADER_LEN`] = 56 bytes):
//!
//! | off | size | field | meaning |
//! |----:|-----:|-------|---------|
//! | 0   | 4 | magic | `b"MWPF"` |
//! | 4   | 1 | version | [`VERSION`] |
//! | 5   | 1 | flags | [`FLAG_WARMUP`], [`FLAG_FIN`], [`FLAG_ECHO`], [`FLAG_PROBE`] |
//! | 6   | 2 | header_len | 56 |
//! | 8   | 4 | run_id | tags one run; other ids are foreign |
//! | 12  | 2 | topic | topic index (0 for single-topic runs) |
//! | 14  | 2 | reserved | 0 |
//! | 16  | 8 | seq | per-topic sequence number from 0 (FIN: the sent count) |
//! | 24  | 8 | intended_ns | when the schedule wanted it sent (sender's CLOCK_MONOTONIC) |
//! | 32  | 8 | sent_ns | when it was actually handed to the transport |
//! | 40  | 8 | peer_rx_ns | stamped by an echo (pong) on receipt, else 0 |
//! | 48  | 4 | payload_len | bytes after the header |
//! | 52  | 4 | checksum | word-wise checksum over bytes 0..52 (see `checksum`) |
//!
//! The payload is a pattern derived from `seq`, so a flipped bit anywhere is detected by
//! [`payload_intact`]. An echo may rewrite `peer_rx_ns`/`flags` and must then call
//! [`Header::encode`] again, which refreshes the checksum.

pub const MAGIC: [u8; 4] = *b"MWPF";
pub const VERSION: u8 = 1;
pub const HEADER_LEN: usize = 56;

pub const FLAG_WARMUP: u8 = 1 << 0;
pub const FLAG_FIN: u8 = 1 << 1;
pub const FLAG_ECHO: u8 = 1 << 2;
/// A ping's first-contact probe (sent until the first echo arrives; never in the statistics).
pub const FLAG_PROBE: u8 = 1 << 3;
/// The payload is a recording's bytes (`--replay-trace`), not the pattern: not checked.
pub const FLAG_RECORDED: u8 = 1 << 4;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Header {
    pub flags: u8,
    pub run_id: u32,
    pub topic: u16,
    pub seq: u64,
    pub intended_ns: u64,
    pub sent_ns: u64,
    pub peer_rx_ns: u64,
    pub payload_len: u32,
}

/// Why a received buffer is not a usable mwperf message. Never fatal: receivers count these.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reject {
    /// Not ours at all: too short to hold a magic, or another magic.
    Foreign,
    /// Our magic, but a version this build does not speak.
    BadVersion(u8),
    /// Our magic, but the header checksum does not match (bit errors in the header).
    BadChecksum,
    /// Fewer bytes than the header announces.
    Truncated { have: usize, want: usize },
    /// More bytes than the header announces.
    Oversized { have: usize, want: usize },
}

impl Reject {
    /// Foreign packets are somebody else's; the others are ours but damaged.
    pub fn is_foreign(&self) -> bool {
        matches!(self, Reject::Foreign)
    }
}

/// Header checksum over bytes 0..52: a multiply-xor chain over 8-byte words (each step is a
/// bijection, so any change confined to one word always changes the 64-bit state), folded to 32 bits.
/// Word-wise because it runs twice per message on each side of the measured path.
fn checksum(bytes: &[u8]) -> u32 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        h = (h ^ u64::from_le_bytes(c.try_into().unwrap()))
            .wrapping_mul(0x0000_0100_0000_01b3)
            .rotate_left(29);
    }
    let mut tail = [0u8; 8];
    tail[..chunks.remainder().len()].copy_from_slice(chunks.remainder());
    h = (h ^ u64::from_le_bytes(tail)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (h ^ (h >> 32)) as u32
}

impl Header {
    /// Total message length this header announces.
    pub fn message_len(&self) -> usize {
        HEADER_LEN + self.payload_len as usize
    }

    /// Write the header into the first [`HEADER_LEN`] bytes of `buf` (panics if shorter).
    pub fn encode(&self, buf: &mut [u8]) {
        let b = &mut buf[..HEADER_LEN];
        b[0..4].copy_from_slice(&MAGIC);
        b[4] = VERSION;
        b[5] = self.flags;
        b[6..8].copy_from_slice(&(HEADER_LEN as u16).to_le_bytes());
        b[8..12].copy_from_slice(&self.run_id.to_le_bytes());
        b[12..14].copy_from_slice(&self.topic.to_le_bytes());
        b[14..16].copy_from_slice(&0u16.to_le_bytes());
        b[16..24].copy_from_slice(&self.seq.to_le_bytes());
        b[24..32].copy_from_slice(&self.intended_ns.to_le_bytes());
        b[32..40].copy_from_slice(&self.sent_ns.to_le_bytes());
        b[40..48].copy_from_slice(&self.peer_rx_ns.to_le_bytes());
        b[48..52].copy_from_slice(&self.payload_len.to_le_bytes());
        let sum = checksum(&b[0..52]);
        b[52..56].copy_from_slice(&sum.to_le_bytes());
    }

    /// Parse and check the header only (magic, version, checksum); no length check.
    /// Stream transports use this to learn how many bytes follow.
    pub fn decode_header(buf: &[u8]) -> Result<Header, Reject> {
        if buf.len() < 4 || buf[0..4] != MAGIC {
            return Err(Reject::Foreign);
        }
        if buf.len() < HEADER_LEN {
            return Err(Reject::Truncated {
                have: buf.len(),
                want: HEADER_LEN,
            });
        }
        if buf[4] != VERSION {
            return Err(Reject::BadVersion(buf[4]));
        }
        let want_sum = u32::from_le_bytes(buf[52..56].try_into().unwrap());
        if checksum(&buf[0..52]) != want_sum
            || u16::from_le_bytes([buf[6], buf[7]]) as usize != HEADER_LEN
        {
            return Err(Reject::BadChecksum);
        }
        let u64_at = |o: usize| u64::from_le_bytes(buf[o..o + 8].try_into().unwrap());
        Ok(Header {
            flags: buf[5],
            run_id: u32::from_le_bytes(buf[8..12].try_into().unwrap()),
            topic: u16::from_le_bytes([buf[12], buf[13]]),
            seq: u64_at(16),
            intended_ns: u64_at(24),
            sent_ns: u64_at(32),
            peer_rx_ns: u64_at(40),
            payload_len: u32::from_le_bytes(buf[48..52].try_into().unwrap()),
        })
    }

    /// Parse a whole message: header checks plus `buf.len()` == announced length.
    pub fn decode(buf: &[u8]) -> Result<Header, Reject> {
        let h = Self::decode_header(buf)?;
        let want = h.message_len();
        if buf.len() < want {
            return Err(Reject::Truncated {
                have: buf.len(),
                want,
            });
        }
        if buf.len() > want {
            return Err(Reject::Oversized {
                have: buf.len(),
                want,
            });
        }
        Ok(h)
    }
}

/// The pattern's word `k` of message `seq` is `seq_part(seq) ^ k * PATTERN_K` (mod 2^64; the
/// Python side, mwperf.ros2.wire.Pattern, computes the same).
const PATTERN_K: u64 = 0xD6E8_FEB8_6659_FD93;

#[inline]
fn seq_part(seq: u64) -> u64 {
    (seq ^ 0x6d77_7065_7266_0001).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

#[inline]
fn pattern_word(seq: u64, k: u64) -> u64 {
    seq_part(seq) ^ k.wrapping_mul(PATTERN_K)
}

/// Fill `payload` with the pattern of `seq`. The word index's part grows by one addition per
/// word and nothing branches, so the loop vectorizes (a 64 KiB throughput stream's fill and
/// check were 65 % of both agents' CPU with a multiplication and an early exit per word:
/// issue 41's profile).
pub fn fill_payload(payload: &mut [u8], seq: u64) {
    let s = seq_part(seq);
    let mut chunks = payload.chunks_exact_mut(8);
    let mut t = 0u64;
    for c in &mut chunks {
        c.copy_from_slice(&(s ^ t).to_le_bytes());
        t = t.wrapping_add(PATTERN_K);
    }
    let rest = chunks.into_remainder();
    let w = (s ^ t).to_le_bytes();
    let n = rest.len();
    rest.copy_from_slice(&w[..n]);
}

/// True when `payload` holds exactly the pattern of `seq` (every word compared, the
/// differences OR-ed: no exit per word, so it vectorizes; a corrupted payload is the rare case).
pub fn payload_intact(payload: &[u8], seq: u64) -> bool {
    let s = seq_part(seq);
    let mut chunks = payload.chunks_exact(8);
    let (mut t, mut diff) = (0u64, 0u64);
    for c in &mut chunks {
        diff |= u64::from_le_bytes(c.try_into().unwrap()) ^ s ^ t;
        t = t.wrapping_add(PATTERN_K);
    }
    let rest = chunks.remainder();
    let w = (s ^ t).to_le_bytes();
    diff == 0 && rest == &w[..rest.len()]
}

/// Payload bytes per full check at throughput: a message of this size or less is checked in
/// full every time; a larger one every `check_every` messages. 4 KiB: at 64 KiB the full fill
/// and check of every message held an iceoryx2 stream to half of what it carried with them
/// every 16th (issue 41, BENCHMARKS.md "Throughput": the receiver read each payload across
/// the cores where iox2_thr reads none).
pub const CHECK_SPAN: usize = 4 * 1024;

/// A throughput stream's sampling of the payload pattern (`--throughput`, docs/throughput.md):
/// every Nth message (seq % N == 0) carries and is checked for its full pattern, the others
/// only at both ends (the first and last 8 bytes), so filling and checking cost about as much as
/// one 64 KiB payload per message whatever the size. Both sides derive N from the size alone.
pub fn check_every(payload_len: usize) -> u64 {
    payload_len.div_ceil(CHECK_SPAN).max(1) as u64
}

/// The byte ranges a sampled message carries its pattern in: the first and last 8 bytes.
fn ends(len: usize) -> [std::ops::Range<usize>; 2] {
    let head = 0..len.min(8);
    let tail_start = len.saturating_sub(8).max(head.end);
    [head, tail_start..len]
}

/// Fill the pattern of `seq` where a sampled check reads it: all of it when `seq % every == 0`,
/// else only both ends (the bytes between keep what they held).
pub fn fill_payload_sampled(payload: &mut [u8], seq: u64, every: u64) {
    if every <= 1 || seq.is_multiple_of(every) {
        return fill_payload(payload, seq);
    }
    for r in ends(payload.len()) {
        let start = r.start;
        fill_from(&mut payload[r], seq, start);
    }
}

/// [`payload_intact`] for a sampled stream (see [`fill_payload_sampled`]).
pub fn payload_intact_sampled(payload: &[u8], seq: u64, every: u64) -> bool {
    if every <= 1 || seq.is_multiple_of(every) {
        return payload_intact(payload, seq);
    }
    let mut want = [0u8; 8];
    ends(payload.len()).into_iter().all(|r| {
        let w = &mut want[..r.len()];
        fill_from(w, seq, r.start);
        payload[r] == *w
    })
}

/// Write into `out` the pattern of `seq` as it stands in a payload from byte `start` on.
fn fill_from(out: &mut [u8], seq: u64, start: usize) {
    for (i, b) in out.iter_mut().enumerate() {
        let pos = start + i;
        *b = pattern_word(seq, (pos / 8) as u64).to_le_bytes()[pos % 8];
    }
}

/// Build a complete message (header + pattern payload) into `buf`, resizing it.
pub fn build_message(buf: &mut Vec<u8>, h: &Header) {
    buf.resize(h.message_len(), 0);
    fill_payload(&mut buf[HEADER_LEN..], h.seq);
    h.encode(buf);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pattern_is_word_k_of_seq_and_any_changed_byte_fails_the_check() {
        for len in [0usize, 1, 7, 8, 9, 63, 64, 1000, 65_536 + 5] {
            let mut p = vec![0u8; len];
            fill_payload(&mut p, 77);
            for (k, c) in p.chunks(8).enumerate() {
                let w = pattern_word(77, k as u64).to_le_bytes();
                assert_eq!(c, &w[..c.len()], "len {len} word {k}");
            }
            assert!(payload_intact(&p, 77));
            if len > 0 {
                assert!(!payload_intact(&p, 78));
                for at in [0, len / 2, len - 1] {
                    let mut bad = p.clone();
                    bad[at] ^= 0x10;
                    assert!(!payload_intact(&bad, 77), "len {len} byte {at}");
                }
            }
        }
    }

    #[test]
    fn sampled_pattern_checks_every_nth_in_full_and_the_rest_at_both_ends() {
        assert_eq!(check_every(64), 1);
        assert_eq!(check_every(CHECK_SPAN), 1);
        assert_eq!(check_every(CHECK_SPAN + 1), 2);
        assert_eq!(check_every(64 << 10), 16);
        assert_eq!(check_every(1 << 20), 256);
        for len in [0usize, 3, 8, 13, 16, 1000, 1 << 20] {
            let every = check_every(len).max(4);
            let mut p = vec![0u8; len];
            for seq in 0..(2 * every) {
                fill_payload_sampled(&mut p, seq, every);
                assert!(
                    payload_intact_sampled(&p, seq, every),
                    "len {len} seq {seq}"
                );
                // a full check of a sampled (not full) message fails where the middle is stale
                if seq % every != 0 && len > 16 {
                    assert!(!payload_intact(&p, seq), "len {len} seq {seq}");
                }
                if len > 0 {
                    let mut bad = p.clone();
                    bad[len - 1] ^= 1;
                    assert!(!payload_intact_sampled(&bad, seq, every));
                    let mut bad = p.clone();
                    bad[0] ^= 0x80;
                    assert!(!payload_intact_sampled(&bad, seq, every));
                }
            }
        }
        // a full message is intact under the sampled check too
        let mut p = vec![0u8; 100];
        fill_payload(&mut p, 5);
        assert!(payload_intact_sampled(&p, 5, 4));
    }

    fn sample() -> Header {
        Header {
            flags: FLAG_WARMUP,
            run_id: 7,
            topic: 2,
            seq: 42,
            intended_ns: 1,
            sent_ns: 2,
            peer_rx_ns: 3,
            payload_len: 13,
        }
    }

    #[test]
    fn roundtrip_header_and_payload() {
        let mut buf = Vec::new();
        build_message(&mut buf, &sample());
        assert_eq!(buf.len(), HEADER_LEN + 13);
        assert_eq!(Header::decode(&buf), Ok(sample()));
        assert!(payload_intact(&buf[HEADER_LEN..], 42));
        assert!(!payload_intact(&buf[HEADER_LEN..], 43));
    }

    #[test]
    fn every_single_bit_flip_is_detected() {
        let mut buf = Vec::new();
        build_message(&mut buf, &sample());
        for bit in 0..buf.len() * 8 {
            let mut b = buf.clone();
            b[bit / 8] ^= 1 << (bit % 8);
            let ok = match Header::decode(&b) {
                Ok(h) => h == sample() && payload_intact(&b[HEADER_LEN..], h.seq),
                Err(_) => false,
            };
            assert!(!ok, "flip of bit {bit} went unnoticed");
        }
    }

    #[test]
    fn rejects_are_classified() {
        let mut buf = Vec::new();
        build_message(&mut buf, &sample());
        assert_eq!(Header::decode(b"hello world"), Err(Reject::Foreign));
        assert_eq!(Header::decode(&[]), Err(Reject::Foreign));
        assert_eq!(
            Header::decode(&buf[..20]),
            Err(Reject::Truncated {
                have: 20,
                want: HEADER_LEN
            })
        );
        assert_eq!(
            Header::decode(&buf[..60]),
            Err(Reject::Truncated { have: 60, want: 69 })
        );
        let mut big = buf.clone();
        big.push(0);
        assert_eq!(
            Header::decode(&big),
            Err(Reject::Oversized { have: 70, want: 69 })
        );
        let mut v = buf.clone();
        v[4] = 9;
        assert_eq!(Header::decode(&v), Err(Reject::BadVersion(9)));
        let mut c = buf.clone();
        c[20] ^= 0xff;
        assert_eq!(Header::decode(&c), Err(Reject::BadChecksum));
    }

    #[test]
    fn empty_payload_is_fine() {
        let mut h = sample();
        h.payload_len = 0;
        let mut buf = Vec::new();
        build_message(&mut buf, &h);
        assert_eq!(Header::decode(&buf).unwrap().payload_len, 0);
        assert!(payload_intact(&[], 5));
    }
}
