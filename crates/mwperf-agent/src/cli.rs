//! The agent's command line (docs/agent-contract.md). Values are validated while parsing, so a bad
//! value is a usage error naming its flag (exit 2) before anything is opened.

use clap::{Args, Parser, Subcommand};
use mwperf_core::{payload, units};
use mwperf_transports::ros2probe::DiscoveryRange;
use mwperf_transports::{Durability, History, Kind, Qos, Reliability, Spec};
use serde::Serialize;

#[derive(Parser, Debug)]
#[command(name = "mwperf-agent", version = crate::version::line(),
          about = "mwperf data plane: ping | pong | pub | sub over one transport")]
pub struct Cli {
    #[command(subcommand)]
    pub role: Role,
}

#[derive(Subcommand, Debug)]
pub enum Role {
    /// Send timestamped messages to a pong and measure the round trip.
    Ping(SenderArgs),
    /// Echo every message back to its sender.
    Pong(ServerArgs),
    /// Send timestamped messages one way to a sub.
    Pub(SenderArgs),
    /// Receive a pub's messages and measure one-way latency (same host clock).
    Sub(ServerArgs),
    /// List the payload catalogue (name → bytes after the header).
    Payloads(ListArgs),
    /// List the transports built into this binary.
    Transports(ListArgs),
    /// List every warning code mwperf emits and what it means (the one registry).
    Warnings(ListArgs),
    /// List the defaults and limits of the measuring roles' options (the control plane reads
    /// them from here instead of repeating them).
    Options(ListArgs),
    /// Run a middleware router in this process until SIGINT/SIGTERM (zenoh client mode).
    Router(RouterArgs),
    /// Listen to a live system's keys, publishing nothing; one line per message (mwperf probe --zenoh).
    Probe(ProbeArgs),
    /// Listen to a live ROS 2 / DDS domain on the wire (Cyclone DDS), publishing nothing: discovery and one line per sample (mwperf probe --ros2)
    ProbeRos2(ProbeRos2Args),
    /// Run a program as a child and talk a line protocol about it on stdin/stdout (docs/agent-contract.md).
    Supervise(mwperf_supervise::SuperviseArgs),
    /// Kill and remove what dead supervisors left in a folder of scratch folders.
    SuperviseClean(mwperf_supervise::CleanArgs),
    /// The cgroup steps of `supervise --cgroup` one at a time, for the control plane's own machine.
    SuperviseCgroup(mwperf_supervise::local::CgroupArgs),
    /// Print this host's facts as JSON (kernel, CPU, clock source, machine, time synchronisation).
    Facts,
    /// Pool finished measurements into one: a JSON array of measurements on stdin, the pooled
    /// measurement on stdout (the control plane's pooling of subscribers uses it: one method).
    Pool,
    /// One node of a graph: its publishers and subscriptions from a spec file (docs/agent-contract.md, "node").
    Node(NodeArgs),
    /// The report of a graph node another program ran (an rclpy node): its spec, its counts and
    /// the log of what its callbacks took, through the agent's node collectors (node/collect.rs).
    NodeCollect(NodeCollectArgs),
    /// Call a service's server through the middleware's own request/response and measure each
    /// call (docs/agent-contract.md, "client").
    Client(ClientArgs),
    /// Answer every call of a service's clients (docs/agent-contract.md, "server").
    Server(ServeArgs),
}

/// Upper bound of `client --clients`.
pub const MAX_CLIENTS: u32 = 16;
/// Upper bound of `client --in-flight`.
pub const MAX_IN_FLIGHT: u32 = 1024;

