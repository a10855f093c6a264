//! Clock offset and drift between two hosts from NTP's on-wire four-timestamp probes
//! (transport-independent statistics; the agent's UDP side channel is in mwperf-agent).
//!
//! A client (the sub) sends at t1 on its clock, the server (the pub) receives at t2 and answers
//! at t3 on its clock, the client receives at t4. Offset θ = server − client =
//! ((t2 − t1) + (t3 − t4)) / 2, round trip δ = (t4 − t1) − (t3 − t2); whatever the split of δ
//! between the two directions, the true offset lies within θ ± δ/2.

pub mod fit;

pub use fit::{Fit, MinRttBins};

/// One answered probe: t1, t4 on the client's clock, t2, t3 on the server's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Probe {
    pub t1: u64,
    pub t2: u64,
    pub t3: u64,
    pub t4: u64,
}

impl Probe {
    /// θ = server − client, in ns (may be negative).
    pub fn offset_ns(&self) -> i128 {
        ((self.t2 as i128 - self.t1 as i128) + (self.t3 as i128 - self.t4 as i128)) / 2
    }

    /// Round trip minus the server's turnaround, ns (negative only for a forged or broken answer).
    pub fn delay_ns(&self) -> i128 {
        (self.t4 as i128 - self.t1 as i128) - (self.t3 as i128 - self.t2 as i128)
    }

    /// When the probe was taken, on the client's clock (the middle of t1..t4).
    pub fn mid_ns(&self) -> u64 {
        self.t1 / 2 + self.t4 / 2
    }

    /// A probe that could be true: t1 <= t4, t2 <= t3, and a round trip no shorter than the
    /// server's turnaround.
    pub fn plausible(&self) -> bool {
        self.t1 <= self.t4 && self.t2 <= self.t3 && self.delay_ns() >= 0
    }
}
