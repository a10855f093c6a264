//! Waiting until discovery matched a DDS endpoint's peers, shared by the DDS transports that
//! poll their matched statuses (cyclonedds, fastdds): every millisecond, until the writer has a
//! reader and the reader a writer, or the timeout, then an error naming what is missing.

use mwperf_core::clock::now_ns;

use crate::TransportError;

/// How often the matched statuses are read.
pub const MATCH_POLL_NS: u64 = 1_000_000;

/// What one poll found: (readers matched to our writer, writers matched to our reader); `None`
/// where this side has no writer or no reader.
pub type Matched = (Option<u32>, Option<u32>);

/// Poll `matched` until both counts are non-zero (or absent); the topics name what is missing.
pub fn wait_matched(
    transport: &'static str,
    domain: u32,
    out_topic: Option<&str>,
    in_topic: Option<&str>,
    timeout_ns: u64,
    mut matched: impl FnMut() -> Result<Matched, TransportError>,
) -> Result<(), TransportError> {
    let start = now_ns();
    let end = start.saturating_add(timeout_ns);
    loop {
        let (readers, writers) = matched()?;
        if readers != Some(0) && writers != Some(0) {
            return Ok(());
        }
        let now = now_ns();
        if now >= end {
            let mut missing = Vec::new();
            if let (Some(0), Some(name)) = (readers, out_topic) {
                missing.push(format!("no reader on {name}"));
            }
            if let (Some(0), Some(name)) = (writers, in_topic) {
                missing.push(format!("no writer on {name}"));
            }
            return Err(TransportError::NotMatched {
                transport,
                waited_ns: now - start,
                detail: format!("domain {domain}: {}", missing.join(", ")),
            });
        }
        std::thread::sleep(std::time::Duration::from_nanos(
            (end - now).min(MATCH_POLL_NS),
        ));
    }
}
