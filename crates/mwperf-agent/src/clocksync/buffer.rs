//! Deferred arrivals: a sub correcting with the *final* fit keeps each measured arrival
//! (header times, receive time, payload check) until the stream ended and the last probes are in,
//! then replays them, in arrival order, into the collector with receive times moved onto the
//! pub's clock. The buffer is a FIFO of at most [`CAPACITY`] arrivals (48 bytes each: 24 MiB);
//! when it is full each new arrival pushes out the oldest, which is corrected with the fit as it
//! stands then (the running fit) — order is kept, the receive path never stalls, and the result
//! says how many samples each fit corrected.

use std::collections::VecDeque;

use mwperf_core::clocksync::Fit;
use mwperf_core::wire::Header;

/// Arrivals kept for the final fit: 524,288 (8.7 minutes at 1 kHz), 24 MiB at most.
pub const CAPACITY: usize = 1 << 19;

/// One measured arrival, as the collector needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Arrival {
    pub seq: u64,
    pub intended_ns: u64,
    pub sent_ns: u64,
    pub peer_rx_ns: u64,
    pub recv_ns: u64,
    pub payload_len: u32,
    pub intact: bool,
}

impl Arrival {
    pub fn new(h: &Header, intact: bool, recv_ns: u64) -> Arrival {
        Arrival {
            seq: h.seq,
            intended_ns: h.intended_ns,
            sent_ns: h.sent_ns,
            peer_rx_ns: h.peer_rx_ns,
            recv_ns,
            payload_len: h.payload_len,
            intact,
        }
    }

    /// The header the collector records (run id and topic were checked on arrival).
    pub fn header(&self) -> Header {
        Header {
            seq: self.seq,
            intended_ns: self.intended_ns,
            sent_ns: self.sent_ns,
            peer_rx_ns: self.peer_rx_ns,
            payload_len: self.payload_len,
            ..Default::default()
        }
    }

    /// Receive − send across the two clocks, uncorrected (may be negative).
    pub fn raw_ns(&self) -> i64 {
        (self.recv_ns as i128 - self.sent_ns as i128) as i64
    }
}

pub struct Deferred {
    q: VecDeque<Arrival>,
    cap: usize,
}

impl Deferred {
    pub fn new(cap: usize) -> Deferred {
        Deferred {
            q: VecDeque::with_capacity(cap.min(4096)),
            cap: cap.max(1),
        }
    }

    /// Keep `a`; when full, hand back the oldest arrival (to be corrected now).
    pub fn push(&mut self, a: Arrival) -> Option<Arrival> {
        let out = (self.q.len() >= self.cap)
            .then(|| self.q.pop_front())
            .flatten();
        self.q.push_back(a);
        out
    }

    /// Median uncorrected latency of the arrivals still kept.
    pub fn raw_p50_ns(&self) -> Option<i64> {
        let mut v: Vec<i64> = self
            .q
            .iter()
            .filter(|a| a.intact)
            .map(Arrival::raw_ns)
            .collect();
        if v.is_empty() {
            return None;
        }
        let mid = (v.len() - 1) / 2;
        Some(*v.select_nth_unstable(mid).1)
    }

    /// Everything kept, oldest first.
    pub fn drain(&mut self) -> impl Iterator<Item = Arrival> + '_ {
        self.q.drain(..)
    }
}

/// How the samples were corrected (the result's clock_sync counts).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Correction {
    pub final_fit: u64,
    pub running_fit: u64,
    pub uncorrected: u64,
    pub negative: u64,
}

impl Correction {
    /// `a` with its receive time on the pub's clock (`fit` None: unchanged, counted as
    /// uncorrected). A latency still negative after correction is recorded as 0 and counted:
    /// the histograms never see a negative or wrapped value.
    pub fn apply(&mut self, mut a: Arrival, fit: Option<&Fit>, is_final: bool) -> Arrival {
        match (fit, is_final) {
            (None, _) => self.uncorrected += 1,
            (Some(_), true) => self.final_fit += 1,
            (Some(_), false) => self.running_fit += 1,
        }
        let recv = fit.map_or(a.recv_ns as i128, |f| f.to_server(a.recv_ns));
        if recv < a.sent_ns as i128 {
            self.negative += 1;
            a.recv_ns = a.sent_ns;
        } else {
            a.recv_ns = recv.min(u64::MAX as i128) as u64;
        }
        a
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arrival(seq: u64, sent: u64, recv: u64) -> Arrival {
        Arrival {
            seq,
            intended_ns: sent,
            sent_ns: sent,
            peer_rx_ns: 0,
            recv_ns: recv,
            payload_len: 8,
            intact: true,
        }
    }

    #[test]
    fn fifo_hands_back_the_oldest_when_full() {
        let mut d = Deferred::new(2);
        assert_eq!(d.push(arrival(0, 0, 10)), None);
        assert_eq!(d.push(arrival(1, 0, 20)), None);
        assert_eq!(d.push(arrival(2, 0, 30)).map(|a| a.seq), Some(0));
        assert_eq!(d.raw_p50_ns(), Some(20));
        assert_eq!(d.drain().map(|a| a.seq).collect::<Vec<_>>(), vec![1, 2]);
    }

    #[test]
    fn correction_moves_receive_times_and_never_goes_negative() {
        // the pub's clock is 1 s ahead of the sub's: raw latencies are about −1 s
        let fit = Fit {
            t0_ns: 0,
            offset0_ns: 1e9,
            drift: 0.0,
            used: 2,
            min_rtt_ns: 0,
            residual_max_ns: 0.0,
            span_ns: 0,
            bound_ns: 0.0,
        };
        let mut c = Correction::default();
        let a = c.apply(arrival(0, 1_000_050_000, 50_000 + 30_000), Some(&fit), true);
        assert_eq!(a.recv_ns - a.sent_ns, 30_000);
        let b = c.apply(arrival(1, 2_000_000_000, 10), Some(&fit), false); // still before its send
        assert_eq!(b.recv_ns, b.sent_ns);
        let u = c.apply(arrival(2, 5, 10), None, true);
        assert_eq!(u.recv_ns, 10);
        assert_eq!(
            c,
            Correction {
                final_fit: 1,
                running_fit: 1,
                uncorrected: 1,
                negative: 1
            }
        );
    }
}