/// `client`: a sender's options (--rate per client, --payload = the request's bytes after the
/// header) and the calls'.
#[derive(Args, Debug, Serialize, Clone)]
pub struct ClientArgs {
    #[command(flatten)]
    #[serde(flatten)]
    pub sender: SenderArgs,
    /// Calls each client keeps outstanding at most (1 = call, wait for the reply, call again).
    #[arg(long = "in-flight", default_value = "1", value_parser = clap::value_parser!(u32).range(1..=MAX_IN_FLIGHT as i64))]
    pub in_flight: u32,
    /// Clients calling the one server, each its own middleware endpoint and schedule at --rate.
    #[arg(long, default_value = "1", value_parser = clap::value_parser!(u32).range(1..=MAX_CLIENTS as i64))]
    pub clients: u32,
    /// Give a call up when no reply came this long after it was sent (counted as a timeout).
    #[arg(long = "call-timeout", default_value = "1s", value_parser = duration)]
    #[serde(rename = "call_timeout_ns")]
    pub call_timeout: u64,
    /// The reply's bytes after the header the server sends (a catalogue name or bytes; default:
    /// the same as the request): replies of another size are counted as not intact.
    #[arg(long = "reply-payload", value_parser = payload_bytes)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reply_payload: Option<usize>,
}

/// `server`: a listener's options and what each call costs it.
#[derive(Args, Debug, Serialize, Clone)]
pub struct ServeArgs {
    #[command(flatten)]
    #[serde(flatten)]
    pub server: ServerArgs,
    /// The reply's bytes after the header (a catalogue name or bytes; default: the request's).
    #[arg(long = "reply-payload", value_parser = payload_bytes)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reply_payload: Option<usize>,
    /// CPU work (a spin) per call between the request's arrival and the reply.
    #[arg(long = "server-work", default_value = "0s", value_parser = duration)]
    #[serde(rename = "server_work_ns")]
    pub server_work: u64,
}

/// `node`: the node's spec, the go file, and the options every role has.
#[derive(Args, Debug)]
pub struct NodeArgs {
    #[command(flatten)]
    pub common: Common,
    /// The node's spec (JSON): its publishers, subscriptions and timing; a file, or the JSON
    /// object itself. Repeated: several nodes in this one process (a graph file's `process:`),
    /// each on threads of its own, sharing the process's middleware session.
    #[arg(long = "node-spec", required = true)]
    pub node_spec: Vec<String>,
    /// With several `--node-spec`s: where each one's report goes, in the same order (one per
    /// spec; `--json` is for a single node).
    #[arg(long = "node-json")]
    pub node_json: Vec<String>,
    /// Start when this file holds the start instant (CLOCK_MONOTONIC ns, one line).
    #[arg(long = "go-file")]
    pub go_file: String,
    /// Publishers sleep until this long before a message is due, then spin (as ping/pub do).
    #[arg(long = "spin-margin", default_value = "100us", value_parser = duration)]
    pub spin_margin: u64,
    /// Serve clock probes on this UDP IP:PORT: this node's clock is the graph's reference
    /// (the nodes on other hosts probe it, `--clock-ref`).
    #[arg(long = "clock-serve", value_parser = socket_addr, conflicts_with = "clock_ref")]
    pub clock_serve: Option<std::net::SocketAddr>,
    /// Probe the graph's reference clock (a node's `--clock-serve`) and put every timestamp on
    /// it: the go instant, send, due and receive times (node/clock.rs).
    #[arg(long = "clock-ref", value_parser = socket_addr)]
    pub clock_ref: Option<std::net::SocketAddr>,
}

/// `node-collect`: a node's spec, what the program counted and logged, where the report goes.
#[derive(Args, Debug)]
pub struct NodeCollectArgs {
    /// The node's spec (JSON), as `node` reads it.
    #[arg(long = "node-spec")]
    pub node_spec: String,
    /// What the program counted: the node-report's fields but `subscriptions`, and `stages`.
    #[arg(long)]
    pub sent: String,
    /// Every message the program's callbacks took (node/collect.rs: the record format).
    #[arg(long)]
    pub log: String,
    /// The run's id: messages of another run are foreign.
    #[arg(long = "run-id")]
    pub run_id: u32,
    /// Write the node-report here.
    #[arg(long)]
    pub json: String,
}

