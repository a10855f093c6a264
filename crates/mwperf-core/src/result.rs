//! The result document written by agents: mirrors `schema/result.v2.json` (kind `agent-report`).
//! Field names are the contract with the Python control plane; add fields, never rename.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

pub const SCHEMA_VERSION: u32 = 2;

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Stats {
    pub count: u64,
    pub min_ns: Option<u64>,
    pub mean_ns: Option<f64>,
    pub p50_ns: Option<u64>,
    pub p90_ns: Option<u64>,
    pub p99_ns: Option<u64>,
    pub p999_ns: Option<u64>,
    pub p9999_ns: Option<u64>,
    pub max_ns: Option<u64>,
    pub stddev_ns: Option<f64>,
    pub range_ns: Option<u64>,
    pub histogram: Vec<[u64; 2]>,
}

impl Stats {
    /// No sample: a count of 0 and every figure absent (never zero).
    pub const EMPTY: Stats = Stats {
        count: 0,
        min_ns: None,
        mean_ns: None,
        p50_ns: None,
        p90_ns: None,
        p99_ns: None,
        p999_ns: None,
        p9999_ns: None,
        max_ns: None,
        stddev_ns: None,
        range_ns: None,
        histogram: Vec::new(),
    };
}

#[derive(Serialize, Deserialize, Debug, Clone, Default, PartialEq)]
pub struct Accounting {
    pub sent: u64,
    pub received: u64,
    pub lost: u64,
    pub duplicated: u64,
    pub reordered: u64,
    pub corrupted: u64,
    pub foreign: u64,
    pub malformed: u64,
    pub warmup_sent: u64,
    pub warmup_received: u64,
    /// A reliable stream cut off before its end-of-stream marker: what was still the writer's
    /// to deliver (mwperf's merge sets it; an agent never does). Absent when 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub undelivered: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

#[derive(Serialize, Deserialize, Debug, Clone)]
pub struct Schedule {
    pub period_ns: u64,
    pub lateness: Stats,
    pub behind_count: u64,
}

#[derive(Serialize, Deserialize, Debug, Clone)]
pub struct Throughput {
    pub duration_s: f64,
    pub msgs_per_s: f64,
    pub payload_bytes_per_s: f64,
    pub message_bytes_per_s: f64,
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct SeriesPoint {
    pub t_s: u64,
    pub sent: u64,
    pub received: u64,
    pub min_ns: Option<u64>,
    pub p50_ns: Option<u64>,
    pub p90_ns: Option<u64>,
    pub p99_ns: Option<u64>,
    pub max_ns: Option<u64>,
    pub mean_ns: Option<f64>,
}

/// Time to match the peer and to the first answered message, measured before the schedule starts.
#[derive(Serialize, Debug, Clone, Default, PartialEq)]
pub struct Discovery {
    /// Opening the endpoints, before `matched_ns` starts: a participant's creation, a session's
    /// connection to its broker or router with its TLS handshake (None: not measured).
    pub open_ns: Option<u64>,
    /// From the endpoint being open to the middleware reporting the peer matched.
    pub matched_ns: u64,
    /// ping: from the first probe sent to the first echo back (None for a pub).
    pub first_reply_ns: Option<u64>,
    /// ping: probes sent before the first echo (lost ones show discovery still settling).
    pub probes: u64,
}

/// What an agent saw around a known outage window (`--outage-window`, stats/outage.rs); the
/// halves it could not observe are None (a pub sees no deliveries, a sub no sends).
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct OutageCounts {
    /// The window on CLOCK_MONOTONIC, [start_ns, end_ns).
    pub start_ns: u64,
    pub end_ns: u64,
    /// Measured messages sent inside the window.
    pub sent: Option<u64>,
    /// Of those, how many were delivered (intact, first arrival) at any time.
    pub delivered: Option<u64>,
    /// Receive time of the last delivery before the window.
    pub last_before_ns: Option<u64>,
    /// Receive time of the first delivery at or after the window's end of a message sent at or
    /// after its start.
    pub first_after_ns: Option<u64>,
    /// CLOCK_MONOTONIC at second 0 of the measurement's per-second series (a measuring agent):
    /// places the window exactly on that time axis.
    pub series_origin_ns: Option<u64>,
}

#[derive(Serialize, Deserialize, Debug, Clone)]
pub struct Late {
    pub threshold_ns: u64,
    pub count: u64,
    pub fraction: f64,
}

#[derive(Serialize, Deserialize, Debug, Clone)]
pub struct Measurement {
    pub mode: Cow<'static, str>,
    pub latency_kind: Cow<'static, str>,
    pub clock: Cow<'static, str>,
    pub payload_bytes: u64,
    pub message_bytes: u64,
    pub response: Stats,
    pub service: Stats,
    pub jitter_rfc3550_ns: Option<f64>,
    pub late: Option<Late>,
    pub accounting: Accounting,
    pub throughput: Throughput,
    pub schedule: Option<Schedule>,
    pub series: Vec<SeriesPoint>,
    pub samples_file: Option<String>,
    /// One way across two clocks (`sub --clock-peer`): the measured offset and drift every
    /// receive time was corrected with, and the error bound of the result. Not read back by
    /// `mwperf-agent pool` (a pool of several clocks has no one offset: the caller decides).
    #[serde(skip_serializing_if = "Option::is_none", skip_deserializing)]
    pub clock_sync: Option<ClockSync>,
    /// Request/response (`--mode service`): what happened to the calls besides their latency.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calls: Option<Calls>,
}

/// A service client's calls (`client`, docs/agent-contract.md): a call is answered (a latency
/// sample and `accounting.received`), timed out, or failed; replies that match no outstanding
/// call are counted apart. Pooled by summing (limits: the largest).
#[derive(Serialize, Deserialize, Debug, Clone, Default, PartialEq)]
pub struct Calls {
    /// Clients that made these calls (each its own middleware endpoint).
    pub clients: u64,
    /// Calls each client keeps outstanding at most (`--in-flight`).
    pub in_flight: u64,
    /// The most calls that were outstanding at once in one client.
    pub max_outstanding: u64,
    pub call_timeout_ns: u64,
    /// Measured calls answered with a reply (= accounting.received).
    pub answered: u64,
    /// Measured calls with no reply within --call-timeout (given up).
    pub timeouts: u64,
    /// Measured calls the server answered with a failure (ROS 1 ok=0, a zenoh error reply).
    pub errors: u64,
    /// Measured calls the transport could not send.
    pub send_errors: u64,
    /// Replies that matched no outstanding call (late after their timeout, duplicated).
    pub unmatched: u64,
    /// Replies the middleware addressed to other clients (a shared reply topic), dropped.
    pub others_replies: u64,
    /// Answered calls whose reply carried no mwperf header (a foreign server): timed, not checked.
    pub unchecked: u64,
    /// Connections the clients opened (ROS 1 non-persistent: one per call); null where none.
    pub connections: Option<u64>,
    /// The server's side (`server`'s report), filled in by the control plane.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<Serving>,
}

/// One side of a throughput run (`pub`/`sub --throughput`): its CPU in the steady state and,
/// for the pub, how its sends went. The control plane turns both sides into
/// `measurement.throughput` (docs/throughput.md).
#[derive(Serialize, Deserialize, Debug, Clone, Default, PartialEq)]
pub struct ThroughputSide {
    /// Measured messages in the steady window (pub: accepted by the middleware; sub: received).
    pub messages: u64,
    /// Wall time of the steady window: first measured message to the last (pub) or to the
    /// end-of-stream marker (sub).
    pub steady_wall_s: f64,
    /// CPU (user + system, every thread of the process) in that window.
    pub steady_cpu_s: f64,
    /// sub: every Nth payload was checked in full, the others at both ends (1 = all in full).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checked_every: Option<u64>,
    /// pub: its send calls.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sending: Option<Sending>,
}

/// A throughput pub's send calls (the middleware's write/publish/send).
#[derive(Serialize, Deserialize, Debug, Clone, Default, PartialEq)]
pub struct Sending {
    /// Time inside send calls, refused ones included.
    pub in_send_s: f64,
    /// Time the middleware held sends back (flow control): the time inside send calls beyond
    /// what an unblocked call costs (each call's duration minus the 10th percentile of all).
    pub blocked_s: f64,
    /// Sends the middleware gave up on after its own bound (a full reliable history or queue),
    /// each tried again; their time is in `in_send_s`.
    pub refused: u64,
    pub send_p10_ns: Option<u64>,
    pub send_p50_ns: Option<u64>,
    pub send_p99_ns: Option<u64>,
    pub send_max_ns: Option<u64>,
    /// Messages accepted in each second of the measurement (from the first measured send).
    pub series: Vec<u64>,
    /// Times the middleware took no message for at least [`HOLD_NS`] between two it took (a
    /// reliable writer waiting for acknowledgements: Fast DDS's heartbeat-paced keep-all).
    #[serde(default)]
    pub holds: u64,
    /// The longest such wait (between two taken messages' ends); None with fewer than two.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub longest_hold_ns: Option<u64>,
}

/// A wait between two messages the middleware took that counts as a hold ([`Sending::holds`]).
pub const HOLD_NS: u64 = 100_000_000;

/// What a service `server` did: requests answered and the time each took it (request arrival
/// to reply handed to the transport, on its own clock; includes --server-work).
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Serving {
    pub requests: u64,
    pub answered: u64,
    /// Requests that were not mwperf's (answered all the same, with --reply-payload bytes).
    pub foreign: u64,
    pub reply_errors: u64,
    /// --server-work per call.
    pub work_ns: u64,
    /// Request arrival to reply handed over, measured requests only (not warm-up or probes).
    pub server_time: Stats,
    pub connections: Option<u64>,
}

/// How a sub put the pub's send times and its own receive times on one clock (docs/agent-contract.md
/// "Clock sync"): NTP on-wire probes over a UDP side channel, a least-squares offset/drift fit.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct ClockSync {
    pub method: &'static str,
    /// The pub's probe server (`--clock-peer`).
    pub peer: String,
    /// "ok", or why there is no fit ("no-answer": no probe came back; latencies then uncorrected).
    pub status: &'static str,
    pub probes_sent: u64,
    pub probes_answered: u64,
    /// The lowest-delay probes the fit used (per 250 ms bin, close to the minimum round trip).
    pub probes_used: u64,
    /// Datagrams on the probe socket that were not answers to this run's probes.
    pub probes_foreign: u64,
    /// Offset (pub clock − sub clock) at `t0_ns`, the first measured arrival (sub's clock).
    pub offset_ns: Option<i64>,
    pub t0_ns: Option<u64>,
    /// d(offset)/dt in parts per million (pub clock fast: positive).
    pub drift_ppm: Option<f64>,
    pub min_rtt_ns: Option<u64>,
    /// Largest distance of a used probe from the fitted line, ns.
    pub fit_residual_ns: Option<f64>,
    /// The largest (distance from the fitted line + half the round trip) over the used probes:
    /// how far the corrected one-way latencies can be off, in either direction.
    pub error_bound_ns: Option<u64>,
    /// First to last used probe, s.
    pub span_s: f64,
    /// Median of the uncorrected (receive − send, across clocks; may be negative) service latency,
    /// over the samples still buffered at the end.
    pub raw_p50_ns: Option<i64>,
    /// Samples corrected with the final fit (kept until the end, at most `buffer_capacity`).
    pub corrected_final_fit: u64,
    /// Samples that overflowed the buffer and were corrected with the fit as it stood then.
    pub corrected_running_fit: u64,
    /// Samples recorded uncorrected (no probe had been answered yet / at all).
    pub uncorrected: u64,
    /// Samples whose corrected latency was still negative (recorded as 0).
    pub negative_after_correction: u64,
    pub buffer_capacity: u64,
    /// TEST ONLY: the drift this agent injected into its own clock (`--test-clock-drift-ppm`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub test_own_drift_ppm: Option<f64>,
}

/// A pub's probe server (`--clock-serve`): what it answered and what it ignored.
#[derive(Serialize, Debug, Clone, Default, PartialEq)]
pub struct ClockServe {
    pub address: String,
    pub answered: u64,
    pub foreign: u64,
    pub malformed: u64,
    /// TEST ONLY: the drift this agent injected into its own clock (`--test-clock-drift-ppm`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub test_own_drift_ppm: Option<f64>,
}

/// One topic of an agent serving several (`--topics N`): its own measurement, the same shape as
/// the top-level one (which then pools all topics), plus which topic it is.
#[derive(Serialize, Debug, Clone)]
pub struct TopicMeasurement {
    /// 0-based topic index.
    pub topic: u32,
    /// The topic's name as the user knows it: what `--topic-name` gave (a replay's recorded
    /// topic, e.g. `/scan`), else `topic <i>`.
    pub name: String,
    /// The topic's address as the peer reaches it (host:port, socket path, middleware base).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub address: Option<String>,
    #[serde(flatten)]
    pub measurement: Measurement,
}

#[derive(Serialize, Debug, Clone, Default)]
pub struct Counters {
    pub received: u64,
    pub echoed: u64,
    pub foreign: u64,
    pub malformed: u64,
    pub send_errors: u64,
    pub connections: u64,
}

#[derive(Serialize, Debug, Clone)]
pub struct Tool {
    pub name: &'static str,
    pub version: &'static str,
    pub git_rev: String,
}

#[derive(Serialize, Debug, Clone)]
pub struct Conditions {
    pub busy_poll: bool,
    /// "off" | "on" | "unavailable"
    pub prevent_cpu_idle: &'static str,
    pub spin_margin_ns: u64,
    pub clock_read_overhead_ns: f64,
}

#[derive(Serialize, Debug, Clone, PartialEq, Eq, Copy)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Complete,
    Partial,
    Failed,
}

