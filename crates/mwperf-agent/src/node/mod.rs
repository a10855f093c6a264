//! The `node` role: one node of a graph (docs/agent-contract.md, "node"). It opens an endpoint
//! per subscription and per publisher address, all in one middleware session (one DDS
//! participant, iceoryx2 node, zenoh session...: `Spec::shared_session`, where the transport's
//! descriptor says `node_session`), as a ROS node's entities share its participant; waits until its publishers see a subscriber,
//! prints `READY node <name>`, then waits for the go file (`--go-file`: the control plane writes
//! there the CLOCK_MONOTONIC instant every node starts at, so all schedules are aligned),
//! publishes each topic on its own absolute schedule for the warm-up and the duration, receives
//! until the linger ends, and writes its report: per subscription one edge per publishing node,
//! per publisher what it sent, its discovery time and its process's CPU and memory.

mod await_graph;
pub mod clock;
pub mod collect;
pub mod echo;
pub mod end_of_stream;
mod event_loop;
mod process;
pub mod publisher;
pub mod reopen;
pub mod round_trip;
pub mod service_client;
pub mod service_server;
mod services;
pub mod spec;
pub mod subscription;

use std::net::SocketAddr;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mwperf_core::clock::{now_ns, sleep_until_ns};
use mwperf_core::process::ProcessUsage;
use mwperf_transports::{open, Endpoint, Side};
use serde::Serialize;

use crate::cli::Common;
use clock::NodeClock;
use publisher::{Schedule, Sent, Timer};
use round_trip::RoundTrip;
use service_client::{CallSchedule, Caller, CallerReport};
use service_server::{ServeContext, ServedReport, Servers};
use spec::{NodeSpec, Outlet};
use subscription::{NodeContext, Subscription, SubscriptionReport, Window};

#[derive(Serialize, Debug)]
pub struct NodeReport {
    pub role: &'static str,
    pub name: String,
    pub index: u32,
    pub status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status_reason: Option<String>,
    /// from the start of this process until its publishers had matched (READY)
    pub discovery_ns: u64,
    /// CLOCK_MONOTONIC of `go`: the publishers' schedules start here
    pub go_ns: Option<u64>,
    /// middleware sessions (DDS participants, iceoryx2 nodes, zenoh sessions...) the node's
    /// endpoints shared at READY: 1 where the transport shares one per node (its descriptor's
    /// `node_session`), 0 where every endpoint has its own or there is none (sockets)
    pub sessions: u64,
    pub publishers: Vec<Sent>,
    pub subscriptions: Vec<SubscriptionReport>,
    /// the services it serves (graph file `servers:`)
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub servers: Vec<ServedReport>,
    /// the services it calls (graph file `clients:`)
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub clients: Vec<CallerReport>,
    pub process: ProcessUsage,
    /// across hosts: this node's clock against the graph's reference (node/clock.rs)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clock: Option<clock::NodeClockReport>,
    /// `--count-allocs`: this process's heap allocations per phase; a message is one measured
    /// message sent or received (allocs.rs)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allocations: Option<mwperf_core::result::Allocations>,
    /// `--layers-out`: what the system-call interposer saw (the rows are in that file)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub layers: Option<mwperf_core::result::LayersAgent>,
}

/// How long a publisher waits before opening again (its peer does not listen yet).
const RETRY: Duration = Duration::from_millis(20);

/// How often the go file is looked for.
const GO_POLL: Duration = Duration::from_millis(20);

/// Where the middleware counts its matched readers, wait until every subscriber node of the
/// topic is among them (READY then means the whole graph can hear this publisher).
fn wait_all_matched(ep: &mut dyn Endpoint, outlet: &Outlet, deadline: u64) -> Result<(), String> {
    loop {
        match ep.matched_subscribers() {
            Some(n) if n < outlet.subscribers as u64 => {
                if now_ns() >= deadline {
                    return Err(format!(
                        "discovery: '{}' matched {n} of its {} subscribers (--discovery-timeout)",
                        outlet.topic, outlet.subscribers
                    ));
                }
                std::thread::sleep(RETRY);
            }
            _ => return Ok(()),
        }
    }
}

/// Wait for the go file and read its start instant; None when stopped first.
fn wait_go(path: &str) -> Result<Option<u64>, String> {
    loop {
        if crate::signals::stopped() {
            return Ok(None);
        }
        match std::fs::read_to_string(path) {
            Ok(text) if text.ends_with('\n') => {
                return text.trim().parse().map(Some).map_err(|_| {
                    format!(
                        "--go-file {path}: '{}' is not a CLOCK_MONOTONIC instant in ns",
                        text.trim()
                    )
                })
            }
            _ => std::thread::sleep(GO_POLL),
        }
    }
}