/// `router`: the transport whose router to run and where it listens.
#[derive(Args, Debug)]
pub struct RouterArgs {
    /// Transport whose router to run (zenoh).
    #[arg(long, value_parser = transport)]
    pub transport: Kind,
    /// Endpoint to listen on, e.g. tcp/127.0.0.1:7447 or tls/127.0.0.1:0 (port 0 = any free
    /// port; READY prints it).
    #[arg(long)]
    pub listen: String,
    /// Router option KEY=VALUE (zenoh: tls=ca=PATH,cert=PATH,key=PATH[,mtls=on], the files of
    /// a tls/ endpoint).
    #[arg(long = "opt", value_parser = key_value)]
    pub opt: Vec<(String, String)>,
}

/// `probe`: the live system to listen to.
#[derive(Args, Debug)]
pub struct ProbeArgs {
    /// Transport to probe (zenoh).
    #[arg(long, value_parser = transport)]
    pub transport: Kind,
    /// Endpoint of a router or a listening peer, e.g. tcp/robot:7447.
    #[arg(long)]
    pub connect: String,
    /// Key expression to subscribe to (repeatable; default '**', every key).
    #[arg(long)]
    pub key: Vec<String>,
    /// How long to listen.
    #[arg(long, default_value = "30s", value_parser = duration)]
    pub duration: u64,
}

/// `probe-ros2`: the DDS domain to listen to (docs/agent-contract.md, "probe-ros2").
#[derive(Args, Debug)]
pub struct ProbeRos2Args {
    /// DDS domain id (ROS_DOMAIN_ID), 0 to 232.
    #[arg(long, default_value_t = 0)]
    pub domain: u32,
    /// Network interface to listen on (lo = loopback unicast discovery); default Cyclone's choice.
    #[arg(long)]
    pub interface: Option<String>,
    /// How far discovery reaches, as ROS_AUTOMATIC_DISCOVERY_RANGE: LOCALHOST, SUBNET, OFF or
    /// SYSTEM_DEFAULT (mapped as rmw_cyclonedds_cpp maps it).
    #[arg(long, default_value = "SUBNET", value_parser = DiscoveryRange::parse)]
    pub discovery_range: DiscoveryRange,
    /// A host discovered by unicast besides (repeatable; ROS_STATIC_PEERS, split at ';').
    #[arg(long)]
    pub static_peer: Vec<String>,
    /// Cyclone DDS configuration read after the range's (CYCLONEDDS_URI: XML and/or file:// URIs).
    #[arg(long)]
    pub cyclonedds_uri: Option<String>,
    /// DDS topic to read (repeatable, e.g. rt/chatter); default every topic with a writer.
    #[arg(long)]
    pub topic: Vec<String>,
    /// Reliable readers (reliable writers then keep and resend samples for the probe).
    #[arg(long)]
    pub reliable: bool,
    /// Keep-last depth of each reader.
    #[arg(long, default_value_t = 100)]
    pub depth: i32,
    /// How long discovery runs before the window opens.
    #[arg(long, default_value = "3s", value_parser = duration)]
    pub discovery_time: u64,
    /// The measurement window after discovery.
    #[arg(long, default_value = "30s", value_parser = duration)]
    pub duration: u64,
}

#[derive(Args, Debug)]
pub struct ListArgs {
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

fn transport(s: &str) -> Result<Kind, String> {
    Kind::parse(s)
}
fn duration(s: &str) -> Result<u64, String> {
    units::parse_duration_ns(s)
}
fn window(s: &str) -> Result<(u64, u64), String> {
    let bad = || format!("'{s}' is not START_NS:END_NS (CLOCK_MONOTONIC nanoseconds, START < END)");
    let (a, b) = s.split_once(':').ok_or_else(bad)?;
    let (a, b): (u64, u64) = (
        a.trim().parse().map_err(|_| bad())?,
        b.trim().parse().map_err(|_| bad())?,
    );
    if a < b {
        Ok((a, b))
    } else {
        Err(bad())
    }
}
fn payload_bytes(s: &str) -> Result<usize, String> {
    payload::resolve(s)
}
fn rate(s: &str) -> Result<f64, String> {
    let r: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("'{s}' is not a number of messages per second"))?;
    if !r.is_finite() || r < 0.0 {
        return Err(format!("must be >= 0 (0 = as fast as possible), got {s}"));
    }
    if r > 10_000_000.0 {
        return Err(format!(
            "{s} Hz is above the 10 MHz limit; use 0 for as fast as possible"
        ));
    }
    Ok(r)
}

