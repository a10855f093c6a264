//! `mwperf-agent pool`: several finished measurements as one, by the same code that pools an
//! agent's own topics (mwperf_core::stats::pool). The control plane pools the N subscribers of
//! a one-way point with it (python/mwperf/pool.py), so there is one method in one language.
//!
//! Input on stdin: a JSON array of measurements (objects of the agent-report's `measurement`
//! form; other keys, like a topic's `topic` and `name`, are ignored). Output on stdout: the
//! pooled measurement. Bad input: exit 2 with one line saying what was wrong; nothing printed.

use std::io::Read;
use std::process::ExitCode;

use mwperf_core::result::Measurement;
use mwperf_core::stats::pool::pool_measurements;

pub fn run() -> ExitCode {
    let mut text = String::new();
    if let Err(e) = std::io::stdin().read_to_string(&mut text) {
        return crate::usage(&format!("pool: cannot read standard input: {e}"));
    }
    match pool_text(&text) {
        Ok(json) => {
            println!("{json}");
            ExitCode::SUCCESS
        }
        Err(m) => crate::usage(&m),
    }
}

/// The pooled measurement of a JSON array, as JSON; Err = what is wrong with the input.
pub fn pool_text(text: &str) -> Result<String, String> {
    let parts: Vec<Measurement> = serde_json::from_str(text)
        .map_err(|e| format!("pool: standard input is not a JSON array of measurements ({e})"))?;
    if parts.is_empty() {
        return Err("pool: the array is empty; give at least one measurement".into());
    }
    let refs: Vec<&Measurement> = parts.iter().collect();
    serde_json::to_string(&pool_measurements(&refs)).map_err(|e| format!("pool: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_input_is_named() {
        assert!(pool_text("{}").unwrap_err().contains("not a JSON array"));
        assert!(pool_text("[]").unwrap_err().contains("empty"));
        assert!(pool_text("[{\"mode\": 1}]")
            .unwrap_err()
            .contains("not a JSON array of measurements"));
    }
}
