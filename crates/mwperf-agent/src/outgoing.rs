//! Building and sending one scheduled message (ping and pub share it): the payload pattern is
//! written first, then the send timestamp is taken and the header encoded, so the time between
//! `sent_ns` and the transport call is only the header encoding.

use mwperf_core::clock::now_ns;
use mwperf_core::wire::{fill_payload_sampled, Header, FLAG_RECORDED, FLAG_WARMUP, HEADER_LEN};
use mwperf_transports::{Endpoint, TransportError};

use crate::pacer::Slot;

pub struct Outgoing {
    tx: Vec<u8>,
    run_id: u32,
    topic: u16,
    /// TEST ONLY (`--test-allocs-per-msg`): heap blocks allocated and freed per message.
    test_allocs: u32,
    /// The next message's payload was loaded from a recording (`load`): no pattern fill.
    loaded: bool,
    /// Every Nth message carries its full pattern, the others only both ends (`sampled`).
    full_every: u64,
    /// TEST ONLY (`--test-send-delay`): spin this long before the write call.
    test_delay_ns: u64,
}

impl Outgoing {
    /// Messages of `run_id` on topic index `topic` (0 with one topic).
    pub fn new(run_id: u32, topic: u16, payload: usize) -> Self {
        Outgoing {
            tx: vec![0; HEADER_LEN + payload],
            run_id,
            topic,
            test_allocs: 0,
            loaded: false,
            full_every: 1,
            test_delay_ns: 0,
        }
    }

    /// A throughput stream: the full pattern every `wire::check_every(payload)` messages only,
    /// as the sub checks it (mwperf_core::wire::fill_payload_sampled).
    pub fn sampled(self, on: bool) -> Self {
        let every = if on {
            mwperf_core::wire::check_every(self.tx.len() - HEADER_LEN)
        } else {
            1
        };
        Outgoing {
            full_every: every,
            ..self
        }
    }

    /// TEST ONLY (`--test-allocs-per-msg N`): allocate and free N heap blocks per message sent.
    pub fn test_allocs(self, n: Option<u32>) -> Self {
        Outgoing {
            test_allocs: n.unwrap_or(0),
            ..self
        }
    }

    /// TEST ONLY (`--test-send-delay`): a slow application between the schedule and the write.
    pub fn test_delay(self, ns: Option<u64>) -> Self {
        Outgoing {
            test_delay_ns: ns.unwrap_or(0),
            ..self
        }
    }

    pub fn run_id(&self) -> u32 {
        self.run_id
    }

    pub fn topic(&self) -> u16 {
        self.topic
    }

    /// Make the next message a recorded one: its bytes, with the header written over the first
    /// 56 (the size on the wire stays the recorded size; shorter ones are padded to 56).
    pub fn load(&mut self, recorded: &[u8]) {
        self.tx.clear();
        self.tx.extend_from_slice(recorded);
        if self.tx.len() < HEADER_LEN {
            self.tx.resize(HEADER_LEN, 0);
        }
        self.loaded = true;
    }

    /// Send the message for `slot`; returns its actual send time and the transport's verdict.
    pub fn send(
        &mut self,
        ep: &mut dyn Endpoint,
        slot: &Slot,
    ) -> (u64, Result<(), TransportError>) {
        if self.test_allocs > 0 {
            crate::allocs::mwperf_alloc_sites_test_pattern(self.test_allocs);
        }
        if self.test_delay_ns > 0 {
            crate::busy::spin_for(self.test_delay_ns);
        }
        let recorded = std::mem::take(&mut self.loaded);
        if !recorded {
            fill_payload_sampled(&mut self.tx[HEADER_LEN..], slot.seq, self.full_every);
        }
        let sent_ns = now_ns();
        Header {
            flags: (if slot.warmup { FLAG_WARMUP } else { 0 })
                | (if recorded { FLAG_RECORDED } else { 0 }),
            run_id: self.run_id,
            topic: self.topic,
            seq: slot.seq,
            intended_ns: slot.intended_ns,
            sent_ns,
            payload_len: (self.tx.len() - HEADER_LEN) as u32,
            ..Default::default()
        }
        .encode(&mut self.tx);
        (sent_ns, ep.send(&self.tx))
    }
}
