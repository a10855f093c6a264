//! Streaming, constant-memory statistics. Each collector is fed one value at a time on the
//! measuring path and summarised once at the end into the result document's types.

pub mod accounting;
pub mod jitter;
pub mod latency;
pub mod outage;
pub mod pool;
pub mod series;

pub use accounting::SeqTracker;
pub use jitter::Rfc3550Jitter;
pub use latency::LatencyRecorder;
pub use outage::OutageWatch;
pub use series::SecondSeries;
