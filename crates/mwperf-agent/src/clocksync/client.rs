//! The sub's prober (`--clock-peer IP:PORT`), on a thread of its own so the measured receive
//! path never waits for it: a burst before the stream (every 10 ms until 16 answers, retrying
//! until the pub's server answers, at most the discovery timeout), 20 Hz during the stream, and
//! a burst after the end-of-stream marker (16 probes 5 ms apart, then 100 ms for the answers).
//! Answers go into per-bin minima (bounded memory); the running fit is refreshed on each answer.

use std::collections::HashSet;
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use mwperf_core::clock::now_ns;
use mwperf_core::clocksync::{Fit, MinRttBins, Probe};

use super::probe::{Bad, Datagram, ANSWER, REQUEST};

const BURST: u64 = 16;
const BURST_GAP_NS: u64 = 10_000_000;
const DURING_GAP_NS: u64 = 50_000_000;
const AFTER_GAP_NS: u64 = 5_000_000;
const AFTER_WAIT_NS: u64 = 100_000_000;

#[derive(Default)]
struct Shared {
    end: AtomicBool,
    bins: Mutex<MinRttBins>,
    running: Mutex<Option<Fit>>,
    sent: AtomicU64,
    foreign: AtomicU64,
}

pub struct Client {
    pub peer: String,
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

/// What the prober gathered, for the final fit.
pub struct Gathered {
    pub bins: MinRttBins,
    pub sent: u64,
    pub foreign: u64,
}

impl Client {
    /// Start probing `peer` for run `run_id` (None: any run); give up after `timeout_ns`
    /// without a single answer.
    pub fn start(peer: SocketAddr, run_id: Option<u32>, timeout_ns: u64) -> Result<Client, String> {
        let local: SocketAddr = if peer.is_ipv4() {
            "0.0.0.0:0".parse().expect("addr")
        } else {
            "[::]:0".parse().expect("addr")
        };
        let sock = UdpSocket::bind(local)
            .and_then(|s| s.connect(peer).map(|_| s))
            .map_err(|e| format!("--clock-peer: cannot reach {peer}: {e}"))?;
        let shared = Arc::new(Shared::default());
        let s = shared.clone();
        let thread = std::thread::Builder::new()
            .name("clock-probe".into())
            .spawn(move || probe_loop(&sock, run_id, timeout_ns, &s))
            .map_err(|e| format!("--clock-peer: {e}"))?;
        Ok(Client {
            peer: peer.to_string(),
            shared,
            thread: Some(thread),
        })
    }

    /// Probes sent and datagrams of another run (or not answers) received so far: what a
    /// prober that was never answered says it tried.
    pub fn tried(&self) -> (u64, u64) {
        (
            self.shared.sent.load(Ordering::Relaxed),
            self.shared.foreign.load(Ordering::Relaxed),
        )
    }

    /// The end-of-stream marker arrived: take the "after" burst now.
    pub fn end_of_stream(&self) {
        self.shared.end.store(true, Ordering::Relaxed);
    }

    /// Probes answered so far (plausible answers of this run), whether or not the fit uses
    /// them: a fit uses one probe per 250 ms bin, and under load only some bins' best.
    pub fn answered(&self) -> u64 {
        self.shared
            .bins
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .answered
    }