fn kind_name<S: serde::Serializer>(k: &Kind, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(k.name())
}

/// Options every role has.
#[derive(Args, Debug, Serialize, Clone)]
pub struct Common {
    /// Transport: udp, tcp, uds, iceoryx2, cyclonedds, rustdds, zenoh, mqtt, ros1.
    #[arg(long, value_parser = transport)]
    #[serde(serialize_with = "kind_name")]
    pub transport: Kind,
    /// Tag carried in every header; other tags count as foreign (pong/sub: accept only this one).
    #[arg(long = "run-id")]
    pub run_id: Option<u32>,
    /// Never block in receive (spins a core; removes idle wake-up latency).
    #[arg(long = "busy-poll")]
    pub busy_poll: bool,
    /// Hold /dev/cpu_dma_latency at 0 so CPUs stay out of deep idle states.
    #[arg(long = "prevent-cpu-idle")]
    pub prevent_cpu_idle: bool,
    /// Write the agent report (JSON) here; '-' = stdout.
    #[arg(long)]
    pub json: Option<String>,
    /// Do not print the human summary.
    #[arg(long)]
    pub quiet: bool,
    /// QoS reliability: reliable or best-effort (mapped per middleware).
    #[arg(long, default_value = "reliable", value_parser = ["reliable", "best-effort"])]
    pub reliability: String,
    /// QoS history: keep-last (with --depth), keep-last:N, or keep-all.
    #[arg(long, default_value = "keep-last")]
    pub history: String,
    /// Queue depth for keep-last history.
    #[arg(long, default_value = "10", value_parser = clap::value_parser!(u32).range(1..))]
    pub depth: u32,
    /// QoS durability: volatile or transient-local.
    #[arg(long, default_value = "volatile", value_parser = ["volatile", "transient-local"])]
    pub durability: String,
    /// Transport-specific setting KEY=VALUE (repeatable; see README, e.g. zenoh mode=client, mqtt qos=2).
    #[arg(long = "opt", value_parser = key_value)]
    pub opt: Vec<(String, String)>,
    /// Restarts (`mwperf run --restart`): ping, pong and pub open their endpoint again when the
    /// connection closes (a restarted peer or broker) instead of ending, printing
    /// `REOPENED <CLOCK_MONOTONIC ns>` on stdout each time (a ping or pub counts what it could not
    /// send meanwhile as sent and lost); a sub writes every raw sample (`--samples`) out as it
    /// records it. (A sender prints `MEASURING <ns>`, the intended time of its first measured
    /// message, when the measured phase starts, unless its report goes to stdout: `--json -`.)
    #[arg(long)]
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub reopen: bool,
    /// ping/pub: give up when discovery has not matched the peer within this time.
    #[arg(long = "discovery-timeout", default_value = "10s", value_parser = duration)]
    #[serde(rename = "discovery_timeout_ns")]
    pub discovery_timeout: u64,
    /// ping/pub/sub: count what happens around a link outage from START_NS to END_NS
    /// (CLOCK_MONOTONIC, e.g. from mwperf-linkem's report): the report's `outage` section.
    #[arg(long = "outage-window", value_parser = window)]
    #[serde(rename = "outage_window_ns", skip_serializing_if = "Option::is_none")]
    pub outage_window: Option<(u64, u64)>,
    /// Topics, each with its own endpoint, sequence numbers, statistics and schedule at --rate.
    #[arg(long, default_value = "1", value_parser = clap::value_parser!(u32).range(1..=MAX_TOPICS as i64))]
    pub topics: u32,
    /// With several topics: each topic's name, once per topic in topic order (default
    /// `topic <i>`): the report's per_topic names and, with --samples, the per-topic files'.
    #[arg(long = "topic-name", value_name = "NAME")]
    #[serde(rename = "topic_names", skip_serializing_if = "Vec::is_empty")]
    pub topic_names: Vec<String>,
    /// TEST ONLY (ground truth for the clock-sync tests): add this drift, in parts per million
    /// (-1000..1000), to every timestamp and sleep of this agent, as a host with a fast or slow
    /// oscillator would. Never use it for a real measurement.
    #[arg(long = "test-clock-drift-ppm", value_parser = drift_ppm, allow_negative_numbers = true)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub test_clock_drift_ppm: Option<f64>,
    /// Count every heap allocation of this process per phase (needs LD_PRELOAD of
    /// libmwperf_alloc.so, built next to this binary): the report's `allocations` section.
    #[arg(long = "count-allocs")]
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub count_allocs: bool,
    /// Mark every measured message with one heap allocation by `mwperf_alloc_sites_marker`, so
    /// that a heap profiler's record of this process (heaptrack: `mwperf run --alloc-sites`) can
    /// be cut at the steady state and divided by its messages exactly; the marker's own
    /// allocations are left out there. Costs one allocation per message.
    #[arg(long = "alloc-site-markers")]
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub alloc_site_markers: bool,
    /// Per-layer latency (docs/layers.md): stamp around this agent's own calls, read the
    /// send/receive system calls that carried each message from libmwperf_layers.so's ring
    /// (LD_PRELOAD, built next to this binary) and write one CSV row per measured message here.
    #[arg(long = "layers-out", value_name = "PATH")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub layers_out: Option<String>,
}

