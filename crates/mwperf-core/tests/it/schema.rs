//! The Rust side of the schema contract: every document the agent serialises carries exactly the
//! fields `schema/result.v2.json` requires, no field the schema does not know, and each value of
//! a type the schema allows there (integer, number, string, null, enum values). (The Python
//! tests validate real agent output with a full JSON-Schema validator.)

use mwperf_core::host::HostFacts;
use mwperf_core::process::ProcessUsage;
use mwperf_core::result::*;
use mwperf_core::stats::{LatencyRecorder, SecondSeries, SeqTracker};
use mwperf_core::warnings::Warning;
use serde_json::Value;

fn schema() -> Value {
    serde_json::from_str(include_str!("../../../../schema/result.v2.json")).unwrap()
}

/// Check `doc` against the `$defs` entry `def`, recursing through the references we know:
/// required fields present, no unknown field, and each value of a JSON type (and, for enums and
/// consts, a value) the schema allows.
fn check(schema: &Value, def: &str, doc: &Value, path: &str) {
    let d = &schema["$defs"][def];
    let obj = doc
        .as_object()
        .unwrap_or_else(|| panic!("{path}: not an object"));
    for req in d["required"].as_array().unwrap() {
        assert!(
            obj.contains_key(req.as_str().unwrap()),
            "{path}: missing required field {req}"
        );
    }
    let props = d["properties"].as_object().unwrap();
    for (k, v) in obj {
        let p = props
            .get(k)
            .unwrap_or_else(|| panic!("{path}.{k}: not in the schema"));
        check_type(schema, p, v, &format!("{path}.{k}"));
        let reference = p.get("$ref").and_then(Value::as_str).or_else(|| {
            p.get("oneOf")
                .and_then(|o| o[0].get("$ref"))
                .and_then(Value::as_str)
        });
        if let Some(r) = reference {
            let name = r.trim_start_matches("#/$defs/");
            if schema["$defs"][name].get("properties").is_some() && v.is_object() {
                check(schema, name, v, &format!("{path}.{k}"));
            }
        }
        let items = p
            .get("items")
            .and_then(|i| i.get("$ref"))
            .and_then(Value::as_str);
        if let (Some(r), Some(list)) = (items, v.as_array()) {
            let name = r.trim_start_matches("#/$defs/");
            if schema["$defs"][name].get("properties").is_some() {
                for (i, item) in list.iter().enumerate() {
                    check(schema, name, item, &format!("{path}.{k}[{i}]"));
                }
            }
        }
    }
}

/// The JSON type of `v` as JSON Schema names it.
fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// The JSON types `spec` allows (None: not stated in a form this test reads, e.g. allOf).
fn allowed(schema: &Value, spec: &Value) -> Option<Vec<String>> {
    if let Some(r) = spec.get("$ref").and_then(Value::as_str) {
        return allowed(schema, &schema["$defs"][r.trim_start_matches("#/$defs/")]);
    }
    if let Some(t) = spec.get("type") {
        return Some(match t {
            Value::String(one) => vec![one.clone()],
            Value::Array(many) => many
                .iter()
                .filter_map(|x| x.as_str().map(String::from))
                .collect(),
            _ => return None,
        });
    }
    if let Some(alternatives) = spec
        .get("oneOf")
        .or_else(|| spec.get("anyOf"))
        .and_then(Value::as_array)
    {
        let mut all = Vec::new();
        for alternative in alternatives {
            all.extend(allowed(schema, alternative)?);
        }
        return Some(all);
    }
    if let Some(values) = spec.get("enum").and_then(Value::as_array) {
        return Some(values.iter().map(|x| json_type(x).to_string()).collect());
    }
    spec.get("const").map(|c| vec![json_type(c).to_string()])
}

