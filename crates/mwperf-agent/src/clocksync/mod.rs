//! One-way latency across two clocks: the pub serves NTP-style probes on a small UDP side
//! channel (`--clock-serve`), the sub probes it (`--clock-peer`) before, during (20 Hz, on a
//! thread of its own) and after the stream, fits offset and drift (mwperf_core::clocksync), and
//! moves every receive time onto the pub's clock with the final fit before recording it.
//! The side channel is independent of the transport under test.

pub mod buffer;
pub mod client;
pub mod probe;
pub mod server;

/// What the results call the method.
pub const METHOD: &str = "ntp-on-wire: 4-timestamp UDP probes (burst before, 20 Hz during, burst after); min round trip per 250 ms bin; least-squares offset + drift";