/// Run the node; Err is a failure before the measurement (the control plane shows it).
pub fn run(
    common: &Common,
    spec: &NodeSpec,
    go_file: &str,
    spin_margin_ns: u64,
    clocks: (Option<SocketAddr>, Option<SocketAddr>),
) -> Result<NodeReport, String> {
    let started = now_ns();
    let run_id = common.run_id.unwrap_or(0);
    // first: a prober's first burst runs while the endpoints discover each other
    let clock = NodeClock::start(clocks.0, clocks.1, common.run_id, common.discovery_timeout)?;
    let base = common.spec("")?.qos;
    let spec_at =
        |addr: &str, qos: &spec::QosOverride| -> Result<mwperf_transports::Spec, String> {
            let mut s = common.spec(addr)?;
            s.qos = qos.apply(&base)?;
            s.shared_session = true;
            Ok(s)
        };
    let open_at =
        |side: Side, addr: &str, qos: &spec::QosOverride| -> Result<Box<dyn Endpoint>, String> {
            let s = spec_at(addr, qos)?;
            open(common.transport, side, &s).map_err(|e| format!("{addr}: {e}"))
        };
    // spec reopen: an outlet's endpoints opened again when their connection or broker went
    // away (a node or daemon at the other end restarted)
    let reopen = |o: &Outlet| -> Result<Option<reopen::Reopen>, String> {
        if !spec.reopen {
            return Ok(None);
        }
        let specs = o
            .addresses
            .iter()
            .map(|a| spec_at(a, &o.qos))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Some(reopen::Reopen::new(
            common.transport,
            Side::Pub,
            specs,
        )))
    };
    // subscriptions first: a publisher waits for them (on plain sockets they must listen)
    let mut subs = Vec::new();
    for s in &spec.subscriptions {
        if let Some(dir) = s
            .samples
            .as_deref()
            .map(std::path::Path::new)
            .and_then(|p| p.parent())
        {
            if !dir.as_os_str().is_empty() && !dir.is_dir() {
                return Err(format!(
                    "subscription of '{}': samples: no directory {}",
                    s.topic,
                    dir.display()
                ));
            }
        }
        // an echo outlet answers on the endpoint it receives on: a pong's
        let side = if s.echo { Side::Pong } else { Side::Sub };
        let ep = open_at(side, &s.address, &s.qos)
            .map_err(|e| format!("subscription of '{}': {e}", s.topic))?;
        subs.push(ep);
    }
    let executor = (spec.executor == "single").then(|| Arc::new(Mutex::new(())));
    // servers answer from now on: other nodes' clients make first contact before READY
    let servers = services::open_servers(common, spec, &base)?;
    let servers = Servers::start(
        &spec.servers,
        servers,
        &ServeContext {
            run_id,
            executor: executor.clone(),
            busy_poll: common.busy_poll,
            end_ns: Arc::new(AtomicU64::new(u64::MAX)),
        },
    );
    // a publisher on a connecting transport (uds, tcp) may start before the node it sends
    // to listens: it tries again until the discovery timeout
    let deadline = started + common.discovery_timeout;
    let outlet = |o: &Outlet, side: Side| -> Result<Vec<Box<dyn Endpoint>>, String> {
        o.addresses
            .iter()
            .map(|a| loop {
                match open_at(side, a, &o.qos) {
                    Ok(ep) => break Ok(ep),
                    Err(_) if now_ns() < deadline && !crate::signals::stopped() => {
                        std::thread::sleep(RETRY);
                    }
                    Err(e) => break Err(format!("publisher of '{}': {e}", o.topic)),
                }
            })
            .collect()
    };
    let mut pubs = Vec::new();
    for p in &spec.publishers {
        // a round trip's echoes come back on the endpoint it sends on: a ping's
        let side = if p.round_trip { Side::Ping } else { Side::Pub };
        pubs.push(outlet(&p.out, side)?);
    }
    let mut stages = Vec::new();
    for s in &spec.subscriptions {
        stages.push(match &s.publish {
            Some(o) => outlet(o, Side::Pub)?,
            None => Vec::new(),
        });
    }
    let outlets = spec
        .publishers
        .iter()
        .map(|p| &p.out)
        .zip(pubs.iter_mut())
        .chain(
            spec.subscriptions
                .iter()
                .zip(stages.iter_mut())
                .filter_map(|(s, eps)| s.publish.as_ref().map(|o| (o, eps))),
        );
    for (outlet, eps) in outlets {
        for ep in eps.iter_mut() {
            ep.wait_matched(common.discovery_timeout)
                .map_err(|e| format!("discovery: {e}"))?;
            wait_all_matched(ep.as_mut(), outlet, deadline)?;
        }
    }
    if !spec.await_graph.is_empty() {
        // any endpoint of this node sees the graph (one participant)
        if let Some(ep) = pubs
            .iter_mut()
            .chain(stages.iter_mut())
            .flatten()
            .chain(subs.iter_mut())
            .next()
        {
            await_graph::wait(ep.as_mut(), &spec.await_graph, deadline)?;
        }
    }
    for (s, ep) in spec.subscriptions.iter().zip(subs.iter_mut()) {
        if s.await_publishers > 0 {
            await_graph::wait_publishers(ep.as_mut(), s.await_publishers, deadline);
        }
    }
    let mut contacts = services::open_clients(common, spec, &base, run_id, deadline)?;
    let discovery_ns = now_ns() - started;
    let sessions = mwperf_transports::shared_sessions(common.transport) as u64;
    crate::allocs::setup_done();
    println!("READY node {}", spec.name);
    let Some(go_ns) = wait_go(go_file)? else {
        return Err("stopped by signal before the graph started".to_string());
    };
    let go_ns = clock.local_go(go_ns); // the go file names the reference clock's instant
    while now_ns() < go_ns && !crate::signals::stopped() {
        sleep_until_ns(go_ns);
    }
    let measure_end_ns = go_ns + spec.warmup_ns + spec.measured_ns();
    let node = NodeContext {
        run_id,
        source: spec.index,
        executor: executor.as_deref(),
        busy_poll: common.busy_poll,
    };
    let callers: Vec<Caller> = spec
        .clients
        .iter()
        .zip(contacts.drain(..))
        .map(|(c, (client, contact))| {
            let at = CallSchedule {
                start_ns: go_ns + c.phase_ns % c.period_ns,
                warmup_end_ns: go_ns + spec.warmup_ns,
                end_ns: measure_end_ns,
                spin_margin_ns,
                call_until_ns: measure_end_ns + spec.linger_ns / 2,
                drain_until_ns: measure_end_ns + spec.linger_ns,
            };
            Caller::new(c.clone(), client, contact, at)
        })
        .collect();
    // a round-trip publisher's transport resends what was lost: its last replies are awaited
    // longer (node/round_trip.rs)
    let mut retransmits = Vec::new();
    for p in &spec.publishers {
        let asked = p.out.qos.apply(&base)?.reliability;
        retransmits.push(common.transport.descriptor().retransmits(asked));
    }
    // a node --restart may kill: each outlet's counts in a file of its own (publisher.rs
    // Progress), created afresh by each process (the control plane moved the killed one's)
    let progress = |outlet: &str| -> Result<Option<publisher::Progress>, String> {
        spec.progress
            .as_deref()
            .map(|base| publisher::Progress::create(&format!("{base}.{outlet}")))
            .transpose()
    };
    let timers: Vec<Timer> = spec
        .publishers
        .iter()
        .zip(pubs)
        .enumerate()
        .map(|(i, (p, eps))| {
            let at = Schedule {
                start_ns: go_ns + p.phase_ns.checked_rem(p.period_ns).unwrap_or(0),
                warmup_end_ns: go_ns + spec.warmup_ns,
                end_ns: measure_end_ns,
                spin_margin_ns,
                open_until_ns: measure_end_ns + spec.linger_ns,
            };
            Ok(Timer::new(
                &p.out.topic,
                p.out.id,
                p.out.payload_bytes.unwrap_or(0),
                p.period_ns,
                p.offsets_ns.clone(),
                eps,
                at,
            )
            .with_sizes(p.payload_sizes.clone())
            .with_end_marker(p.end_marker)
            .with_progress(progress(&format!("p{i}"))?)
            .with_reopen(reopen(&p.out)?)
            .resumed(spec.resume.then(now_ns)))
        })
        .collect::<Result<_, String>>()?;
    let window = || Window {
        measure_end_ns,
        stage_end_ns: measure_end_ns + spec.linger_ns / 2,
        end_ns: measure_end_ns + spec.linger_ns,
    };
    let subscriptions: Vec<Subscription<'_>> = spec
        .subscriptions
        .iter()
        .zip(subs)
        .zip(stages)
        .enumerate()
        .map(|(j, ((s, ep), out))| {
            let (stage, again) = match &s.publish {
                Some(o) => (progress(&format!("s{j}"))?, reopen(o)?),
                None => (None, None),
            };
            let own = if spec.reopen {
                let at = spec_at(&s.address, &s.qos)?;
                let side = if s.echo { Side::Pong } else { Side::Sub };
                Some(reopen::ReopenSub::new(common.transport, side, at))
            } else {
                None
            };
            Ok(Subscription::new(s, Some(ep), out)
                .restartable(spec.progress.is_some(), stage)
                .with_reopen(again, own))
        })
        .collect::<Result<_, String>>()?;
    let services = !spec.clients.is_empty() || !spec.servers.is_empty();
    // a round-trip publisher receives its echoes between its sends on a thread of its own, as
    // ping (node/round_trip.rs)
    let mut round_trips = Vec::new();
    let mut others = Vec::new();
    for ((t, p), retransmits) in timers.into_iter().zip(&spec.publishers).zip(retransmits) {
        if p.round_trip {
            let rt = RoundTrip::new(
                go_ns + spec.warmup_ns,
                p.period_ns,
                p.reply_timeout_ns,
                retransmits,
            );
            round_trips.push((t, rt, p.out.payload_bytes.unwrap_or(0)));
        } else {
            others.push(t);
        }
    }
    // a saturating publisher (period 0) is a loop on a thread of its own, never in the
    // single-threaded loop: it would leave the subscription no turn (publisher.rs)
    let (timers, floods): (Vec<Timer>, Vec<Timer>) =
        others.into_iter().partition(|t| !t.saturating());
    // a transport's own timers (--opt timer=rcl) are waited for by each publisher's thread,
    // which fires holding the node's executor as a timer callback does
    let own_timers = timers.iter().any(Timer::own_timer);
    let (sent, received, called) = std::thread::scope(|scope| {
        let node = &node;
        let floods: Vec<_> = floods
            .into_iter()
            .map(|t| scope.spawn(move || publisher::run(t, node)))
            .collect();
        let round_trips: Vec<_> = round_trips
            .into_iter()
            .map(|(t, rt, bytes)| scope.spawn(move || round_trip::run(t, rt, node, bytes)))
            .collect();
        let (mut sent, received, called) =
            if executor.is_some() && subscriptions.len() == 1 && !services && !own_timers {
                // single-threaded with one subscription: timers and callback on one thread, as
                // rclcpp
                let sub = subscriptions.into_iter().next().expect("one subscription");
                let (sent, report) = event_loop::run(timers, sub, node, window());
                (sent, vec![report], Vec::new())
            } else {
                let publishers: Vec<_> = timers
                    .into_iter()
                    .map(|t| scope.spawn(move || publisher::run(t, node)))
                    .collect();
                let subscriptions: Vec<_> = subscriptions
                    .into_iter()
                    .map(|sub| scope.spawn(move || subscription::drive(sub, node, window())))
                    .collect();
                let clients: Vec<_> = callers
                    .into_iter()
                    .map(|c| scope.spawn(move || service_client::run(c, node)))
                    .collect();
                (
                    publishers
                        .into_iter()
                        .map(|h| h.join().expect("publisher thread"))
                        .collect::<Vec<_>>(),
                    subscriptions
                        .into_iter()
                        .map(|h| h.join().expect("subscription thread"))
                        .collect::<Vec<_>>(),
                    clients
                        .into_iter()
                        .map(|h| h.join().expect("client thread"))
                        .collect::<Vec<_>>(),
                )
            };
        sent.extend(
            floods
                .into_iter()
                .chain(round_trips)
                .map(|h| h.join().expect("publisher thread")),
        );
        (sent, received, called)
    });
    let stopped = crate::signals::stopped();
    // the reference serves until the others' last probes (their end), unless stopped
    let end_ns = if stopped {
        now_ns()
    } else {
        measure_end_ns + spec.linger_ns
    };
    let served = servers.finish(end_ns);
    // every book was handed over when its publisher or subscription ended (the scope above)
    let layers = crate::layers::finish_node(common.layers_out.as_deref(), clock::stamp);
    let clock = clock.finish(go_ns, end_ns);
    Ok(NodeReport {
        role: "node",
        name: spec.name.clone(),
        index: spec.index,
        status: if stopped { "partial" } else { "complete" },
        status_reason: stopped.then(|| "stopped by signal".to_string()),
        discovery_ns,
        go_ns: Some(go_ns),
        sessions,
        publishers: sent,
        subscriptions: received,
        servers: served,
        clients: called,
        process: ProcessUsage::now((now_ns() - started) as f64 / 1e9),
        clock,
        allocations: crate::allocs::report(),
        layers,
    })
}

