//! A service client's book of its calls, shared by the `client` role and a graph node's
//! clients: the outstanding calls, the first contact's unanswered probes, and what happened to
//! every call besides its latency (timeouts, errors, send errors, unmatched and unchecked
//! replies). Sending and receiving stay with the caller; the book decides what a reply is.

use mwperf_core::result::Calls;
use mwperf_core::wire::{payload_intact, Header, HEADER_LEN};
use mwperf_transports::{CallId, Client, Reply};

use super::outstanding::{Call, Outstanding};
use crate::collector::Collector;

/// How a reply's bytes are checked.
#[derive(Debug, Clone, Copy)]
pub struct ReplyCheck {
    /// Only a reply whose header carries this run is the call's own (None: any run).
    pub run_id: Option<u32>,
    /// The reply payload expected (None: any size).
    pub expected: Option<usize>,
    /// A reply that is not mwperf's at all (a foreign server's) is timed and counted
    /// `unchecked` (true), or counted corrupted (false).
    pub foreign_is_answer: bool,
}

pub struct CallBook {
    pub out: Outstanding,
    /// First-contact probe calls never answered: a late reply to one is no unmatched reply.
    probes: Vec<CallId>,
    pub timeouts: u64,
    pub errors: u64,
    pub send_errors: u64,
    pub unmatched: u64,
    pub unchecked: u64,
}

impl CallBook {
    pub fn new(in_flight: usize, probes: Vec<CallId>) -> Self {
        CallBook {
            out: Outstanding::new(in_flight),
            probes,
            timeouts: 0,
            errors: 0,
            send_errors: 0,
            unmatched: 0,
            unchecked: 0,
        }
    }

    /// A call was handed to the transport (`Ok(id)`) or could not be sent (`Err`).
    pub fn sent(&mut self, call: Call, result: Result<CallId, ()>) {
        match result {
            Ok(id) => {
                // an id the transport gave twice: the older call cannot be told apart any more
                if self
                    .out
                    .add(Call { id, ..call })
                    .is_some_and(|old| !old.warmup)
                {
                    self.unmatched += 1;
                }
            }
            Err(()) if !call.warmup => self.send_errors += 1,
            Err(()) => {}
        }
    }

    /// Give up the calls sent at or before `cut_ns` (all with `u64::MAX`): timeouts.
    pub fn expire(&mut self, cut_ns: u64, c: &mut dyn Client) {
        while let Some(call) = self.out.expire(cut_ns) {
            if !call.warmup {
                self.timeouts += 1;
            }
            c.abandon(call.id);
        }
    }

    /// The reply `reply` with bytes `rx`, taken at `recv_ns`: a measured call's answer goes to
    /// the collector (latency from its intended and its actual call time); anything else is
    /// counted here.
    pub fn reply(
        &mut self,
        col: &mut Collector,
        reply: Reply,
        rx: &[u8],
        recv_ns: u64,
        check: ReplyCheck,
    ) {
        let Some(call) = self.out.take(reply.call) else {
            if let Some(i) = self.probes.iter().position(|id| *id == reply.call) {
                self.probes.swap_remove(i); // a late first-contact probe's
            } else {
                self.unmatched += 1;
            }
            return;
        };
        if call.warmup {
            col.seq.warmup_received += 1;
            return;
        }
        if !reply.ok {
            self.errors += 1;
            return;
        }
        // the server's arrival stamp (its clock) goes into a samples file as peer_rx_ns
        let (payload_len, intact, peer_rx_ns) = match Header::decode(rx) {
            Ok(h) if check.run_id.is_none_or(|r| r == h.run_id) && h.seq == call.seq => (
                h.payload_len,
                payload_intact(&rx[HEADER_LEN..], call.seq)
                    && check.expected.is_none_or(|e| e == h.payload_len as usize),
                h.peer_rx_ns,
            ),
            Err(_) if check.foreign_is_answer => {
                self.unchecked += 1; // a foreign server's reply: timed, not checked
                (rx.len() as u32, true, 0)
            }
            // another call's bytes (or not mwperf's): counted corrupted, not timed
            _ => (rx.len().saturating_sub(HEADER_LEN) as u32, false, 0),
        };
        let h = Header {
            seq: call.seq,
            intended_ns: call.intended_ns,
            sent_ns: call.sent_ns,
            peer_rx_ns,
            payload_len,
            ..Header::default()
        };
        col.arrive_checked(&h, intact, recv_ns);
    }

