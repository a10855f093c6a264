//! A service server of a graph node (graph file `servers:`): answers every request of its
//! service, one at a time in arrival order, on a thread of its own that starts before READY
//! (the other nodes' clients make first contact with it then) and ends with the node's linger.
//!
//! Each request is a callback: under a single-threaded executor it takes the node's turn first
//! (a subscription's callback or a client's delays it, as in rclcpp), and the server time runs
//! from the callback's start to the reply handed to the transport (its `work`, a CPU spin,
//! included); the reply is roles/server.rs's (the request's header echoed, `reply_bytes` of the
//! pattern). A request that is not this run's (a foreign client) is answered all the same and
//! counted `foreign`. Measured requests (not warm-up, not first-contact probes) are counted per
//! calling node (the request's source): the control plane checks them against each client's
//! own count of calls.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use mwperf_core::clock::now_ns;
use mwperf_core::result::Stats;
use mwperf_core::stats::LatencyRecorder;
use mwperf_core::wire::{Header, FLAG_ECHO, FLAG_FIN, FLAG_PROBE, FLAG_WARMUP};
use mwperf_transports::Server;
use serde::Serialize;

use super::spec::ServerSpec;
use crate::roles::server::encode_reply;
use crate::signals;

/// One calling node's measured requests as this server answered them.
#[derive(Serialize, Debug)]
pub struct ServedClient {
    /// the calling node's index
    pub source: u32,
    pub requests: u64,
    pub answered: u64,
    pub server_time: Stats,
}

/// What a server of the node did.
#[derive(Serialize, Debug)]
pub struct ServedReport {
    pub service: String,
    pub id: u16,
    /// measured requests (all clients) and those answered
    pub requests: u64,
    pub answered: u64,
    pub warmup_requests: u64,
    /// first-contact probe calls answered
    pub probes: u64,
    /// requests that were not this run's (answered all the same)
    pub foreign: u64,
    pub reply_errors: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_error: Option<String>,
    pub work_ns: u64,
    /// callback start to reply handed over, measured requests of every client
    pub server_time: Stats,
    pub clients: Vec<ServedClient>,
}

/// What the server threads share with the node: their run, the executor, when to stop.
#[derive(Clone)]
pub struct ServeContext {
    pub run_id: u32,
    pub executor: Option<Arc<Mutex<()>>>,
    pub busy_poll: bool,
    /// answer until this CLOCK_MONOTONIC instant (u64::MAX until the go instant is known)
    pub end_ns: Arc<AtomicU64>,
}

/// The node's running servers; dropped without [`Servers::finish`] (the node failed before its
/// measurement) they stop at once.
pub struct Servers {
    handles: Vec<JoinHandle<ServedReport>>,
    end_ns: Arc<AtomicU64>,
}

impl Servers {
    /// Start answering on each server, each on a thread of its own.
    pub fn start(specs: &[ServerSpec], servers: Vec<Box<dyn Server>>, cx: &ServeContext) -> Self {
        let handles = specs
            .iter()
            .cloned()
            .zip(servers)
            .map(|(spec, server)| {
                let cx = cx.clone();
                std::thread::spawn(move || serve(&spec, server, &cx))
            })
            .collect();
        Servers {
            handles,
            end_ns: cx.end_ns.clone(),
        }
    }

    /// Serve until `end_ns`, then each server's report (in the spec's order).
    pub fn finish(mut self, end_ns: u64) -> Vec<ServedReport> {
        self.end_ns.store(end_ns, Ordering::Relaxed);
        std::mem::take(&mut self.handles)
            .into_iter()
            .map(|h| h.join().expect("server thread"))
            .collect()
    }
}

impl Drop for Servers {
    fn drop(&mut self) {
        self.end_ns.store(0, Ordering::Relaxed);
    }
}

/// The longest single wait: the end and stop signals are seen at least this often.
const MAX_WAIT_NS: u64 = 50_000_000;

#[derive(Default)]
struct PerClient {
    requests: u64,
    answered: u64,
    time: LatencyRecorder,
}

fn serve(spec: &ServerSpec, mut server: Box<dyn Server>, cx: &ServeContext) -> ServedReport {
    let mut report = ServedReport {
        service: spec.service.clone(),
        id: spec.id,
        requests: 0,
        answered: 0,
        warmup_requests: 0,
        probes: 0,
        foreign: 0,
        reply_errors: 0,
        first_error: None,
        work_ns: spec.work_ns,
        server_time: LatencyRecorder::default().summary(),
        clients: Vec::new(),
    };
    let mut time = LatencyRecorder::default();
    let mut clients: BTreeMap<u32, PerClient> = BTreeMap::new();
    let mut rx = Vec::with_capacity(64 * 1024);
    let mut tx = Vec::with_capacity(64 * 1024);
    loop {
        let now = now_ns();
        let end = cx.end_ns.load(Ordering::Relaxed);
        if now >= end || signals::stopped() {
            break;
        }
        let wait = if cx.busy_poll {
            0
        } else {
            (end - now).min(MAX_WAIT_NS)
        };
        let token = match server.recv_request(&mut rx, wait) {
            Ok(Some(t)) => t,
            Ok(None) => continue,
            Err(e) => {
                report.first_error.get_or_insert_with(|| e.to_string());
                std::thread::sleep(std::time::Duration::from_millis(1));
                continue;
            }
        };
        let request = Header::decode(&rx).ok().filter(|h| {
            h.run_id == cx.run_id && h.topic == spec.id && h.flags & (FLAG_ECHO | FLAG_FIN) == 0
        });
        let _turn = cx
            .executor
            .as_ref()
            .map(|m| m.lock().unwrap_or_else(|p| p.into_inner()));
        let start_ns = now_ns(); // the callback's start
        let size = spec
            .reply_bytes
            .map(|b| b as usize)
            .or(request.map(|h| h.payload_len as usize))
            .unwrap_or(rx.len());
        crate::busy::spin_for(spec.work_ns);
        encode_reply(&mut tx, request, cx.run_id, start_ns, size);
        let sent = server.reply(token, &tx);
        let done_ns = now_ns();
        drop(_turn);
        if let Err(e) = &sent {
            report.reply_errors += 1;
            report.first_error.get_or_insert_with(|| e.to_string());
        }
        let Some(h) = request else {
            report.foreign += 1;
            continue;
        };
        if h.flags & FLAG_PROBE != 0 {
            report.probes += 1;
        } else if h.flags & FLAG_WARMUP != 0 {
            report.warmup_requests += 1;
        } else {
            let from = clients.entry(h.peer_rx_ns as u32).or_default();
            from.requests += 1;
            report.requests += 1;
            if sent.is_ok() {
                from.answered += 1;
                report.answered += 1;
                from.time.record(done_ns - start_ns);
                time.record(done_ns - start_ns);
                crate::allocs::message();
            }
        }
    }
    report.server_time = time.summary();
    report.clients = clients
        .into_iter()
        .map(|(source, c)| ServedClient {
            source,
            requests: c.requests,
            answered: c.answered,
            server_time: c.time.summary(),
        })
        .collect();
    report
}
