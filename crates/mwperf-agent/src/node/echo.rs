//! The echo: a message answered as it came, its header stamped with the time the answering
//! callback started (`peer_rx_ns`) and `FLAG_ECHO` set, nothing else changed (no new message
//! built: the payload goes back byte for byte). pong answers so, and a graph node's echo outlet
//! (spec.rs `echo`).

use mwperf_core::wire::{Header, FLAG_ECHO};

/// `h` as its echo: stamped with `callback_ns`, flagged.
pub fn stamped(h: Header, callback_ns: u64) -> Header {
    Header {
        peer_rx_ns: callback_ns,
        flags: h.flags | FLAG_ECHO,
        ..h
    }
}

/// A message this endpoint should answer: one of run `run_id` (any, when None), not itself an
/// echo (two echoing peers would answer each other forever).
pub fn wanted(h: &Header, run_id: Option<u32>) -> bool {
    run_id.is_none_or(|id| id == h.run_id) && h.flags & FLAG_ECHO == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use mwperf_core::wire::{FLAG_PROBE, FLAG_WARMUP};

    #[test]
    fn an_echo_keeps_everything_but_its_stamp_and_flag() {
        let h = Header {
            flags: FLAG_WARMUP,
            run_id: 7,
            topic: 3,
            seq: 9,
            intended_ns: 100,
            sent_ns: 110,
            peer_rx_ns: 2, // a graph node's index
            payload_len: 64,
        };
        let e = stamped(h, 500);
        assert_eq!((e.flags, e.peer_rx_ns), (FLAG_WARMUP | FLAG_ECHO, 500));
        assert_eq!(
            (
                e.run_id,
                e.topic,
                e.seq,
                e.intended_ns,
                e.sent_ns,
                e.payload_len
            ),
            (7, 3, 9, 100, 110, 64)
        );
        assert!(wanted(&h, Some(7)) && wanted(&h, None) && !wanted(&h, Some(8)));
        assert!(!wanted(&e, Some(7))); // never an echo's echo
        let probe = Header {
            flags: FLAG_PROBE,
            ..h
        };
        assert!(wanted(&probe, Some(7))); // first contact is answered
    }
}