fn drift_ppm(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v.abs() <= 1000.0 => Ok(v),
        _ => Err(format!(
            "'{s}' is not a drift in ppm between -1000 and 1000"
        )),
    }
}

fn socket_addr(s: &str) -> Result<std::net::SocketAddr, String> {
    s.trim()
        .parse()
        .map_err(|_| format!("'{s}' is not IP:PORT (e.g. 10.0.0.1:7999 or [::1]:7999)"))
}

/// Upper bound of --topics (one thread per topic on each side).
pub const MAX_TOPICS: u32 = 64;

/// Upper bound of a pub's --subscribers (each subscriber is a process of its own; the
/// control plane reads it from `mwperf-agent options`).
pub const MAX_SUBSCRIBERS: u32 = 16;

fn key_value(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_string(), v.trim().to_string())),
        _ => Err(format!("'{s}' is not KEY=VALUE")),
    }
}

impl Common {
    /// The transport's open arguments; Err names the flag that is wrong.
    pub fn spec(&self, addr: &str) -> Result<Spec, String> {
        let qos = Qos {
            reliability: Reliability::parse(&self.reliability)
                .map_err(|e| format!("--reliability: {e}"))?,
            history: History::parse(&self.history, self.depth)
                .map_err(|e| format!("--history: {e}"))?,
            durability: Durability::parse(&self.durability)
                .map_err(|e| format!("--durability: {e}"))?,
        };
        Ok(Spec {
            addr: addr.to_string(),
            qos,
            options: self.opt.clone(),
            shared_session: false,
        })
    }
}

