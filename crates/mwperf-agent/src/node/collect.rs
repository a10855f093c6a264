//! `mwperf-agent node-collect`: the report of a graph node that ran in another program (an
//! rclpy node, python/mwperf/ros2/node.py), made by the collectors this agent's own nodes use,
//! so its edges are measured, counted and summarised exactly as an agent node's are.
//!
//! The program writes two files: `--sent` (JSON: the node-report's fields but `subscriptions`,
//! plus `stages`: each subscription's chain-stage outlet as it counted it, or null) and `--log`
//! (every message its callbacks took, in the order taken, each record little-endian: u32 the
//! subscription's index in the spec, u64 its receive instant (CLOCK_MONOTONIC ns, taken when
//! the callback started), u64 when its chain stage sent the next message (0: none), u32 the
//! message's length, then the message as it arrived: mwperf's header and payload).

use std::process::ExitCode;

use super::publisher::Sent;
use super::spec::NodeSpec;
use super::subscription::{Subscription, Window};

/// One record's fixed part: index, receive instant, stage send instant, length.
const RECORD: usize = 4 + 8 + 8 + 4;

/// One record of a log: where it starts, the subscription's index, the receive instant, the
/// stage's send instant (0: none) and the message as it arrived.
pub struct Record<'a> {
    pub at: usize,
    pub index: usize,
    pub recv_ns: u64,
    pub stage_ns: u64,
    pub msg: &'a [u8],
}

/// The records of `log` in order; an Err names the byte where one was cut short (and ends it).
/// A stream's sub reads the same format (`sub --arrivals`, roles/subscribe.rs).
pub fn records(log: &[u8]) -> impl Iterator<Item = Result<Record<'_>, String>> {
    let mut at = 0;
    std::iter::from_fn(move || {
        if at >= log.len() {
            return None;
        }
        let start = at;
        let Some(fixed) = log.get(at..at + RECORD) else {
            at = log.len();
            return Some(Err(format!("a record cut short at byte {start}")));
        };
        let len = u32::from_le_bytes(fixed[20..24].try_into().unwrap()) as usize;
        let Some(msg) = log.get(at + RECORD..at + RECORD + len) else {
            at = log.len();
            return Some(Err(format!("a message cut short at byte {start}")));
        };
        at += RECORD + len;
        Some(Ok(Record {
            at: start,
            index: u32::from_le_bytes(fixed[0..4].try_into().unwrap()) as usize,
            recv_ns: u64::from_le_bytes(fixed[4..12].try_into().unwrap()),
            stage_ns: u64::from_le_bytes(fixed[12..20].try_into().unwrap()),
            msg,
        }))
    })
}

/// The node-report from the spec, the program's counts (`sent`) and its log.
pub fn collect(spec: &NodeSpec, sent: &str, log: &[u8], run_id: u32) -> Result<String, String> {
    let mut report: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(sent).map_err(|e| format!("--sent: {e}"))?;
    let stages: Vec<Option<Sent>> = match report.remove("stages") {
        Some(v) => serde_json::from_value(v).map_err(|e| format!("--sent: stages: {e}"))?,
        None => Vec::new(),
    };
    let go_ns = report.get("go_ns").and_then(|v| v.as_u64()).unwrap_or(0);
    let measure_end_ns = go_ns + spec.warmup_ns + spec.measured_ns();
    let mut subs: Vec<Subscription<'_>> = spec
        .subscriptions
        .iter()
        .map(|s| Subscription::new(s, None, Vec::new()))
        .collect();
    for (sub, stage) in subs.iter_mut().zip(stages) {
        if let Some(s) = stage {
            sub.set_stage_sent(s);
        }
    }
    for record in records(log) {
        let r = record.map_err(|e| format!("--log: {e}"))?;
        let Some(sub) = subs.get_mut(r.index) else {
            return Err(format!(
                "--log: subscription {} at byte {}; the spec has {}",
                r.index,
                r.at,
                spec.subscriptions.len()
            ));
        };
        sub.replay(
            r.msg,
            r.recv_ns,
            (r.stage_ns != 0).then_some(r.stage_ns),
            run_id,
        );
    }
    let window = Window {
        measure_end_ns,
        stage_end_ns: measure_end_ns + spec.linger_ns / 2,
        end_ns: measure_end_ns + spec.linger_ns,
    };
    let received: Vec<_> = subs.into_iter().map(|s| s.finish(&window)).collect();
    report.insert(
        "subscriptions".into(),
        serde_json::to_value(received).map_err(|e| e.to_string())?,
    );
    serde_json::to_string(&report).map_err(|e| e.to_string())
}

/// `mwperf-agent node-collect`: read, collect, write the report; the exit code.
pub fn main(args: &crate::cli::NodeCollectArgs) -> ExitCode {
    let spec = match NodeSpec::read(&args.node_spec) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("mwperf-agent: error: {e}");
            return ExitCode::from(2);
        }
    };
    let read =
        |path: &str, flag: &str| std::fs::read(path).map_err(|e| format!("{flag} {path}: {e}"));
    let done = read(&args.sent, "--sent")
        .and_then(|sent| String::from_utf8(sent).map_err(|e| format!("--sent: {e}")))
        .and_then(|sent| Ok((sent, read(&args.log, "--log")?)))
        .and_then(|(sent, log)| collect(&spec, &sent, &log, args.run_id))
        .and_then(|text| {
            std::fs::write(&args.json, text).map_err(|e| format!("--json {}: {e}", args.json))
        });
    match done {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mwperf-agent: node-collect {}: {e}", spec.name);
            ExitCode::from(1)
        }
    }
}