#[derive(Serialize, Debug, Clone)]
pub struct AgentReport {
    pub schema_version: u32,
    pub kind: &'static str,
    pub role: &'static str,
    pub tool: Tool,
    pub host: crate::host::HostFacts,
    pub config: serde_json::Value,
    pub conditions: Conditions,
    pub status: Status,
    pub status_reason: Option<String>,
    pub started_at: String,
    pub finished_at: String,
    pub process: crate::process::ProcessUsage,
    pub measurement: Option<Measurement>,
    pub counters: Option<Counters>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sent: Option<u64>,
    /// A pub's schedule accuracy (a ping's is inside its measurement).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub schedule: Option<Schedule>,
    /// Discovery and first contact of a ping or pub (kept out of the steady-state statistics).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub discovery: Option<Discovery>,
    /// Per-topic measurements when the agent served more than one topic (the top-level
    /// `measurement` then pools them all).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub per_topic: Vec<TopicMeasurement>,
    /// With --outage-window: what this agent saw around the outage.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outage: Option<OutageCounts>,
    /// A pub with --clock-serve: its probe server's counters.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clock_serve: Option<ClockServe>,
    /// A service server: what it answered and its time per call.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub serving: Option<Serving>,
    /// `--throughput`: this side's steady-state CPU and (pub) its sends.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub throughput: Option<ThroughputSide>,
    /// With --count-allocs: the whole process's heap allocations per phase (LD_PRELOAD counter).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allocations: Option<Allocations>,
    /// With --layers-out: what the system-call interposer saw (the rows are in that file).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub layers: Option<LayersAgent>,
    /// A ping's or pub's phase boundaries on CLOCK_MONOTONIC.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub phases: Option<Phases>,
    pub warnings: Vec<crate::warnings::Warning>,
}