/// ping and pub.
#[derive(Args, Debug, Serialize, Clone)]
pub struct SenderArgs {
    #[command(flatten)]
    #[serde(flatten)]
    pub common: Common,
    /// Peer address: host:port (udp, tcp), socket path (uds), or what the pong's READY line printed.
    #[arg(long)]
    pub connect: String,
    /// Messages per second on absolute deadlines; 0 = as fast as possible.
    #[arg(long, default_value = "1000", value_parser = rate, allow_negative_numbers = true)]
    pub rate: f64,
    /// Payload after the 56-byte header: catalogue name (Array1k, Struct256, ...) or bytes.
    #[arg(long, default_value = "Array1k", value_parser = payload_bytes)]
    pub payload: usize,
    /// Measured time after warm-up (10s, 500ms, 2m).
    #[arg(long, default_value = "10s", value_parser = duration)]
    #[serde(rename = "duration_ns")]
    pub duration: u64,
    /// Measured messages instead of a duration.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub count: Option<u64>,
    /// With --duration: measure at least N messages. At a rate the measured phase lasts
    /// max(--duration, N periods); at rate 0 it ends once --duration has passed and N measured
    /// messages were sent, whichever is later (lost ones are not replaced).
    #[arg(long = "min-count", value_name = "N", value_parser = clap::value_parser!(u64).range(1..),
          conflicts_with_all = ["count", "replay_trace"])]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_count: Option<u64>,
    /// Sent and answered but left out of the statistics.
    #[arg(long, default_value = "0s", value_parser = duration)]
    #[serde(rename = "warmup_ns")]
    pub warmup: u64,
    /// Give up when the peer has been silent this long; also the longest wait for the last replies
    /// (all of it over a transport that retransmits: see roles/ping.rs).
    #[arg(long = "peer-timeout", default_value = "2s", value_parser = duration)]
    #[serde(rename = "peer_timeout_ns")]
    pub peer_timeout: u64,
    /// Raw per-message samples as CSV (ping); with several topics one file per topic, PATH with
    /// `.<topic name>` before its extension (see topic_names.rs).
    #[arg(long)]
    pub samples: Option<String>,
    /// pub: subscribers per topic. Middleware fans out natively (the pub waits until discovery
    /// matched this many); udp/tcp/uds: `--connect` lists every subscriber's addresses,
    /// separated by ';', and each message goes to each subscriber in turn (as TCPROS does).
    #[arg(long, default_value = "1", value_parser = clap::value_parser!(u32).range(1..=MAX_SUBSCRIBERS as i64))]
    pub subscribers: u32,
    /// Sleep until deadline − margin, then spin (0 = sleep only).
    #[arg(long = "spin-margin", default_value = "100us", value_parser = duration)]
    #[serde(rename = "spin_margin_ns")]
    pub spin_margin: u64,
    /// pub: answer clock-sync probes of the sub (`sub --clock-peer`) on this UDP IP:PORT, a side
    /// channel beside the transport under test; keeps answering 0.5 s after the last message.
    #[arg(long = "clock-serve", value_parser = socket_addr)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clock_serve: Option<std::net::SocketAddr>,
    /// After the last message and its replies, keep the endpoint open this long without
    /// sending (what an idle session costs on the wire: keep-alives, heartbeats, announcements).
    #[arg(long, default_value = "0s", value_parser = duration)]
    #[serde(rename = "idle_ns")]
    pub idle: u64,
    /// TEST ONLY (ground truth for --count-allocs): allocate and free exactly N heap blocks per
    /// message sent (0-1000). Never use it for a real measurement.
    #[arg(long = "test-allocs-per-msg", value_parser = clap::value_parser!(u32).range(0..=1000))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub test_allocs_per_msg: Option<u32>,
    /// TEST ONLY (ground truth for --layers): spin this long between a message's scheduled time
    /// and the write call, as a slow application would. Never use it for a real measurement.
    #[arg(long = "test-send-delay", value_parser = duration)]
    #[serde(rename = "test_send_delay_ns", skip_serializing_if = "Option::is_none")]
    pub test_send_delay: Option<u64>,
    /// Replay a recording: topic i sends the messages of DIR/topic-<i>.trace (written by
    /// `mwperf run --replay`) at their recorded offsets, their real bytes with the header over
    /// the first 56 (see replay.rs); --rate, --payload and --count then only size buffers.
    #[arg(long = "replay-trace", value_name = "DIR")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replay_trace: Option<String>,
    /// With --replay-trace: start the recording over every SPAN (its length plus one period),
    /// on the same absolute schedule, until --duration has passed.
    #[arg(long = "replay-loop", value_name = "SPAN", value_parser = duration, requires = "replay_trace")]
    #[serde(rename = "replay_loop_ns", skip_serializing_if = "Option::is_none")]
    pub replay_loop: Option<u64>,
    /// pub: a throughput stream (docs/throughput.md): a send the middleware refuses after its
    /// own blocking bound is tried again until it is taken or nothing was taken for
    /// --peer-timeout; the report's `throughput` has the steady state's CPU and the send calls;
    /// payloads larger than 64 KiB carry their full pattern every Nth message only.
    #[arg(long, conflicts_with_all = ["replay_trace"])]
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub throughput: bool,
}

