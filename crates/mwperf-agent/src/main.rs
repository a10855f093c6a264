//! mwperf-agent: parse → open the transport → run one role → write the report → exit code
//! (0 complete, 3 partial, 1 failed, 2 usage). See docs/agent-contract.md.

mod addresses;
mod allocs;
mod busy;
mod cli;
mod clocksync;
mod collector;
mod cpu_idle;
mod executor;
mod facts;
mod fanout;
mod human;
mod lane;
mod listing;
mod multi;
mod outgoing;
mod pacer;
mod phases;
mod pooling;
mod probe;
mod replay;
mod report;
mod roles;
mod router;
mod signals;
mod topic_names;
mod version;
mod wait;

use std::io::Write;
use std::process::ExitCode;

use clap::Parser as _;
use cli::{Cli, Common, Role, SenderArgs, ServerArgs};
use mwperf_core::result::{Conditions, Status};
use mwperf_transports::{Side, TransportError};

fn usage(msg: &str) -> ExitCode {
    eprintln!("mwperf-agent: error: {msg}");
    ExitCode::from(2)
}

fn list(json: bool, items: Vec<(String, Option<usize>)>) {
    if json {
        let v: serde_json::Value = if items.iter().all(|(_, n)| n.is_some()) {
            items
                .iter()
                .map(|(k, n)| (k.clone(), serde_json::json!(n)))
                .collect::<serde_json::Map<_, _>>()
                .into()
        } else {
            items
                .iter()
                .map(|(k, _)| k.clone())
                .collect::<Vec<_>>()
                .into()
        };
        println!("{v}");
    } else {
        for (k, n) in items {
            println!("{k}{}", n.map_or(String::new(), |n| format!("\t{n}")));
        }
    }
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) if !e.use_stderr() => e.exit(), // --help, --version
        Err(e) => {
            // One line naming the flag, e.g. "invalid value '-5' for '--rate <RATE>': must be >= 0 ..."
            let text = e.render().to_string();
            let first: Vec<&str> = text
                .lines()
                .take_while(|l| !l.trim().is_empty())
                .map(str::trim)
                .collect();
            return usage(first.join(" ").trim_start_matches("error: "));
        }
    };
    let (role, common, config) = match &cli.role {
        Role::Payloads(a) => {
            list(
                a.json,
                mwperf_core::payload::CATALOGUE
                    .iter()
                    .map(|(k, n)| (k.to_string(), Some(*n)))
                    .collect(),
            );
            return ExitCode::SUCCESS;
        }
        Role::Transports(a) => {
            listing::transports(a.json);
            return ExitCode::SUCCESS;
        }
        Role::Warnings(a) => {
            listing::warnings(a.json);
            return ExitCode::SUCCESS;
        }
        Role::Router(a) => return router::run(a),
        Role::Probe(a) => return probe::run(a),
        Role::Supervise(a) => return mwperf_supervise::run(a),
        Role::SuperviseClean(a) => return mwperf_supervise::clean::run(a),
        Role::SuperviseCgroup(a) => return mwperf_supervise::local::run(a),
        Role::Facts => return facts::run(),
        Role::Pool => return pooling::run(),
        Role::Ping(a) => ("ping", &a.common, serde_json::to_value(a)),
        Role::Pub(a) => ("pub", &a.common, serde_json::to_value(a)),
        Role::Pong(a) => ("pong", &a.common, serde_json::to_value(a)),
        Role::Sub(a) => ("sub", &a.common, serde_json::to_value(a)),
    };
    if common.count_allocs {
        if let Err(m) = allocs::enable() {
            return usage(&m);
        }
    }
    if common.alloc_site_markers {
        allocs::enable_markers();
    }
    if let Some(ppm) = common.test_clock_drift_ppm {
        mwperf_core::clock::set_test_drift_ppm(ppm); // TEST ONLY: before any timestamp is taken
    }
    match &cli.role {
        Role::Ping(a) if a.clock_serve.is_some() => return usage(
            "--clock-serve: only a pub serves clock-sync probes (a round trip needs no clock sync)",
        ),
        Role::Pong(a) if a.clock_peer.is_some() => {
            return usage(
                "--clock-peer: only a sub probes a peer's clock (a round trip needs no clock sync)",
            )
        }
        Role::Pub(SenderArgs {
            clock_serve: Some(_),
            ..
        })
        | Role::Sub(ServerArgs {
            clock_peer: Some(_),
            ..
        }) if common.topics > 1 => {
            return usage(&format!(
                "--clock-serve/--clock-peer: clock sync works with --topics 1 (got --topics {})",
                common.topics
            ))
        }
        _ => {}
    }
    let started_at = mwperf_core::clock::rfc3339_now();
    let start = std::time::Instant::now();
    signals::install();
    mwperf_core::clock::tighten_timer_slack();
    let idle = cpu_idle::prevent(common.prevent_cpu_idle);
    let spin = match &cli.role {
        Role::Ping(a) | Role::Pub(a) => a.spin_margin,
        _ => 0,
    };
    let conditions = Conditions {
        busy_poll: common.busy_poll,
        prevent_cpu_idle: idle.state,
        spin_margin_ns: spin,
        clock_read_overhead_ns: mwperf_core::clock::read_overhead_ns(1001),
    };
    let waiter = wait::Waiter {
        busy_poll: common.busy_poll,
        spin_margin_ns: spin,
    };
    // a pub's clock-sync server starts first: the sub's "before" probes are already coming
    let clock_server = match &cli.role {
        Role::Pub(SenderArgs {
            clock_serve: Some(addr),
            ..
        }) => match clocksync::server::Server::start(*addr, common.run_id) {
            Ok(s) => Some(s),
            Err(e) => {
                return finish(
                    role,
                    common,
                    config.unwrap_or_default(),
                    started_at,
                    start,
                    conditions,
                    roles::RoleOutcome::failed(e),
                    None,
                )
            }
        },
        _ => None,
    };

    let (side, flag, addr, samples) = match &cli.role {
        Role::Ping(a) => (Side::Ping, "--connect", &a.connect, &a.samples),
        Role::Pub(a) => (Side::Pub, "--connect", &a.connect, &a.samples),
        Role::Pong(a) => (Side::Pong, "--listen", &a.listen, &a.samples),
        Role::Sub(a) => (Side::Sub, "--listen", &a.listen, &a.samples),
        _ => unreachable!(),
    };
    let names = match topic_names::names(&common.topic_names, common.topics) {
        Ok(n) => n,
        Err(m) => return usage(&m),
    };
    // with several topics, each its own samples file (PATH.<topic name>.csv)
    let samples = topic_names::samples_paths(samples.as_deref(), &names);
    let subscribers = match &cli.role {
        Role::Ping(a) if a.subscribers > 1 => return usage(&format!("--subscribers {}: only a pub (one way) has several subscribers; a ping measures the round trip to one pong (use --subscribers 1)", a.subscribers)),
        Role::Pub(a) => a.subscribers,
        _ => 1,
    };
    let groups = match addresses::subscribers(common.transport, flag, addr, subscribers) {
        Ok(g) => g,
        Err(m) => return usage(&m),
    };
    // groups[s][t]: subscriber s's address for topic t (one group for middleware and listeners)
    let mut groups_addrs = Vec::new();
    for group in &groups {
        let addrs = match addresses::split(common.transport, flag, group, common.topics) {
            Ok(a) => a,
            Err(m) => return usage(&m),
        };
        if let Err(m) = addresses::distinct(flag, &addresses::fixed(common.transport, &addrs)) {
            return usage(&m);
        }
        groups_addrs.push(addrs);
    }
    let addrs: Vec<String> = (0..common.topics as usize)
        .map(|t| {
            groups_addrs
                .iter()
                .map(|g| g[t].clone())
                .collect::<Vec<_>>()
                .join(";")
        })
        .collect();
    let specs = match groups_addrs
        .iter()
        .map(|g| {
            g.iter()
                .map(|a| common.spec(a))
                .collect::<Result<Vec<_>, _>>()
        })
        .collect::<Result<Vec<_>, _>>()
    {
        Ok(s) => s,
        Err(m) => return usage(&m),
    };
    let size_ok = match &cli.role {
        Role::Ping(a) | Role::Pub(a) => roles::check_size(common.transport, a.payload),
        _ => Ok(()),
    };
    let open_topic = |t: usize| -> Result<Box<dyn mwperf_transports::Endpoint>, TransportError> {
        let mut eps = specs
            .iter()
            .map(|g| mwperf_transports::open(common.transport, side, &g[t]))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(if eps.len() == 1 {
            eps.pop().expect("one subscriber")
        } else {
            Box::new(fanout::FanOut::new(eps))
        })
    };
    let opened = size_ok.map_err(TransportError::Address).and_then(|_| {
        (0..addrs.len())
            .map(open_topic)
            .collect::<Result<Vec<_>, _>>()
    });
    let topics: Result<Vec<multi::Topic>, TransportError> = opened.map(|eps| {
        let names: Vec<String> = if side.is_listener() {
            eps.iter().map(|ep| ep.local_addr()).collect()
        } else {
            addrs.clone()
        };
        eps.into_iter().zip(names).collect()
    });
    if let Ok(t) = &topics {
        let names: Vec<String> = t.iter().map(|(_, n)| n.clone()).collect();
        if let Err(m) = addresses::distinct(flag, &names) {
            return usage(&m);
        }
        if side.is_listener() {
            println!("READY {} {}", common.transport.name(), names.join(","));
            let _ = std::io::stdout().flush();
            allocs::setup_done();
        }
    }
    let outcome = match topics {
        Err(e) if e.is_usage() => return usage(&e.to_string()),
        Err(e) => roles::RoleOutcome::failed(e.to_string()),
        Ok(t) if t.len() > 1 => multi::run(&cli.role, t, &names, &samples, &waiter),
        Ok(mut t) => {
            let (ep, name) = t.pop().expect("one topic");
            match &cli.role {
                Role::Ping(a) => roles::ping::run(a, ep, &name, &waiter, None),
                Role::Pub(a) => roles::publish::run(a, ep, &waiter, None),
                Role::Pong(a) => roles::pong::run(
                    a,
                    ep,
                    executor::Callback {
                        busy_loop_ns: a.busy_loop,
                        ..executor::Callback::PLAIN
                    },
                ),
                Role::Sub(a) => roles::subscribe::run(
                    a,
                    ep,
                    executor::Callback {
                        busy_loop_ns: a.busy_loop,
                        ..executor::Callback::PLAIN
                    },
                ),
                _ => unreachable!(),
            }
        }
    };
    let clock_serve = clock_server.map(|s| s.finish(mwperf_core::clock::now_ns()));
    finish(
        role,
        common,
        config.unwrap_or_default(),
        started_at,
        start,
        conditions,
        outcome,
        clock_serve,
    )
}

#[allow(clippy::too_many_arguments)]
fn finish(
    role: &'static str,
    common: &Common,
    config: serde_json::Value,
    started_at: String,
    start: std::time::Instant,
    conditions: Conditions,
    outcome: roles::RoleOutcome,
    clock_serve: Option<mwperf_core::result::ClockServe>,
) -> ExitCode {
    let allocations = allocs::report(); // the last snapshot: before the report is built
    let session = report::Session {
        role,
        started_at,
        start,
        config,
        conditions,
        clock_serve,
        allocations,
    };
    let rep = report::build(session, outcome);
    if let Some(path) = &common.json {
        if let Err(e) = report::write(&rep, path) {
            eprintln!("mwperf-agent: error: --json: cannot write '{path}': {e}");
            return ExitCode::from(1);
        }
    }
    if !common.quiet && common.json.as_deref() != Some("-") {
        print!("{}", human::summary(&rep));
    }
    match rep.status {
        Status::Complete => ExitCode::SUCCESS,
        Status::Partial => ExitCode::from(3),
        Status::Failed => {
            eprintln!(
                "mwperf-agent: error: {}",
                rep.status_reason.as_deref().unwrap_or("failed")
            );
            ExitCode::from(1)
        }
    }
}
