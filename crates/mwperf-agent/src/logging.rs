//! `MWPERF_AGENT_LOG=<filter>`: the middleware's own log on stderr, for finding why a peer
//! refuses or never answers (RustDDS's security handshake, zenoh's links). The filter is
//! tracing-subscriber's `EnvFilter` syntax (`rustdds=debug`, `zenoh=info,rustdds=warn`);
//! RustDDS logs through the `log` crate, bridged into the same subscriber, zenoh through
//! `tracing`. Unset (the default), nothing is installed and nothing is logged: a measured run
//! pays no logging cost.

/// The environment variable that turns the middleware's log on (docs/agent-contract.md).
pub const ENV: &str = "MWPERF_AGENT_LOG";

/// Install the stderr logger when [`ENV`] is set; an unparsable filter is a usage error.
pub fn init() -> Result<(), String> {
    let Some(filter) = std::env::var_os(ENV) else {
        return Ok(());
    };
    let filter = filter.to_string_lossy();
    let parsed = tracing_subscriber::EnvFilter::try_new(filter.as_ref())
        .map_err(|e| format!("{ENV}={filter}: not a log filter ({e}); e.g. rustdds=debug"))?;
    // try_init also routes the `log` crate's records (RustDDS's) into this subscriber
    let _ = tracing_subscriber::fmt()
        .with_env_filter(parsed)
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .try_init();
    Ok(())
}