/// pong and sub.
#[derive(Args, Debug, Serialize, Clone)]
pub struct ServerArgs {
    #[command(flatten)]
    #[serde(flatten)]
    pub common: Common,
    /// Address to receive on: host:port (port 0 = any free), socket path (uds), or the
    /// middleware's form (`mwperf-agent transports`); READY prints what the peer passes to --connect.
    #[arg(long)]
    pub listen: String,
    /// Exit after this long without any packet.
    #[arg(long = "idle-timeout", value_parser = duration)]
    #[serde(rename = "idle_timeout_ns")]
    pub idle_timeout: Option<u64>,
    /// sub: keep receiving stragglers this long after the end-of-stream marker.
    #[arg(long, default_value = "200ms", value_parser = duration)]
    #[serde(rename = "linger_ns")]
    pub linger: u64,
    /// Raw per-message samples as CSV (sub); with several topics one file per topic, PATH with
    /// `.<topic name>` before its extension (see topic_names.rs).
    #[arg(long)]
    pub samples: Option<String>,
    /// How callbacks of several topics run: single (one at a time, in arrival order) or multi (one thread per topic).
    #[arg(long, default_value = "single", value_parser = ["single", "multi"])]
    pub executor: String,
    /// CPU work (a spin, not a sleep) of this duration inside every callback, before echoing (pong) or after recording (sub).
    #[arg(long = "busy-loop", default_value = "0s", value_parser = duration, allow_hyphen_values = true)]
    #[serde(rename = "busy_loop_ns")]
    pub busy_loop: u64,
    /// sub: the pub's clock-sync server (`pub --clock-serve`): measure its clock's offset and
    /// drift with probes before, during and after the stream and correct every one-way sample
    /// (one-way latency across two hosts' clocks; the report's measurement.clock_sync).
    #[arg(long = "clock-peer", value_parser = socket_addr)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clock_peer: Option<std::net::SocketAddr>,
    /// sub: a throughput stream's receiver (docs/throughput.md): the report's `throughput` has
    /// the steady state's CPU; payloads larger than 64 KiB are checked in full every Nth message
    /// (the others at both ends), as the pub fills them.
    #[arg(long)]
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub throughput: bool,
    /// sub: measure the arrivals another program's subscriber took and logged (an rclpy node,
    /// `mwperf run --opt client=rclpy`) instead of opening the transport (roles/subscribe.rs
    /// `from_arrivals`).
    #[arg(long, hide = true)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arrivals: Option<String>,
    /// sub --arrivals: why that subscriber stopped before the end-of-stream marker.
    #[arg(long = "arrivals-stopped", hide = true, requires = "arrivals")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arrivals_stopped: Option<String>,
    /// sub --arrivals: that subscriber's peak resident set (its VmHWM before it became this
    /// agent by exec, KiB): the process's peak is the larger of the two.
    #[arg(long = "arrivals-peak-rss-kib", hide = true, requires = "arrivals")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arrivals_peak_rss_kib: Option<u64>,
}

#[cfg(test)]
mod properties {
    use super::key_value;
    use proptest::prelude::*;

    proptest! {
        /// `--opt KEY=VALUE`: the key and value come back trimmed, the value keeps any '='; the
        /// control plane checks the same form first (python/mwperf/config.py `_check_opts`).
        #[test]
        fn opt_key_value_round_trips(key in "[a-z_][a-z0-9_.-]{0,12}", value in "[ -~]{0,16}",
                                     pad in " {0,2}") {
            let text = format!("{pad}{key}{pad}={value}");
            prop_assert_eq!(key_value(&text), Ok((key.clone(), value.trim().to_string())));
        }

        #[test]
        fn opt_without_a_key_is_refused(text in "\\PC{0,16}") {
            match key_value(&text) {
                Ok((k, v)) => {
                    prop_assert!(!k.is_empty() && !k.contains('='));
                    prop_assert!(text.contains('=') && text.trim_start().starts_with(&k));
                    prop_assert_eq!(v.trim(), v.as_str());
                }
                Err(e) => prop_assert!(e.contains("KEY=VALUE")),
            }
        }
    }
}
