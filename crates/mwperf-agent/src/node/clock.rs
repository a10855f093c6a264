//! A graph across several clocks (hosts): every node that runs on another clock than the
//! graph's reference probes it (`node --clock-ref IP:PORT`, the NTP-style probes of
//! clocksync/), and puts every timestamp it takes for a message — a send time, a due time, a
//! receive time — on the reference's clock with the running fit as it is at that instant. An
//! edge between two clocks then compares two reference timestamps, and a chain's age its
//! origin's due time with the last receive, whatever host each node runs on. One node on the
//! reference clock serves the probes (`node --clock-serve IP:PORT`).
//!
//! The go instant is the reference's too: a probing node moves it onto its own clock once its
//! first burst of probes has answered. What the online correction cost is reported: the
//! largest distance between the correction used and the final fit (over the whole run's
//! probes) at the instants it was used, added to the final fit's own error bound.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use mwperf_core::clock::now_ns;
use mwperf_core::clocksync::Fit;
use serde::Serialize;

use crate::clocksync::client::Client;
use crate::clocksync::server::Server;

/// A probing node waits this long at most for its first burst before it is READY.
const FIRST_BURST_NS: u64 = 5_000_000_000;
/// Answered probes before the go instant can be moved onto this node's clock.
const FIRST_BURST: u64 = 8;
/// How often the correction in use is recorded, to compare it with the final fit.
const TRACE_EVERY_NS: u64 = 50_000_000;

struct Probing {
    client: Client,
    /// (local time, correction used then), one per TRACE_EVERY_NS at most
    trace: Vec<(u64, i64)>,
}

static PROBING: Mutex<Option<Probing>> = Mutex::new(None);
/// Whether this node probes a reference: one relaxed load per timestamp when it does not.
static ACTIVE: AtomicBool = AtomicBool::new(false);

/// This node's clock against the reference, for its report.
#[derive(Serialize, Debug, Default)]
pub struct NodeClockReport {
    /// "reference" (serves the probes), "probed" (its timestamps are the reference's)
    pub role: &'static str,
    pub peer: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub probes_answered: Option<u64>,
    /// reference − this clock at the go instant (final fit), ns
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offset_ns: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub drift_ppm: Option<f64>,
    /// the final fit's bound (its farthest used probe's distance + half that round trip), ns
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fit_bound_ns: Option<u64>,
    /// the largest |correction used − final fit| over the run, ns
    #[serde(skip_serializing_if = "Option::is_none")]
    pub online_deviation_ns: Option<u64>,
    /// what a timestamp of this node may be off the reference: fit bound + online deviation
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bound_ns: Option<u64>,
}

/// The node's side of the clock: the probe server, or the prober; neither on one clock.
pub enum NodeClock {
    None,
    Serving(Server),
    Probing(String),
}

impl NodeClock {
    /// Start serving (`serve`) or probing (`peer`); a prober returns once its first burst
    /// answered (Err when the reference never answers within the discovery timeout).
    pub fn start(
        serve: Option<SocketAddr>,
        peer: Option<SocketAddr>,
        run_id: Option<u32>,
        timeout_ns: u64,
    ) -> Result<NodeClock, String> {
        if let Some(addr) = serve {
            return Server::start(addr, run_id)
                .map(NodeClock::Serving)
                .map_err(|e| e.replace("--clock-serve", "node --clock-serve"));
        }
        let Some(peer) = peer else {
            return Ok(NodeClock::None);
        };
        let client = Client::start(peer, run_id, timeout_ns)
            .map_err(|e| e.replace("--clock-peer", "node --clock-ref"))?;
        first_burst(&client, peer, timeout_ns)?;
        *PROBING.lock().unwrap_or_else(|e| e.into_inner()) = Some(Probing {
            client,
            trace: Vec::new(),
        });
        ACTIVE.store(true, Ordering::Release);
        Ok(NodeClock::Probing(peer.to_string()))
    }

    /// The go instant (on the reference's clock) on this node's clock.
    pub fn local_go(&self, reference_ns: u64) -> u64 {
        match self {
            NodeClock::Probing(_) => {
                let offset = correction(now_ns());
                (reference_ns as i128 - offset as i128).max(0) as u64
            }
            _ => reference_ns,
        }
    }

    /// Stop probing or serving (a server keeps answering a while after `end_ns`, for the
    /// probers' last burst) and say how this node's clock related to the reference.
    pub fn finish(self, go_ns: u64, end_ns: u64) -> Option<NodeClockReport> {
        match self {
            NodeClock::None => None,
            NodeClock::Serving(server) => {
                let served = server.finish(end_ns);
                Some(NodeClockReport {
                    role: "reference",
                    peer: served.address,
                    probes_answered: Some(served.answered),
                    ..NodeClockReport::default()
                })
            }
            NodeClock::Probing(peer) => {
                ACTIVE.store(false, Ordering::Release);
                let probing = PROBING.lock().unwrap_or_else(|e| e.into_inner()).take()?;
                let gathered = probing.client.finish();
                let fit = gathered.bins.fit(go_ns);
                let deviation = fit.map(|f| deviation_ns(&f, &probing.trace));
                Some(NodeClockReport {
                    role: "probed",
                    peer,
                    probes_answered: Some(gathered.bins.answered),
                    offset_ns: fit.map(|f| f.offset0_ns.round() as i64),
                    drift_ppm: fit.map(|f| f.drift * 1e6),
                    fit_bound_ns: fit.map(|f| f.error_bound_ns()),
                    online_deviation_ns: deviation,
                    bound_ns: fit.zip(deviation).map(|(f, d)| f.error_bound_ns() + d),
                })
            }
        }
    }
}