/// Closes the sessions [`mwperf_transports::hold_shared_sessions`] kept open, when dropped: at
/// most [`RELEASE_LIMIT`] after the report; a close that does not return by then (inside the
/// RMW) is said on stderr and the process exits without it, with the code main chose
/// (`exit_code`, 1 until main sets it): what was measured is saved, and a node hung in its
/// close was stopped by the graph's deadline and counted partial (a ros2 monitor node, 1 run in
/// ~14 of tests/test_graph_command_e2e.py's two programs, all of its figures saved).
struct ReleaseHeld {
    exit_code: u8,
}

/// How long closing the held sessions may take after the report is written.
const RELEASE_LIMIT: Duration = Duration::from_secs(2);

impl Drop for ReleaseHeld {
    fn drop(&mut self) {
        let (done, wait) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            mwperf_transports::release_held_sessions();
            let _ = done.send(());
        });
        if wait.recv_timeout(RELEASE_LIMIT).is_err() {
            use std::io::Write;
            eprintln!(
                "mwperf-agent: closing the middleware did not return within {} s of the report: \
                 exiting without it",
                RELEASE_LIMIT.as_secs()
            );
            let _ = std::io::stdout().flush();
            let _ = std::io::stderr().flush();
            // SAFETY: ends the process at once; the report is written and flushed.
            unsafe { libc::_exit(i32::from(self.exit_code)) };
        }
    }
}

