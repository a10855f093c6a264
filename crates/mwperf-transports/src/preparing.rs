//! The line an agent prints on stderr before first-use work that comes before its READY (a shim
//! compiled against a ROS 2 distribution: tens of seconds on a loaded 2-core machine): the
//! control plane then waits for READY beyond its usual time (python/mwperf/procs.py,
//! `wait_ready`; docs/agent-contract.md, "READY line"). Without it, a first point on a busy
//! machine was stopped mid-compile, and so was every later one: the compiler died with the
//! agent and nothing was cached (CI, 2026-11-30).

/// The prefix of the line (the control plane matches it).
pub const PREFIX: &str = "mwperf-agent: preparing: ";

/// Say on stderr that `what` (first-use work before READY) starts now.
pub fn announce(what: &str) {
    eprintln!("{PREFIX}{what}");
}
