//! First contact, before a sender's schedule starts: wait until discovery matched the peer, then
//! (ping) send probes until one comes back. Both times are reported separately from the steady
//! state (`discovery` in the report), as seed 004 asks for "time to connect".
//!
//! Probes carry FLAG_PROBE and a full-size payload; the pong echoes them like any message, a
//! foreign relay forwards them untouched, and every receiver leaves them out of its statistics.

use mwperf_core::clock::now_ns;
use mwperf_core::result::Discovery;
use mwperf_core::units::format_ns;
use mwperf_core::wire::{build_message, Header, FLAG_PROBE};
use mwperf_transports::{Endpoint, TransportError};

use crate::signals;

/// How long one probe waits for its echo before the next goes out.
const PROBE_INTERVAL_NS: u64 = 10_000_000;

/// How often a pub checks whether all its subscribers have been matched.
const SUBSCRIBER_POLL_NS: u64 = 1_000_000;

/// Wait for discovery; Ok = nanoseconds it took.
pub fn matched(ep: &mut dyn Endpoint, timeout_ns: u64) -> Result<u64, TransportError> {
    let t0 = now_ns();
    ep.wait_matched(timeout_ns)?;
    Ok(now_ns() - t0)
}

/// Wait for discovery, then (a pub with `--subscribers N`) until the middleware has matched N
/// subscribers, all within `timeout_ns`; Ok = nanoseconds it took. A middleware that cannot
/// count its subscribers (zenoh, mqtt) returns after the first match: the control plane starts
/// the pub only once every subscriber printed READY, i.e. had subscribed.
pub fn matched_all(
    ep: &mut dyn Endpoint,
    timeout_ns: u64,
    subscribers: u32,
    transport: &'static str,
) -> Result<u64, TransportError> {
    let t0 = now_ns();
    ep.wait_matched(timeout_ns)?;
    let end = t0.saturating_add(timeout_ns);
    loop {
        let seen = match ep.matched_subscribers() {
            Some(n) if n < u64::from(subscribers) => n,
            _ => return Ok(now_ns() - t0),
        };
        let now = now_ns();
        if now >= end || signals::stopped() {
            let detail = format!("{seen} of --subscribers {subscribers} matched");
            return Err(TransportError::NotMatched {
                transport,
                waited_ns: now - t0,
                detail,
            });
        }
        mwperf_core::clock::sleep_until_ns((now + SUBSCRIBER_POLL_NS).min(end));
    }
}

/// Send probes until one is echoed, for at most `bound_ns`; Err = a reason to fail the run.
pub fn probe(
    ep: &mut dyn Endpoint,
    peer: &str,
    run_id: u32,
    payload: usize,
    bound_ns: u64,
    busy_poll: bool,
    matched_ns: u64,
) -> Result<Discovery, String> {
    let mut tx = Vec::new();
    let mut rx = Vec::new();
    let first = now_ns();
    let end = first + bound_ns;
    let mut probes = 0u64;
    while now_ns() < end {
        if signals::stopped() {
            return Err("interrupted by signal before the first reply".into());
        }
        build_message(
            &mut tx,
            &Header {
                flags: FLAG_PROBE,
                run_id,
                seq: probes,
                sent_ns: now_ns(),
                payload_len: payload as u32,
                ..Default::default()
            },
        );
        match ep.send(&tx) {
            Ok(()) | Err(TransportError::Unreachable { .. }) => {}
            Err(TransportError::Closed) => {
                return Err("the peer closed the connection before the first reply".into())
            }
            Err(e) => return Err(format!("send failed: {e}")),
        }
        probes += 1;
        let next = (now_ns() + PROBE_INTERVAL_NS).min(end);
        loop {
            let now = now_ns();
            if now >= next {
                break;
            }
            let wait = if busy_poll { 0 } else { next - now };
            match ep.recv(&mut rx, wait) {
                Ok(Some(_)) => {
                    if let Ok(h) = Header::decode(&rx) {
                        if h.run_id == run_id && h.flags & FLAG_PROBE != 0 {
                            return Ok(Discovery {
                                open_ns: None, // the report's: phases::open_ns
                                matched_ns,
                                first_reply_ns: Some(now_ns() - first),
                                probes,
                            });
                        }
                    }
                }
                Ok(None) | Err(TransportError::Unreachable { .. }) => {}
                Err(TransportError::Closed) => {
                    return Err("the peer closed the connection before the first reply".into())
                }
                Err(e) => return Err(format!("receive failed: {e}")),
            }
            if signals::stopped() {
                break;
            }
        }
    }
    Err(format!(
        "no reply from {peer} within {} ({probes} probes sent); is a pong running there?",
        format_ns(bound_ns as f64)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Matched at once; one more subscriber discovered at every count query, up to `max`.
    struct Growing {
        seen: u64,
        max: Option<u64>,
    }

    impl Endpoint for Growing {
        fn send(&mut self, _: &[u8]) -> Result<(), TransportError> {
            Ok(())
        }
        fn recv(&mut self, _: &mut Vec<u8>, _: u64) -> Result<Option<usize>, TransportError> {
            Ok(None)
        }
        fn local_addr(&self) -> String {
            "growing".into()
        }
        fn matched_subscribers(&mut self) -> Option<u64> {
            let max = self.max?;
            self.seen = (self.seen + 1).min(max);
            Some(self.seen)
        }
    }

    #[test]
    fn waits_until_every_subscriber_is_matched() {
        let mut ep = Growing {
            seen: 0,
            max: Some(5),
        };
        matched_all(&mut ep, 5_000_000_000, 4, "test").unwrap();
        assert_eq!(ep.seen, 4);
    }

    #[test]
    fn too_few_subscribers_fail_naming_the_count() {
        let mut ep = Growing {
            seen: 0,
            max: Some(2),
        };
        let e = matched_all(&mut ep, 20_000_000, 3, "test")
            .unwrap_err()
            .to_string();
        assert!(e.contains("2 of --subscribers 3 matched"), "{e}");
    }

    #[test]
    fn a_middleware_that_cannot_count_goes_on_after_the_first_match() {
        let mut ep = Growing { seen: 0, max: None };
        matched_all(&mut ep, 20_000_000, 3, "test").unwrap();
    }
}
