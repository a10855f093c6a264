//! `mwperf-agent probe-ros2`: the ROS 2 probe's data plane (mwperf_transports::probe_ros2) with
//! its findings printed for `mwperf probe --ros2` (python/mwperf/probe/ros2.py): a `READY` line,
//! one JSON line per discovery event, one `<unix ns> <index> <size> <stamp|-1>` line per sample
//! (docs/agent-contract.md, "probe-ros2"). Stops after the window or on SIGINT/SIGTERM (still
//! printing its `end` line).

use std::io::{BufWriter, Stdout, Write};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use mwperf_core::clock::unix_now_ns;
use mwperf_transports::ros2probe::{hex, Endpoint, Event, Options, Sink};
use serde_json::{json, Value};

use crate::cli::ProbeRos2Args;
use crate::signals;

pub fn run(args: &ProbeRos2Args) -> ExitCode {
    signals::install();
    let opts = Options {
        domain: args.domain,
        interface: args.interface.clone(),
        range: args.discovery_range,
        static_peers: args.static_peer.clone(),
        cyclonedds_uri: args.cyclonedds_uri.clone(),
        topics: args.topic.clone(),
        reliable: args.reliable,
        depth: args.depth,
        discovery_ns: args.discovery_time,
        duration_ns: args.duration,
    };
    let printer = Arc::new(Printer {
        out: Mutex::new(BufWriter::with_capacity(1 << 16, std::io::stdout())),
    });
    printer.line(&format!(
        "READY probe-ros2 domain={} interface={}",
        args.domain,
        args.interface.as_deref().unwrap_or("default")
    ));
    printer.flush();
    let stop = signals::stopped;
    let r = mwperf_transports::probe_ros2(&opts, &stop, printer.clone());
    printer.flush();
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mwperf-agent: error: probe-ros2: {e}");
            ExitCode::from(if e.is_usage() { 2 } else { 1 })
        }
    }
}

/// Prints lines to stdout, whole lines only, from any thread.
struct Printer {
    out: Mutex<BufWriter<Stdout>>,
}

impl Printer {
    fn line(&self, text: &str) {
        let mut out = self.out.lock().unwrap_or_else(|p| p.into_inner());
        let _ = writeln!(out, "{text}");
    }

    fn flush(&self) {
        let _ = self.out.lock().unwrap_or_else(|p| p.into_inner()).flush();
    }
}

fn endpoint(e: &Endpoint) -> Value {
    let q = &e.qos;
    json!({
        "event": if e.writer { "writer" } else { "reader" },
        "t": unix_now_ns(),
        "guid": hex(&e.guid),
        "participant": hex(&e.participant),
        "topic": e.topic,
        "type": e.type_name,
        "qos": {
            "reliability": q.reliability, "durability": q.durability, "history": q.history,
            "depth": q.depth, "deadline_ns": q.deadline_ns, "liveliness": q.liveliness,
            "lease_ns": q.lease_ns, "lifespan_ns": q.lifespan_ns, "ownership": q.ownership,
            "partitions": q.partitions,
        },
        "alive": e.alive,
    })
}

/// One event's JSON line.
fn event_json(event: &Event) -> Value {
    let t = unix_now_ns();
    match event {
        Event::Participant { guid, alive } => {
            json!({"event": "participant", "t": t, "guid": hex(guid), "alive": alive})
        }
        Event::Endpoint(e) => endpoint(e),
        Event::Nodes { participant, nodes } => json!({
            "event": "nodes", "t": t, "participant": hex(participant),
            "nodes": nodes.iter().map(|n| json!({
                "namespace": n.namespace, "name": n.name,
                "readers": n.readers.iter().map(hex).collect::<Vec<_>>(),
                "writers": n.writers.iter().map(hex).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
        }),
        Event::Subscribed {
            index,
            topic,
            type_name,
            header,
        } => json!({"event": "subscribed", "t": t, "index": index, "topic": topic,
                    "type": type_name, "header": header}),
        Event::SubscribeFailed {
            topic,
            type_name,
            why,
        } => json!({"event": "subscribe-failed", "t": t, "topic": topic, "type": type_name,
                    "why": why}),
        Event::Discovered => json!({"event": "discovered", "t": t}),
        Event::End { taken, lost } => json!({"event": "end", "t": t, "taken": taken,
                                             "lost": lost.iter().sum::<u64>(),
                                             "lost_by_index": lost}),
    }
}

impl Sink for Printer {
    fn event(&self, event: &Event) {
        self.line(&event_json(event).to_string());
        if matches!(event, Event::Discovered | Event::End { .. }) {
            self.flush();
        }
    }

    fn sample(&self, at_ns: u64, index: u32, size: u32, stamp_ns: i64) {
        let mut out = self.out.lock().unwrap_or_else(|p| p.into_inner());
        let _ = writeln!(out, "{at_ns} {index} {size} {stamp_ns}");
    }
}
