//! One measuring run (ping, pong, pub, sub) from its start to its report: what the agent sets up
//! before it opens the transport (allocation counting, the conditions, signals, the CPU idle
//! guard, a pub's clock-sync server) and what the report needs besides the role's outcome.

use std::process::ExitCode;

use mwperf_core::result::Conditions;

use crate::cli::{Common, Role, SenderArgs, ServerArgs};
use crate::roles::RoleOutcome;
use crate::{allocs, clocksync, cpu_idle, open, report, signals, wait};

pub struct Session<'a> {
    pub role: &'a Role,
    pub common: &'a Common,
    /// The role's name in the report: "ping", "pong", "pub" or "sub".
    name: &'static str,
    /// The role's arguments as the report's `config`.
    config: serde_json::Value,
    started_at: String,
    start: std::time::Instant,
    conditions: Conditions,
    pub waiter: wait::Waiter,
    /// The topics' names, samples files and addresses, once opened (open.rs).
    pub plan: open::Plan,
    /// A pub's clock-sync server (`--clock-serve`), once started.
    clock_server: Option<clocksync::server::Server>,
    /// Held until the report is written.
    _idle: cpu_idle::IdleGuard,
}

impl<'a> Session<'a> {
    /// Set up a measuring role; Err is a usage error. Panics on a role that is not a measuring
    /// one (commands.rs serves those).
    pub fn begin(role: &'a Role) -> Result<Session<'a>, String> {
        let (name, common, config) = match role {
            Role::Ping(a) => ("ping", &a.common, serde_json::to_value(a)),
            Role::Pub(a) => ("pub", &a.common, serde_json::to_value(a)),
            Role::Pong(a) => ("pong", &a.common, serde_json::to_value(a)),
            Role::Sub(a) => ("sub", &a.common, serde_json::to_value(a)),
            Role::Client(a) => ("client", &a.sender.common, serde_json::to_value(a)),
            Role::Server(a) => ("server", &a.server.common, serde_json::to_value(a)),
            _ => unreachable!("not a measuring role"),
        };
        if common.count_allocs {
            allocs::enable()?;
        }
        if common.layers_out.is_some() {
            crate::layers::enable();
        }
        if common.alloc_site_markers {
            allocs::enable_markers();
        }
        if let Some(ppm) = common.test_clock_drift_ppm {
            mwperf_core::clock::set_test_drift_ppm(ppm); // TEST ONLY: before any timestamp is taken
        }
        check_clock_sync(role, common)?;
        check_throughput(role, common)?;
        check_arrivals(role, common)?;
        let started_at = mwperf_core::clock::rfc3339_now();
        let mut start = std::time::Instant::now();
        if matches!(role, Role::Sub(a) if a.arrivals.is_some()) {
            // the program that took the arrivals became this agent (exec): its wall time is
            // the process's, as its CPU time (getrusage) is
            start = process_age()
                .and_then(|age| start.checked_sub(age))
                .unwrap_or(start);
        }
        signals::install();
        mwperf_core::clock::tighten_timer_slack();
        let idle = cpu_idle::prevent(common.prevent_cpu_idle);
        let spin = match role {
            Role::Ping(a) | Role::Pub(a) => a.spin_margin,
            Role::Client(a) => a.sender.spin_margin,
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
        Ok(Session {
            role,
            common,
            name,
            config: config.unwrap_or_default(),
            started_at,
            start,
            conditions,
            waiter,
            plan: open::Plan::default(),
            clock_server: None,
            _idle: idle,
        })
    }

    /// A pub's clock-sync server (`--clock-serve`) starts before anything is opened: the sub's
    /// "before" probes are already coming. Err: it could not start (the run fails).
    pub fn serve_clock(&mut self) -> Result<(), String> {
        if let Role::Pub(SenderArgs {
            clock_serve: Some(addr),
            ..
        }) = self.role
        {
            self.clock_server = Some(clocksync::server::Server::start(*addr, self.common.run_id)?);
        }
        Ok(())
    }

    /// Build the report from the role's outcome, write it and give the exit code (report.rs).
    pub fn report(self, outcome: RoleOutcome) -> ExitCode {
        let clock_serve = self
            .clock_server
            .map(|s| s.finish(mwperf_core::clock::now_ns()));
        let allocations = allocs::report(); // the last snapshot: before the report is built
        let layers = crate::layers::finish(self.common.layers_out.as_deref());
        let frame = report::Frame {
            role: self.name,
            started_at: self.started_at,
            start: self.start,
            config: self.config,
            conditions: self.conditions,
            clock_serve,
            allocations,
            layers,
        };
        let mut rep = report::build(frame, outcome);
        if let Role::Sub(a) = self.role {
            // a program that became this agent (exec): its peak is the process's too
            let before = a.arrivals_peak_rss_kib.unwrap_or(0);
            rep.process.max_rss_kib = rep.process.max_rss_kib.max(before);
        }
        report::deliver(&rep, self.common)
    }
}

/// Clock sync is one way and one topic: a ping serves no probes, a pong probes no peer.
/// `--throughput` is a pub's and a sub's, one topic each.
fn check_throughput(role: &Role, common: &Common) -> Result<(), String> {
    let on = match role {
        Role::Ping(a) if a.throughput => return Err(
            "--throughput: only a pub and a sub measure throughput (a ping waits for each echo)"
                .into(),
        ),
        Role::Pong(a) if a.throughput => {
            return Err(
                "--throughput: only a pub and a sub measure throughput (a pong echoes)".into(),
            )
        }
        Role::Pub(a) => a.throughput,
        Role::Sub(a) => a.throughput,
        _ => false,
    };
    if on && common.topics > 1 {
        return Err(format!(
            "--throughput: one topic per stream (got --topics {}); run several points instead",
            common.topics
        ));
    }
    Ok(())
}

/// How long ago this process started, across an exec: /proc/self/stat's start time (clock
/// ticks after boot) against CLOCK_BOOTTIME.
fn process_age() -> Option<std::time::Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let after_name = stat.rsplit_once(')')?.1;
    let ticks: u64 = after_name.split_whitespace().nth(19)?.parse().ok()?; // field 22
                                                                           // SAFETY: sysconf and clock_gettime with a valid out-parameter.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
    if hz <= 0 || unsafe { libc::clock_gettime(libc::CLOCK_BOOTTIME, &mut ts) } != 0 {
        return None;
    }
    let now_ns = ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64;
    let started_ns = ticks * 1_000_000_000 / hz as u64;
    Some(std::time::Duration::from_nanos(
        now_ns.checked_sub(started_ns)?,
    ))
}

/// `--arrivals` (another program's subscriber took the messages): a sub's, one topic, its
/// latencies on this host's clock as taken.
fn check_arrivals(role: &Role, common: &Common) -> Result<(), String> {
    let a = match role {
        Role::Sub(a) | Role::Pong(a) if a.arrivals.is_some() => a,
        _ => return Ok(()),
    };
    let refused = if matches!(role, Role::Pong(_)) {
        Some("a pong (a sub's only)".to_string())
    } else if common.topics > 1 {
        Some(format!("--topics {} (one topic)", common.topics))
    } else if a.clock_peer.is_some() {
        Some("--clock-peer (the arrivals are on this host's clock)".into())
    } else if a.throughput {
        Some("--throughput".into())
    } else {
        None
    };
    refused.map_or(Ok(()), |what| Err(format!("--arrivals: not with {what}")))
}

fn check_clock_sync(role: &Role, common: &Common) -> Result<(), String> {
    match role {
        Role::Ping(a) if a.clock_serve.is_some() => Err(
            "--clock-serve: only a pub serves clock-sync probes (a round trip needs no clock sync)"
                .into(),
        ),
        Role::Pong(a) if a.clock_peer.is_some() => Err(
            "--clock-peer: only a sub probes a peer's clock (a round trip needs no clock sync)"
                .into(),
        ),
        Role::Pub(SenderArgs {
            clock_serve: Some(_),
            ..
        })
        | Role::Sub(ServerArgs {
            clock_peer: Some(_),
            ..
        }) if common.topics > 1 => Err(format!(
            "--clock-serve/--clock-peer: clock sync works with --topics 1 (got --topics {})",
            common.topics
        )),
        _ => Ok(()),
    }
}
