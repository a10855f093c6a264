//! mwperf-core: everything the agents share that does not depend on a middleware — the wire
//! header, clocks, the absolute-deadline scheduler, the payload catalogue, streaming statistics
//! and the result document (schema/result.v2.json).

pub mod base64;
pub mod clock;
pub mod clocksync;
pub mod host;
pub mod payload;
pub mod process;
pub mod result;
pub mod schedule;
pub mod stats;
pub mod units;
pub mod warning_codes;
pub mod warnings;
pub mod wire;

/// Crate version and the git revision the binary was built from (the agent's build script
/// records it: only the final crate carries it, so a commit does not rebuild the libraries).
pub fn tool(git_rev: &str) -> result::Tool {
    result::Tool {
        name: "mwperf",
        version: env!("CARGO_PKG_VERSION"),
        git_rev: git_rev.to_string(),
    }
}
