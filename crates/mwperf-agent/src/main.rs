//! mwperf-agent: parse → open the transport → run one role → write the report → exit code
//! (0 complete, 3 partial, 1 failed, 2 usage). See docs/agent-contract.md. The subcommands that
//! measure nothing (listings, router, probe, supervise, facts, pool) are in commands.rs.

mod addresses;
mod allocs;
mod busy;
mod cli;
mod clocksync;
mod collector;
mod commands;
mod cpu_idle;
mod executor;
mod facts;
mod fanout;
mod human;
mod lane;
mod layers;
mod listing;
mod logging;
mod multi;
mod node;
mod open;
mod outgoing;
mod pacer;
mod phases;
mod pooling;
mod probe;
mod probe_ros2;
mod replay;
mod report;
mod roles;
mod router;
mod session;
mod signals;
mod throughput;
mod topic_names;
mod version;
mod wait;

use std::process::ExitCode;

use clap::Parser as _;
use cli::Cli;
use open::Stop;
use session::Session;

fn main() -> ExitCode {
    let code = run();
    mwperf_transports::shutdown(); // its report is out: the middleware stops before exit
    code
}

fn run() -> ExitCode {
    let cli = match parse() {
        Ok(cli) => cli,
        Err(code) => return code,
    };
    if let Err(m) = logging::init() {
        return usage(&m);
    }
    if let Some(code) = commands::run(&cli.role) {
        return code;
    }
    if let cli::Role::Client(a) = &cli.role {
        if let Err(m) = roles::client::check(a) {
            return usage(&m);
        }
    }
    let mut session = match Session::begin(&cli.role) {
        Ok(s) => s,
        Err(m) => return usage(&m),
    };
    let opened = match &cli.role {
        cli::Role::Sub(a) if a.arrivals.is_some() => Ok(roles::subscribe::from_arrivals(
            a,
            a.arrivals.as_deref().expect("matched"),
        )),
        cli::Role::Client(_) | cli::Role::Server(_) => roles::service::open_and_run(&session),
        _ => open::open(&mut session).map(|topics| roles::run(&session, topics)),
    };
    let outcome = match opened {
        Ok(outcome) => outcome,
        Err(Stop::Usage(m)) => return usage(&m),
        Err(Stop::Failed(reason)) => roles::RoleOutcome::failed(reason),
    };
    let code = session.report(outcome);
    roles::release_parked(); // the endpoints the roles kept open until the report was out
    code
}

/// The command line; Err is the exit code of a usage error (2), told in one line.
fn parse() -> Result<Cli, ExitCode> {
    match Cli::try_parse() {
        Ok(c) => Ok(c),
        Err(e) if !e.use_stderr() => e.exit(), // --help, --version
        Err(e) => {
            // One line naming the flag, e.g. "invalid value '-5' for '--rate <RATE>': must be >= 0 ..."
            let text = e.render().to_string();
            let first: Vec<&str> = text
                .lines()
                .take_while(|l| !l.trim().is_empty())
                .map(str::trim)
                .collect();
            Err(usage(first.join(" ").trim_start_matches("error: ")))
        }
    }
}

fn usage(msg: &str) -> ExitCode {
    eprintln!("mwperf-agent: error: {msg}");
    ExitCode::from(2)
}
