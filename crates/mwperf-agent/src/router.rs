//! `mwperf-agent router --transport zenoh --listen tcp/127.0.0.1:PORT`: a middleware router run
//! by the agent itself (zenoh's own routing code from the same build), for client-mode runs.
//! Prints `READY <transport>-router <address>` once it listens and exits 0 on SIGINT/SIGTERM.

use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use crate::cli::RouterArgs;
use crate::signals;

/// How often the idle main thread looks at the stop flag.
const STOP_POLL: Duration = Duration::from_millis(50);

pub fn run(args: &RouterArgs) -> ExitCode {
    signals::install();
    let router = match mwperf_transports::router(args.transport, &args.listen, &args.opt) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("mwperf-agent: error: router: {e}");
            return ExitCode::from(if e.is_usage() { 2 } else { 1 });
        }
    };
    println!(
        "READY {}-router {}",
        args.transport.name(),
        router.local_addr()
    );
    let _ = std::io::stdout().flush();
    while !signals::stopped() {
        std::thread::sleep(STOP_POLL);
    }
    drop(router);
    ExitCode::SUCCESS
}