/// A sender's phase boundaries on CLOCK_MONOTONIC: setup ends at `setup_done_ns` (endpoint open,
/// peer matched or answered), warm-up runs from the first message sent to the first measured
/// one's scheduled time `measure_start_ns`, steady state from there to `drained_ns` (the last
/// measured message's replies are in, or given up on), idle (`--idle`) to `idle_end_ns`.
#[derive(Serialize, Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Phases {
    pub setup_done_ns: u64,
    pub first_send_ns: Option<u64>,
    pub measure_start_ns: Option<u64>,
    pub last_send_ns: Option<u64>,
    pub drained_ns: Option<u64>,
    pub idle_end_ns: Option<u64>,
}

/// `--layers-out`: whether this agent's send/receive system calls were seen and how many.
#[derive(Serialize, Debug, Clone, PartialEq, Eq)]
pub struct LayersAgent {
    /// libmwperf_layers.so was loaded and its ring found
    pub interposer: bool,
    /// why not (e.g. not preloaded: a static binary, or LD_PRELOAD ignored)
    pub why: Option<String>,
    /// system calls carrying a message header, logged
    pub events: u64,
    /// ... not logged: the ring was full
    pub dropped: u64,
    /// calls that carried at least one header
    pub header_calls: u64,
    /// measured messages written to the rows file
    pub rows: u64,
    /// the rows file could not be written
    pub error: Option<String>,
}