fn check_type(schema: &Value, spec: &Value, v: &Value, path: &str) {
    let kind = json_type(v);
    if let Some(kinds) = allowed(schema, spec) {
        let fits = kinds
            .iter()
            .any(|k| k == kind || (k == "number" && kind == "integer"));
        assert!(
            fits,
            "{path}: a JSON {kind} ({v}), the schema allows {kinds:?}"
        );
    }
    let spec = match spec.get("$ref").and_then(Value::as_str) {
        Some(r) => &schema["$defs"][r.trim_start_matches("#/$defs/")],
        None => spec,
    };
    if let Some(values) = spec.get("enum").and_then(Value::as_array) {
        assert!(values.contains(v), "{path}: {v} is not one of {values:?}");
    }
    if let Some(c) = spec.get("const") {
        assert_eq!(v, c, "{path}: must be {c}");
    }
}

fn stats() -> Stats {
    let mut r = LatencyRecorder::default();
    r.record(5_000);
    r.record(7_000);
    r.summary()
}

#[test]
fn agent_report_matches_the_schema() {
    let mut series = SecondSeries::new(0);
    series.received_at(10, 5_000);
    let mut seq = SeqTracker::default();
    seq.arrive(0, true);
    let m = Measurement {
        mode: "roundtrip".into(),
        latency_kind: "rtt".into(),
        clock: mwperf_core::clock::CLOCK_NAME.into(),
        payload_bytes: 64,
        message_bytes: 120,
        response: stats(),
        service: stats(),
        jitter_rfc3550_ns: Some(1.0),
        late: Some(Late {
            threshold_ns: 1_000_000,
            count: 0,
            fraction: 0.0,
        }),
        accounting: seq.accounting(1, 0),
        throughput: Throughput {
            duration_s: 1.0,
            msgs_per_s: 1.0,
            payload_bytes_per_s: 64.0,
            message_bytes_per_s: 120.0,
        },
        schedule: Some(Schedule {
            period_ns: 1_000_000,
            lateness: stats(),
            behind_count: 0,
        }),
        series: series.finish(),
        samples_file: None,
        clock_sync: None,
        calls: Some(mwperf_core::result::Calls {
            clients: 2,
            in_flight: 4,
            max_outstanding: 3,
            call_timeout_ns: 1_000_000_000,
            answered: 1,
            timeouts: 1,
            connections: Some(2),
            server: Some(mwperf_core::result::Serving {
                requests: 3,
                answered: 3,
                foreign: 1,
                reply_errors: 0,
                work_ns: 0,
                server_time: stats(),
                connections: None,
            }),
            ..Default::default()
        }),
    };
    let report = AgentReport {
        throughput: None,
        schema_version: SCHEMA_VERSION,
        kind: "agent-report",
        role: "ping",
        tool: mwperf_core::tool("0123456789ab"),
        host: HostFacts::collect(),
        config: serde_json::json!({"transport": "udp"}),
        conditions: Conditions {
            busy_poll: false,
            prevent_cpu_idle: "off",
            spin_margin_ns: 100_000,
            clock_read_overhead_ns: 20.0,
        },
        status: Status::Complete,
        status_reason: None,
        started_at: mwperf_core::clock::rfc3339_now(),
        finished_at: mwperf_core::clock::rfc3339_now(),
        process: ProcessUsage::now(1.0),
        measurement: Some(m.clone()),
        counters: Some(Counters::default()),
        sent: Some(1),
        schedule: None,
        discovery: Some(mwperf_core::result::Discovery {
            open_ns: Some(3),
            matched_ns: 5,
            first_reply_ns: Some(7),
            probes: 1,
        }),
        per_topic: vec![TopicMeasurement {
            topic: 0,
            name: "/scan".into(),
            address: Some("127.0.0.1:7000".into()),
            measurement: m,
        }],
        serving: None,
        outage: Some(mwperf_core::result::OutageCounts {
            start_ns: 10,
            end_ns: 20,
            sent: Some(3),
            delivered: Some(1),
            last_before_ns: Some(9),
            first_after_ns: None,
            series_origin_ns: Some(1),
        }),
        clock_serve: None,
        allocations: Some(Allocations {
            method: "ld-preload",
            setup: AllocPhase {
                count: 10,
                bytes: 1000,
                frees: 4,
            },
            warmup: AllocPhase::default(),
            steady: AllocPhase::default(),
            teardown: AllocPhase {
                count: 3,
                bytes: 30,
                frees: 9,
            },
            total: AllocPhase {
                count: 13,
                bytes: 1030,
                frees: 13,
            },
            steady_messages: 999,
            allocs_per_msg: Some(0.0),
            bytes_per_msg: Some(0.0),
            peak_live_bytes: 4096,
            live_bytes_at_end: 0,
        }),
        layers: Some(mwperf_core::result::LayersAgent {
            interposer: false,
            why: Some("libmwperf_layers.so is not loaded".into()),
            events: 0,
            dropped: 0,
            header_calls: 0,
            rows: 999,
            error: None,
        }),
        phases: Some(Phases {
            setup_done_ns: 1,
            first_send_ns: Some(2),
            measure_start_ns: Some(3),
            last_send_ns: Some(4),
            drained_ns: Some(5),
            idle_end_ns: None,
        }),
        warnings: vec![Warning::new(
            mwperf_core::warning_codes::NO_WARMUP,
            "x",
            Some("y"),
        )],
    };
    let doc = serde_json::to_value(&report).unwrap();
    let s = schema();
    check(&s, "agent_report", &doc, "report");
    check(&s, "allocations", &doc["allocations"], "report.allocations");
    for phase in ["setup", "warmup", "steady", "teardown", "total"] {
        check(
            &s,
            "alloc_phase",
            &doc["allocations"][phase],
            &format!("report.allocations.{phase}"),
        );
    }
    check(&s, "measurement", &doc["measurement"], "report.measurement");
    check(
        &s,
        "series_point",
        &doc["measurement"]["series"][0],
        "report.measurement.series[0]",
    );
    check(&s, "warning", &doc["warnings"][0], "report.warnings[0]");
    check(&s, "outage_counts", &doc["outage"], "report.outage");
    // a per-topic entry is a measurement plus the topic's index, name and address (schema:
    // topic_measurement)
    let mut topic = doc["per_topic"][0].as_object().unwrap().clone();
    assert_eq!(
        (
            topic.remove("topic"),
            topic.remove("name"),
            topic.remove("address")
        ),
        (
            Some(0.into()),
            Some("/scan".into()),
            Some("127.0.0.1:7000".into())
        )
    );
    for key in ["topic", "name", "address"] {
        assert!(
            s["$defs"]["topic_measurement"]["allOf"][1]["properties"]
                .get(key)
                .is_some(),
            "topic_measurement.{key}"
        );
    }
    check(
        &s,
        "measurement",
        &Value::Object(topic),
        "report.per_topic[0]",
    );
    assert_eq!(
        s["$defs"]["agent_report"]["properties"]["per_topic"]["items"]["$ref"],
        "#/$defs/topic_measurement"
    );
    assert_eq!(doc["status"], "complete");
    assert_eq!(
        s["$defs"]["agent_report"]["properties"]["schema_version"]["const"],
        SCHEMA_VERSION
    );
}

/// The type check can fail: a count given as a string, a status outside its enum.
#[test]
fn wrong_types_are_caught() {
    let schema = schema();
    let mut doc = serde_json::to_value(stats()).unwrap();
    check(&schema, "stats", &doc, "$");
    doc["count"] = Value::String("2".into());
    assert!(std::panic::catch_unwind(|| check(&schema, "stats", &doc, "$")).is_err());
    let status = serde_json::json!({"$ref": "#/$defs/status"});
    assert!(std::panic::catch_unwind(|| check_type(
        &schema,
        &status,
        &Value::String("fine".into()),
        "$.status"
    ))
    .is_err());
    check_type(
        &schema,
        &status,
        &Value::String("partial".into()),
        "$.status",
    );
}
