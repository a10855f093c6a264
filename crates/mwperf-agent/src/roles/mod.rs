//! The four roles. Each returns a [`RoleOutcome`]; the session (session.rs) turns it into the
//! report and exit code.

use mwperf_core::result::{Counters, Measurement, Status};

use crate::cli::Role;
use crate::session::Session;
use crate::{executor, multi};

/// Endpoints whose role has finished, kept open until the report is out (main.rs): an endpoint's
/// teardown (a DDS or rcl participant's, waiting on the middleware's threads) must not stand
/// between a measurement and its report.
static PARKED: std::sync::Mutex<Vec<Box<dyn mwperf_transports::Endpoint>>> =
    std::sync::Mutex::new(Vec::new());

/// Keep `ep` open until [`release_parked`].
pub fn park(ep: Box<dyn mwperf_transports::Endpoint>) {
    PARKED.lock().unwrap_or_else(|p| p.into_inner()).push(ep);
}

/// Close what [`park`] kept (after the report was written).
pub fn release_parked() {
    let parked = std::mem::take(&mut *PARKED.lock().unwrap_or_else(|p| p.into_inner()));
    drop(parked);
}

pub mod call_book;
pub mod client;
pub mod contact;
pub mod outstanding;
pub mod ping;
pub mod pong;
pub mod publish;
pub mod server;
pub mod service;
pub mod subscribe;

pub struct RoleOutcome {
    pub status: Status,
    pub reason: Option<String>,
    pub measurement: Option<Measurement>,
    pub counters: Option<Counters>,
    pub sent: Option<u64>,
    /// Sender schedule accuracy of a pub (a ping's is inside its measurement).
    pub schedule: Option<mwperf_core::result::Schedule>,
    /// Warm-up duration the role used (for the no-warmup warning); None for servers.
    pub warmup_ns: Option<u64>,
    /// Discovery and first contact (ping, pub).
    pub discovery: Option<mwperf_core::result::Discovery>,
    /// Each topic's measurement when the agent served several (`measurement` then pools them).
    pub per_topic: Vec<mwperf_core::result::TopicMeasurement>,
    /// With --outage-window: the counts around the outage (single topic).
    pub outage: Option<mwperf_core::result::OutageCounts>,
    /// A service server's side (`server`).
    pub serving: Option<mwperf_core::result::Serving>,
    /// `--throughput`: the steady state's CPU and (pub) the sends.
    pub throughput: Option<mwperf_core::result::ThroughputSide>,
}

impl RoleOutcome {
    pub fn failed(reason: impl Into<String>) -> Self {
        RoleOutcome {
            status: Status::Failed,
            reason: Some(reason.into()),
            measurement: None,
            counters: None,
            sent: None,
            schedule: None,
            warmup_ns: None,
            discovery: None,
            per_topic: Vec::new(),
            outage: None,
            serving: None,
            throughput: None,
        }
    }
}

/// Run the session's role on its opened topics: one topic on this thread, several each on its
/// own (multi.rs).
pub fn run(session: &Session, mut topics: Vec<multi::Topic>) -> RoleOutcome {
    let (role, waiter) = (session.role, &session.waiter);
    if let Role::Ping(a) | Role::Pub(a) = role {
        crate::phases::announce_measuring(a.common.json.as_deref() != Some("-"));
    }
    if topics.len() > 1 {
        let plan = &session.plan;
        return multi::run(role, topics, &plan.names, &plan.samples, waiter);
    }
    let (ep, name) = topics.pop().expect("one topic");
    match role {
        Role::Ping(a) => ping::run(a, ep, &name, waiter, None),
        Role::Pub(a) => publish::run(a, ep, &name, waiter, None),
        Role::Pong(a) => pong::run(
            a,
            ep,
            &name,
            executor::Callback {
                busy_loop_ns: a.busy_loop,
                ..executor::Callback::PLAIN
            },
        ),
        Role::Sub(a) => subscribe::run(
            a,
            ep,
            &name,
            executor::Callback {
                busy_loop_ns: a.busy_loop,
                ..executor::Callback::PLAIN
            },
        ),
        _ => unreachable!("not a measuring role"),
    }
}

/// A run-id when none was given: different for every process start.
pub fn random_run_id() -> u32 {
    let t = mwperf_core::clock::now_ns();
    let mixed =
        (t ^ (std::process::id() as u64).rotate_left(32)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    ((mixed >> 32) as u32).max(1)
}

/// Check up front that the transport can carry the message at all (a usage error otherwise).
pub fn check_size(kind: mwperf_transports::Kind, flag: &str, payload: usize) -> Result<(), String> {
    let most = kind.max_payload();
    if payload > most {
        return Err(format!(
            "{flag}: a payload of {payload} bytes does not fit one {} message (at most {most} bytes after the {}-byte header); use a smaller payload{}",
            kind.name(),
            mwperf_core::wire::HEADER_LEN,
            if kind.max_message().is_some() { " or tcp/uds" } else { "" }
        ));
    }
    Ok(())
}

/// The measured messages a sender expects to send (what its per-message books reserve up front).
pub fn expected(args: &crate::cli::SenderArgs) -> u64 {
    args.count
        .unwrap_or_else(|| (args.duration as f64 * args.rate / 1e9) as u64)
        .max(args.min_count.unwrap_or(0))
        .saturating_add(1024)
}