/// Wait until `client` has FIRST_BURST answered probes (at most the discovery timeout, and
/// FIRST_BURST_NS). Answered probes, not the fit's: it keeps one probe per 250 ms bin, and
/// only the bins whose best round trip is near the least one (under load 7 of 20 in 5 s).
fn first_burst(client: &Client, peer: SocketAddr, timeout_ns: u64) -> Result<(), String> {
    let deadline = now_ns() + timeout_ns.min(FIRST_BURST_NS);
    while client.answered() < FIRST_BURST || client.running_fit().is_none() {
        if now_ns() > deadline || crate::signals::stopped() {
            let (sent, foreign) = client.tried();
            return Err(format!(
                "node --clock-ref {peer}: the reference clock did not answer {FIRST_BURST} \
                 probes within {} s ({sent} sent, {} answered, {foreign} datagrams of another \
                 run or not answers)",
                timeout_ns.min(FIRST_BURST_NS) / 1_000_000_000,
                client.answered()
            ));
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    Ok(())
}

/// reference − local at local time `t_ns` by the running fit (0 on the reference's clock).
fn correction(t_ns: u64) -> i64 {
    if !ACTIVE.load(Ordering::Acquire) {
        return 0; // on the reference's clock: nothing to correct, no lock taken
    }
    let mut guard = PROBING.lock().unwrap_or_else(|e| e.into_inner());
    let Some(probing) = guard.as_mut() else {
        return 0;
    };
    let Some(fit) = probing.client.running_fit() else {
        return 0;
    };
    let offset = fit.offset_at(t_ns).round() as i64;
    if probing
        .trace
        .last()
        .is_none_or(|(t, _)| t_ns >= t + TRACE_EVERY_NS)
    {
        probing.trace.push((t_ns, offset));
    }
    offset
}

/// A timestamp of this node's clock (`local_ns`, CLOCK_MONOTONIC) on the reference's clock:
/// itself where the node is on the reference clock.
pub fn stamp(local_ns: u64) -> u64 {
    (local_ns as i128 + correction(local_ns) as i128).max(0) as u64
}

/// The largest |correction used − final fit| over the trace.
fn deviation_ns(fit: &Fit, trace: &[(u64, i64)]) -> u64 {
    trace
        .iter()
        .map(|&(t, used)| (used as f64 - fit.offset_at(t)).abs().ceil() as u64)
        .max()
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_burst_is_answered_probes_not_the_fits_bins() {
        let server = Server::start("127.0.0.1:0".parse().unwrap(), Some(5)).unwrap();
        let peer: SocketAddr = server.address().parse().unwrap();
        let client = Client::start(peer, Some(5), 5_000_000_000).unwrap();
        first_burst(&client, peer, 5_000_000_000).unwrap();
        assert!(client.answered() >= FIRST_BURST);
        // the burst's schedule is a probe every 10 ms: 8 answers come within a bin or two of
        // 250 ms; the fit needed 8 bins (2 s) before
        let fit = client.running_fit().unwrap();
        assert!(fit.used < FIRST_BURST, "{fit:?}");
        drop(client);
        drop(server);
    }

    #[test]
    fn a_reference_that_never_answers_is_named_with_what_was_tried() {
        let silent = std::net::UdpSocket::bind("127.0.0.1:0").unwrap(); // bound, never answers
        let peer = silent.local_addr().unwrap();
        let client = Client::start(peer, Some(5), 300_000_000).unwrap();
        let e = first_burst(&client, peer, 300_000_000).unwrap_err();
        assert!(e.contains("did not answer 8 probes"), "{e}");
        assert!(e.contains(" 0 answered"), "{e}");
    }

    #[test]
    fn without_a_reference_a_stamp_is_the_local_time() {
        assert_eq!(stamp(123_456), 123_456);
        assert_eq!(NodeClock::None.local_go(42), 42);
    }

    #[test]
    fn the_deviation_is_the_largest_distance_from_the_final_line() {
        let fit = Fit {
            t0_ns: 0,
            offset0_ns: 1_000.0,
            drift: 1e-6, // 1 us per second
            used: 10,
            min_rtt_ns: 100,
            residual_max_ns: 0.0,
            span_ns: 1,
            bound_ns: 50.0,
        };
        // at 2 s the line says 3000 ns; 2500 was used: 500 off; at 0 s 1000 was used
        assert_eq!(
            deviation_ns(&fit, &[(0, 1_000), (2_000_000_000, 2_500)]),
            500
        );
        assert_eq!(deviation_ns(&fit, &[]), 0);
    }
}
