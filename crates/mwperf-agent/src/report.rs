//! Building the agent report (schema kind `agent-report`), writing it atomically, and its exit
//! code (0 complete, 3 partial, 1 failed).

use std::process::ExitCode;

use mwperf_core::result::{AgentReport, Conditions, Status, SCHEMA_VERSION};
use mwperf_core::{host::HostFacts, process::ProcessUsage, warnings};

use crate::cli::Common;
use crate::roles::RoleOutcome;

/// Everything in the report besides the role's outcome: which role, when, under which conditions.
pub struct Frame {
    pub role: &'static str,
    pub started_at: String,
    pub start: std::time::Instant,
    pub config: serde_json::Value,
    pub conditions: Conditions,
    /// A pub's clock-sync server counters (`--clock-serve`).
    pub clock_serve: Option<mwperf_core::result::ClockServe>,
    /// With --count-allocs: the process's heap allocations per phase.
    pub allocations: Option<mwperf_core::result::Allocations>,
    /// With --layers-out: what the system-call interposer saw.
    pub layers: Option<mwperf_core::result::LayersAgent>,
}

pub fn build(s: Frame, out: RoleOutcome) -> AgentReport {
    let host = HostFacts::collect();
    let cx = warnings::Context {
        warmup_ns: out.warmup_ns,
        governor: &host.governor,
        cpuidle_driver: &host.cpuidle_driver,
        prevent_cpu_idle: s.conditions.prevent_cpu_idle,
        busy_poll: s.conditions.busy_poll,
        clock_read_overhead_ns: s.conditions.clock_read_overhead_ns,
    };
    let mut warns = warnings::check_conditions(&cx);
    if let Some(m) = &out.measurement {
        warns.extend(warnings::check_measurement(m));
    }
    if let (Some(sched), Some(sent)) = (&out.schedule, out.sent) {
        warns.extend(warnings::check_schedule(sched, sent, cx.busy_poll));
    }
    AgentReport {
        schema_version: SCHEMA_VERSION,
        kind: "agent-report",
        role: s.role,
        tool: mwperf_core::tool(env!("MWPERF_GIT_REV")),
        host,
        config: s.config,
        conditions: s.conditions,
        status: out.status,
        status_reason: out.reason,
        started_at: s.started_at,
        finished_at: mwperf_core::clock::rfc3339_now(),
        process: ProcessUsage::now(s.start.elapsed().as_secs_f64()),
        measurement: out.measurement,
        counters: out.counters,
        sent: out.sent,
        schedule: out.schedule,
        // every endpoint's opening, timed where the role opened them (open.rs, client.rs)
        discovery: out.discovery.map(|d| mwperf_core::result::Discovery {
            open_ns: d.open_ns.or(crate::phases::open_ns()),
            ..d
        }),
        per_topic: out.per_topic,
        outage: out.outage,
        clock_serve: s.clock_serve,
        serving: out.serving,
        throughput: out.throughput,
        allocations: s.allocations,
        layers: s.layers,
        phases: crate::phases::report(),
        warnings: warns,
    }
}

/// Write the report where --json says, print the summary for people unless --quiet (or the
/// report goes to stdout), and give the exit code: 0 complete, 3 partial, 1 failed.
pub fn deliver(rep: &AgentReport, common: &Common) -> ExitCode {
    if let Some(path) = &common.json {
        if let Err(e) = write(rep, path) {
            eprintln!("mwperf-agent: error: --json: cannot write '{path}': {e}");
            return ExitCode::from(1);
        }
    }
    if !common.quiet && common.json.as_deref() != Some("-") {
        print!("{}", crate::human::summary(rep));
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

/// Write the report to `path` ('-' = stdout) atomically (temporary file + rename).
pub fn write(report: &AgentReport, path: &str) -> std::io::Result<()> {
    let text = serde_json::to_string_pretty(report).expect("report serialises");
    if path == "-" {
        println!("{text}");
        return Ok(());
    }
    let tmp = format!("{path}.tmp{}", std::process::id());
    std::fs::write(&tmp, text + "\n")?;
    std::fs::rename(&tmp, path)
}