    /// The measurement's `calls` block of one client (`answered` = the collector's received).
    pub fn calls(
        &self,
        answered: u64,
        call_timeout_ns: u64,
        in_flight: usize,
        c: &dyn Client,
    ) -> Calls {
        Calls {
            clients: 1,
            in_flight: in_flight as u64,
            max_outstanding: self.out.max_seen as u64,
            call_timeout_ns,
            answered,
            timeouts: self.timeouts,
            errors: self.errors,
            send_errors: self.send_errors,
            unmatched: self.unmatched,
            others_replies: c.others_replies(),
            unchecked: self.unchecked,
            connections: c.connections(),
            server: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mwperf_core::wire::build_message;
    use mwperf_transports::TransportError;

    /// A client that only records what it was told to give up.
    #[derive(Default)]
    struct Abandons(Vec<CallId>);

    impl Client for Abandons {
        fn call(&mut self, _: &[u8]) -> Result<CallId, TransportError> {
            unreachable!("the book never calls")
        }
        fn recv_reply(&mut self, _: &mut Vec<u8>, _: u64) -> Result<Option<Reply>, TransportError> {
            unreachable!("the book never receives")
        }
        fn abandon(&mut self, call: CallId) {
            self.0.push(call);
        }
    }

    fn call(seq: u64, sent_ns: u64, warmup: bool) -> Call {
        Call {
            id: 0,
            seq,
            intended_ns: sent_ns,
            sent_ns,
            warmup,
        }
    }

    fn reply_bytes(run_id: u32, seq: u64, payload: u32) -> Vec<u8> {
        let mut b = Vec::new();
        build_message(
            &mut b,
            &Header {
                run_id,
                seq,
                payload_len: payload,
                ..Header::default()
            },
        );
        b
    }

    const CHECK: ReplyCheck = ReplyCheck {
        run_id: Some(7),
        expected: Some(8),
        foreign_is_answer: true,
    };

    fn reply(call: CallId, ok: bool) -> Reply {
        Reply { call, ok }
    }

    #[test]
    fn each_reply_is_an_answer_an_error_a_late_probe_or_unmatched() {
        let mut col = Collector::new(0, 0, None).unwrap();
        let mut book = CallBook::new(4, vec![99]);
        book.sent(call(0, 100, false), Ok(10));
        book.sent(call(1, 100, false), Ok(11));
        book.sent(call(1 << 62, 50, true), Ok(12));
        book.sent(call(2, 100, false), Err(()));
        book.reply(&mut col, reply(10, true), &reply_bytes(7, 0, 8), 300, CHECK);
        book.reply(&mut col, reply(10, true), &reply_bytes(7, 0, 8), 301, CHECK); // again
        book.reply(&mut col, reply(11, false), b"failed", 302, CHECK);
        book.reply(
            &mut col,
            reply(12, true),
            &reply_bytes(7, 1 << 62, 8),
            303,
            CHECK,
        );
        book.reply(&mut col, reply(99, true), &reply_bytes(7, 0, 8), 304, CHECK); // late probe
        assert_eq!((col.seq.received, col.seq.warmup_received), (1, 1));
        assert_eq!(col.service.min(), Some(200)); // from the actual call at 100
        assert_eq!(
            (
                book.errors,
                book.unmatched,
                book.send_errors,
                book.unchecked
            ),
            (1, 1, 1, 0)
        );
        assert!(book.out.is_empty());
    }

    #[test]
    fn foreign_replies_are_timed_unchecked_or_corrupted_as_asked() {
        let mut col = Collector::new(0, 0, None).unwrap();
        let mut book = CallBook::new(4, vec![]);
        book.sent(call(0, 100, false), Ok(1));
        book.sent(call(1, 100, false), Ok(2));
        book.reply(&mut col, reply(1, true), b"not mwperf", 200, CHECK);
        let strict = ReplyCheck {
            foreign_is_answer: false,
            ..CHECK
        };
        book.reply(&mut col, reply(2, true), b"not mwperf", 200, strict);
        assert_eq!(
            (col.seq.received, col.seq.corrupted, book.unchecked),
            (1, 1, 1)
        );
    }

    #[test]
    fn another_runs_or_sizes_reply_is_not_intact() {
        let mut col = Collector::new(0, 0, None).unwrap();
        let mut book = CallBook::new(4, vec![]);
        book.sent(call(0, 100, false), Ok(1));
        book.sent(call(1, 100, false), Ok(2));
        book.reply(&mut col, reply(1, true), &reply_bytes(8, 0, 8), 200, CHECK); // other run
        book.reply(&mut col, reply(2, true), &reply_bytes(7, 1, 9), 200, CHECK); // other size
        assert_eq!((col.seq.received, col.seq.corrupted), (0, 2));
    }

    #[test]
    fn expiry_gives_calls_up_and_counts_measured_ones_as_timeouts() {
        let mut book = CallBook::new(4, vec![]);
        let mut client = Abandons::default();
        book.sent(call(0, 100, false), Ok(1));
        book.sent(call(1 << 62, 100, true), Ok(2));
        book.sent(call(1, 500, false), Ok(3));
        book.expire(200, &mut client);
        assert_eq!(book.timeouts, 1);
        client.0.sort();
        assert_eq!(client.0, vec![1, 2]);
        book.expire(u64::MAX, &mut client);
        assert_eq!((book.timeouts, book.out.is_empty()), (2, true));
        let calls = book.calls(5, 1_000, 4, &client);
        assert_eq!((calls.answered, calls.timeouts, calls.in_flight), (5, 2, 4));
    }
}
