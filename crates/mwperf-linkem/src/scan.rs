//! Finding mwperf headers inside an IP packet, for `--layer-log`.
//!
//! The emulator sees IP packets, not messages: the mwperf header sits after the IP and transport
//! headers, and after whatever framing the middleware adds (RTPS submessages, zenoh batches, a
//! TCP stream's earlier bytes), and one packet may carry several messages (batching). So the
//! scan looks for the magic `b"MWPF"` anywhere and lets `Header::decode_header` (magic, version,
//! checksum) decide; the checksum makes a false match in payload bytes practically impossible.
//!
//! Cost bound: the whole packet when it is at most [`WHOLE_MAX`] bytes (every packet of an
//! ordinary MTU), else only its first [`PREFIX`] bytes (a header of a large message comes
//! first; scanning 64 KiB packets whole would slow the forwarding thread for nothing). A header
//! cut across two packets (a TCP segment boundary) is not found: that packet is not logged.
//!
//! ICMP packets are skipped: an error (port unreachable, fragmentation needed) quotes the start
//! of the datagram it is about, mwperf header included, travelling the other way; logging it
//! would give a message a second, false passage in the opposite direction.

use mwperf_core::wire::{Header, HEADER_LEN, MAGIC};

/// Packets up to this size are scanned whole.
pub const WHOLE_MAX: usize = 16 * 1024;
/// Of a larger packet, headers starting in this many first bytes are found.
pub const PREFIX: usize = 2 * 1024;

/// IP protocol numbers of ICMP (IPv4) and ICMPv6.
const ICMP: u8 = 1;
const ICMPV6: u8 = 58;

/// True for an ICMP or ICMPv6 packet (IPv6: when ICMPv6 is the first next header, as the
/// kernel sends its errors).
fn is_icmp(packet: &[u8]) -> bool {
    match packet.first().map(|b| b >> 4) {
        Some(4) => packet.get(9) == Some(&ICMP),
        Some(6) => packet.get(6) == Some(&ICMPV6),
        _ => false,
    }
}

/// Call `found` with every valid mwperf header in IP packet `packet`, in order (none in an
/// ICMP packet: module doc).
#[inline]
pub fn for_each_header(packet: &[u8], mut found: impl FnMut(&Header)) {
    if packet.len() < HEADER_LEN || is_icmp(packet) {
        return;
    }
    let span = if packet.len() <= WHOLE_MAX {
        packet.len()
    } else {
        PREFIX
    };
    // a header needs HEADER_LEN bytes: none can start later than this
    let end = span.min(packet.len() - HEADER_LEN + 1);
    let mut at = 0;
    while at < end {
        // the first byte of the magic, found by a plain byte loop (vectorised by the compiler)
        match packet[at..end].iter().position(|&b| b == MAGIC[0]) {
            None => return,
            Some(skip) => at += skip,
        }
        if packet[at..at + 4] == MAGIC {
            if let Ok(header) = Header::decode_header(&packet[at..]) {
                found(&header);
                at += HEADER_LEN;
                continue;
            }
        }
        at += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mwperf_core::wire::FLAG_ECHO;

    fn header(seq: u64) -> Header {
        Header {
            flags: FLAG_ECHO,
            run_id: 7,
            topic: 2,
            seq,
            payload_len: 8,
            ..Header::default()
        }
    }

    fn encoded(seq: u64) -> Vec<u8> {
        let mut buf = vec![0u8; HEADER_LEN + 8];
        header(seq).encode(&mut buf);
        buf
    }

    fn seqs(packet: &[u8]) -> Vec<u64> {
        let mut out = Vec::new();
        for_each_header(packet, |h| out.push(h.seq));
        out
    }

    #[test]
    fn finds_a_header_after_ip_and_udp_headers() {
        let mut packet = vec![0x45u8; 28];
        packet.extend(encoded(41));
        assert_eq!(seqs(&packet), [41]);
        let mut h = None;
        for_each_header(&packet, |found| h = Some(*found));
        assert_eq!(h, Some(header(41)));
    }

    #[test]
    fn finds_every_header_of_a_batch() {
        let mut packet = b"MMWPFxx".to_vec(); // a false start, then two messages back to back
        for seq in [1, 2, 3] {
            packet.extend(encoded(seq));
        }
        assert_eq!(seqs(&packet), [1, 2, 3]);
    }

    #[test]
    fn a_header_quoted_by_icmp_is_not_found() {
        let mut v4 = vec![0u8; 20 + 8 + 28]; // IPv4 + ICMP + the quoted IPv4 + UDP headers
        v4[0] = 0x45;
        v4[9] = ICMP;
        v4.extend(encoded(9));
        assert!(seqs(&v4).is_empty());
        v4[9] = 17; // UDP
        assert_eq!(seqs(&v4), [9]);
        let mut v6 = vec![0u8; 40 + 8 + 48];
        v6[0] = 0x60;
        v6[6] = ICMPV6;
        v6.extend(encoded(9));
        assert!(seqs(&v6).is_empty());
    }

    #[test]
    fn a_damaged_or_cut_header_is_not_found() {
        let mut packet = vec![0u8; 20];
        let mut damaged = encoded(5);
        damaged[20] ^= 1; // in seq: the checksum no longer matches
        packet.extend(&damaged);
        assert!(seqs(&packet).is_empty());
        let whole = encoded(6);
        assert!(seqs(&whole[..HEADER_LEN - 1]).is_empty());
        assert!(seqs(&[]).is_empty());
        assert!(seqs(b"MWPF").is_empty());
    }

    #[test]
    fn large_packets_are_scanned_only_at_the_start() {
        let mut packet = vec![0u8; WHOLE_MAX + 1];
        let early = encoded(1);
        packet[PREFIX - 10..PREFIX - 10 + early.len()].copy_from_slice(&early);
        let late = encoded(2);
        packet[PREFIX + 100..PREFIX + 100 + late.len()].copy_from_slice(&late);
        assert_eq!(seqs(&packet), [1]); // starts in the prefix, ends after it: found
        packet.truncate(WHOLE_MAX); // small enough to be scanned whole
        assert_eq!(seqs(&packet), [1, 2]);
    }
}