/// Heap allocations of one phase: deltas of the process-wide counters.
#[derive(Serialize, Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AllocPhase {
    /// successful allocations (malloc, calloc, realloc, aligned variants)
    pub count: u64,
    /// bytes requested by them
    pub bytes: u64,
    /// blocks freed (free, realloc's old block)
    pub frees: u64,
}

/// `--count-allocs`: every heap allocation of the agent process (Rust code and C libraries),
/// counted by libmwperf_alloc.so (LD_PRELOAD) and snapshotted at the phase boundaries: process
/// start → setup done (endpoint open, discovery/first contact) → the first measured message →
/// the last measured message → the report. `steady` spans the messages between the first and
/// the last measured one: `steady_messages` = measured messages − 1, each one's whole handling
/// (ping: one send and one echo received; pong: one receive and echo; pub: one send; sub: one
/// receive) inside the window.
#[derive(Serialize, Debug, Clone)]
pub struct Allocations {
    /// "ld-preload"
    pub method: &'static str,
    pub setup: AllocPhase,
    pub warmup: AllocPhase,
    pub steady: AllocPhase,
    pub teardown: AllocPhase,
    /// process start → report
    pub total: AllocPhase,
    pub steady_messages: u64,
    /// steady.count / steady_messages (null below two measured messages)
    pub allocs_per_msg: Option<f64>,
    pub bytes_per_msg: Option<f64>,
    /// the largest live heap (usable bytes of allocated blocks) at any moment
    pub peak_live_bytes: u64,
    pub live_bytes_at_end: u64,
}
