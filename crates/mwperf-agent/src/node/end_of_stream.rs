//! The end-of-stream marker: after its last message a publisher sends a header-only message
//! flagged `FLAG_FIN`, three times 1 ms apart (a datagram may be lost), carrying what it sent:
//! `seq` = measured messages, `intended_ns` = warm-up messages, and `peer_rx_ns` = the period
//! (pub's, 0 at rate 0) or the publishing node's index (a graph node's, as its messages carry
//! it). A subscriber that knows how many publishers to expect ends when every one's marker came,
//! not after a fixed linger. pub sends it, a graph node's publisher with `end_marker`.

use mwperf_core::clock::{now_ns, sleep_until_ns};
use mwperf_core::wire::{Header, FLAG_FIN, HEADER_LEN};

/// The marker of topic `topic` of run `run_id`: `measured` and `warmup` messages were sent;
/// `tail` rides in `peer_rx_ns` (see the module doc).
pub fn marker(run_id: u32, topic: u16, measured: u64, warmup: u64, tail: u64) -> Header {
    Header {
        flags: FLAG_FIN,
        run_id,
        topic,
        seq: measured,
        intended_ns: warmup,
        peer_rx_ns: tail,
        ..Default::default()
    }
}

/// Send `h` with `send` three times, each followed by 1 ms.
pub fn send_marker(h: &Header, mut send: impl FnMut(&[u8])) {
    let mut buf = vec![0u8; HEADER_LEN];
    h.encode(&mut buf);
    for _ in 0..3 {
        send(&buf);
        sleep_until_ns(now_ns() + 1_000_000);
    }
}

/// The publishers whose markers a subscription has seen, by their node's index.
#[derive(Debug, Default)]
pub struct Markers {
    expected: u32,
    seen: std::collections::BTreeSet<u64>,
}

impl Markers {
    /// Expect `expected` publishers' markers (0: none: the subscription ends with its window).
    pub fn new(expected: u32) -> Self {
        Markers {
            expected,
            seen: Default::default(),
        }
    }

    /// Marker `h` arrived (a repeat of one already seen changes nothing).
    pub fn arrived(&mut self, h: &Header) {
        self.seen.insert(h.peer_rx_ns);
    }

    /// How many publishers' markers arrived.
    pub fn count(&self) -> u32 {
        self.seen.len() as u32
    }

    /// Every expected publisher ended its stream.
    pub fn all_in(&self) -> bool {
        self.expected > 0 && self.count() >= self.expected
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_marker_is_sent_three_times_and_counted_once_per_publisher() {
        let h = marker(7, 2, 100, 10, 3);
        let mut sent = Vec::new();
        let start = now_ns();
        send_marker(&h, |b| sent.push(Header::decode(b).unwrap()));
        assert!(now_ns() - start >= 3_000_000); // each followed by 1 ms
        assert_eq!(sent.len(), 3);
        assert!(sent
            .iter()
            .all(|s| (s.flags, s.seq, s.intended_ns, s.peer_rx_ns) == (FLAG_FIN, 100, 10, 3)));
        let mut m = Markers::new(2);
        for s in &sent {
            m.arrived(s);
        }
        assert_eq!((m.count(), m.all_in()), (1, false)); // one publisher, three copies
        m.arrived(&marker(7, 2, 5, 0, 4));
        assert!(m.all_in());
        assert!(!Markers::new(0).all_in()); // nothing expected: the window ends it
    }
}