/// `mwperf-agent node`: read the spec(s), run each node (several: on threads of one process,
/// node/process.rs), write each report; the exit code (the worst node's).
pub fn main(args: &crate::cli::NodeArgs) -> std::process::ExitCode {
    use std::process::ExitCode;
    let nodes = match process::read(args) {
        Ok(n) => n,
        Err(e) => {
            eprintln!("mwperf-agent: error: {e}");
            return ExitCode::from(2);
        }
    };
    crate::signals::install();
    if let Some(ppm) = args.common.test_clock_drift_ppm {
        mwperf_core::clock::set_test_drift_ppm(ppm); // TEST ONLY: before any timestamp is taken
    }
    if args.common.count_allocs {
        if let Err(e) = crate::allocs::enable() {
            eprintln!("mwperf-agent: error: {e}");
            return ExitCode::from(2);
        }
    }
    if args.common.layers_out.is_some() {
        crate::layers::enable(); // the interposer missing is reported, not fatal
    }
    if args.common.alloc_site_markers {
        crate::allocs::enable_markers(); // each measured message sent or received: a marker
    }
    let clocks = (args.clock_serve, args.clock_ref);
    // the node's ROS 2 nodes close after its report is written (closing one can hang in the
    // RMW: what was measured is saved first)
    mwperf_transports::hold_shared_sessions();
    let mut release = ReleaseHeld { exit_code: 1 }; // on every way out of main, after the report
    let outcomes = process::run_all(&nodes, |spec| {
        run(&args.common, spec, &args.go_file, args.spin_margin, clocks)
    });
    let mut code = 0u8;
    for ((spec, path), outcome) in nodes.iter().zip(outcomes) {
        let node_code = match outcome {
            Ok(report) => write_report(&report, path.as_deref(), args.common.quiet),
            Err(e) => {
                eprintln!("mwperf-agent: node {}: {e}", spec.name);
                1
            }
        };
        code = process::worse(code, node_code);
    }
    release.exit_code = code;
    ExitCode::from(code)
}

/// Write `report` where `--json`/`--node-json` said; its exit code: 0 complete, 3 partial, 1
/// when it could not be written.
fn write_report(report: &NodeReport, path: Option<&str>, quiet: bool) -> u8 {
    let text = match serde_json::to_string(report) {
        Ok(t) => t,
        Err(e) => {
            eprintln!(
                "mwperf-agent: node {}: cannot write the report: {e}",
                report.name
            );
            return 1;
        }
    };
    match path {
        Some("-") => println!("{text}"),
        Some(path) => {
            if let Err(e) = std::fs::write(path, text) {
                eprintln!("mwperf-agent: node {}: --json {path}: {e}", report.name);
                return 1;
            }
        }
        None => {}
    }
    if !quiet {
        eprintln!(
            "node {}: {} publishers, {} subscriptions, {}",
            report.name,
            report.publishers.len(),
            report.subscriptions.len(),
            report.status
        );
    }
    if report.status == "complete" {
        0
    } else {
        3
    }
}