    /// The fit over the probes answered so far (None before the first answer).
    pub fn running_fit(&self) -> Option<Fit> {
        *self
            .shared
            .running
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    /// Take the "after" burst (if not yet taken), wait for it (~0.2 s) and hand over the probes.
    pub fn finish(mut self) -> Gathered {
        self.end_of_stream();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        let bins = std::mem::take(&mut *self.shared.bins.lock().unwrap_or_else(|e| e.into_inner()));
        Gathered {
            bins,
            sent: self.shared.sent.load(Ordering::Relaxed),
            foreign: self.shared.foreign.load(Ordering::Relaxed),
        }
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        self.shared.end.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[derive(PartialEq, Clone, Copy)]
enum Phase {
    Before,
    During,
    After { left: u64 },
    Draining { until: u64 },
}

fn probe_loop(sock: &UdpSocket, run_id: Option<u32>, timeout_ns: u64, s: &Shared) {
    let start = now_ns();
    let mut phase = Phase::Before;
    let mut next_seq = 0u32;
    let mut answered: HashSet<u32> = HashSet::new();
    let mut next_send = start;
    let mut buf = [0u8; 2048];
    // diagnostics: every answered probe as CSV (t1,t2,t3,t4) when MWPERF_CLOCKSYNC_PROBES names a file
    let mut dump: Option<Vec<Probe>> =
        std::env::var_os("MWPERF_CLOCKSYNC_PROBES").map(|_| Vec::new());
    loop {
        let now = now_ns();
        if s.end.load(Ordering::Relaxed) && matches!(phase, Phase::Before | Phase::During) {
            phase = Phase::After { left: BURST };
            next_send = now;
        }
        match phase {
            Phase::Before if answered.is_empty() && now > start + timeout_ns => return, // the pub never answered
            Phase::Before if answered.len() as u64 >= BURST => phase = Phase::During,
            Phase::After { left: 0 } => {
                phase = Phase::Draining {
                    until: now + AFTER_WAIT_NS,
                }
            }
            Phase::Draining { until } if now >= until || answered.len() as u32 >= next_seq => {
                if let (Some(d), Some(path)) =
                    (dump.take(), std::env::var_os("MWPERF_CLOCKSYNC_PROBES"))
                {
                    let text: String = d
                        .iter()
                        .map(|p| format!("{},{},{},{}\n", p.t1, p.t2, p.t3, p.t4))
                        .collect();
                    let _ = std::fs::write(path, format!("t1,t2,t3,t4\n{text}"));
                }
                return;
            }
            _ => {}
        }
        if now >= next_send && !matches!(phase, Phase::Draining { .. }) {
            let req = Datagram {
                kind: REQUEST,
                run_id: run_id.unwrap_or(0),
                seq: next_seq,
                t1: now_ns(),
                t2: 0,
                t3: 0,
            };
            if sock.send(&req.encode()).is_ok() {
                s.sent.fetch_add(1, Ordering::Relaxed);
            }
            next_seq = next_seq.wrapping_add(1);
            let gap = match &mut phase {
                Phase::Before => BURST_GAP_NS,
                Phase::During => DURING_GAP_NS,
                Phase::After { left } => {
                    *left -= 1;
                    AFTER_GAP_NS
                }
                Phase::Draining { .. } => 0,
            };
            next_send = now + gap;
            continue;
        }
        let wait = next_send.saturating_sub(now).clamp(100_000, 50_000_000);
        let _ = sock.set_read_timeout(Some(Duration::from_nanos(wait)));
        let Ok(n) = sock.recv(&mut buf) else { continue }; // timeout, or ICMP refused before the pub is up
        let t4 = now_ns();
        match Datagram::decode(&buf[..n]) {
            Ok(d)
                if d.kind == ANSWER
                    && run_id.is_none_or(|id| id == d.run_id)
                    && d.seq < next_seq
                    && answered.insert(d.seq) =>
            {
                let p = Probe {
                    t1: d.t1,
                    t2: d.t2,
                    t3: d.t3,
                    t4,
                };
                if let Some(d) = &mut dump {
                    d.push(p);
                }
                let fit = {
                    let mut bins = s.bins.lock().unwrap_or_else(|e| e.into_inner());
                    bins.add(p);
                    bins.fit(t4)
                };
                *s.running.lock().unwrap_or_else(|e| e.into_inner()) = fit;
            }
            Ok(_) | Err(Bad::Foreign) | Err(Bad::Malformed) => {
                s.foreign.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}
