//! The listings: `mwperf-agent payloads`, `warnings`, `transports` and `options` (each
//! `[--json]`).
//! `transports` gives every transport's descriptor (crates/mwperf-transports, descriptor.rs),
//! built into this binary or not. The JSON keeps the first keys readers relied on (`name`,
//! `built`, `daemon`, `address`, `description`) and adds the rest of the descriptor.

use mwperf_transports::{Descriptor, Kind};

/// One transport as the JSON listing shows it.
pub fn transport_json(kind: Kind) -> serde_json::Value {
    let d: &Descriptor = kind.descriptor();
    let opts: serde_json::Map<_, _> = d
        .opts
        .iter()
        .map(|o| (o.key.to_string(), serde_json::json!(o.help)))
        .collect();
    serde_json::json!({
        "name": d.name,
        "built": kind.built(),
        "daemon": d.daemon,
        "address": d.address,
        "description": d.description,
        "discovery": d.discovery,
        "framing": d.framing.name(),
        "datagram": d.datagram(),
        "max_message": d.max_message,
        "max_payload": kind.max_payload(),
        "local_only": d.local_only,
        "crosses_hosts": d.crosses_hosts,
        "fanout": d.fanout.name(),
        "node_session": d.node_session,
        "opts": opts,
        "defaults": d.defaults.iter().map(|(k, v)| (k.to_string(), serde_json::json!(v))).collect::<serde_json::Map<_, _>>(),
        "qos": {
            "reliability": d.qos.reliability,
            "history": d.qos.history,
            "durability": d.qos.durability,
            "note": d.qos.note,
        },
        "services": {
            "supported": d.services.supported(),
            "how": d.services.text(),
        },
    })
}

/// Print the listing: one JSON list, or for people a name, description and address each.
pub fn transports(json: bool) {
    if json {
        let v: Vec<_> = Kind::ALL.iter().map(|k| transport_json(*k)).collect();
        println!("{}", serde_json::Value::from(v));
    } else {
        for k in Kind::ALL {
            let built = if k.built() {
                ""
            } else {
                " (not built into this binary)"
            };
            println!(
                "{:<11} {}{built}\n            address: {}",
                k.name(),
                k.describe(),
                k.address_form()
            );
        }
    }
}

/// `mwperf-agent warnings [--json]`: every warning code either language emits and what it
/// means (mwperf_core::warning_codes, the one registry).
pub fn warnings(json: bool) {
    if json {
        println!("{}", mwperf_core::warning_codes::json());
    } else {
        for c in mwperf_core::warning_codes::ALL {
            println!("{:<26} {} ({})", c.code, c.about, c.from);
        }
    }
}

/// The measuring roles whose options `options` lists.
const MEASURING: [&str; 6] = ["ping", "pong", "pub", "sub", "client", "server"];

/// Every valued option of the measuring roles, from the command line's own definitions
/// (cli.rs): (role, key = the flag without `--`, `-` as `_`, its definition).
fn measuring_options() -> Vec<(&'static str, String, clap::Arg)> {
    let cli = <crate::cli::Cli as clap::CommandFactory>::command();
    let mut found = Vec::new();
    for role in MEASURING {
        let sub = cli.find_subcommand(role).expect("a measuring role");
        for arg in sub.get_arguments() {
            if let (Some(long), true) = (arg.get_long(), arg.get_action().takes_values()) {
                found.push((role, long.replace('-', "_"), arg.clone()));
            }
        }
    }
    found
}

/// The default of every valued option of the measuring roles: key -> the default as text. A
/// flag has one default in every role that takes it (the tests check it).
pub fn option_defaults() -> serde_json::Map<String, serde_json::Value> {
    let mut found = serde_json::Map::new();
    for (_, key, arg) in measuring_options() {
        if let [value] = arg.get_default_values() {
            let value = value.to_string_lossy().to_string();
            found.entry(key).or_insert_with(|| value.into());
        }
    }
    found
}

/// The values every option with a closed set of values takes (`--reliability`,
/// `--durability`, `--executor`): key -> the values.
pub fn option_choices() -> serde_json::Map<String, serde_json::Value> {
    let mut found = serde_json::Map::new();
    for (_, key, arg) in measuring_options() {
        let values: Vec<String> = arg
            .get_possible_values()
            .iter()
            .map(|v| v.get_name().to_string())
            .collect();
        if !values.is_empty() {
            found.entry(key).or_insert_with(|| values.into());
        }
    }
    found
}

/// The limits the agent holds its options to (the control plane checks them before a run).
pub fn option_limits() -> serde_json::Value {
    use crate::cli::{MAX_CLIENTS, MAX_IN_FLIGHT, MAX_SUBSCRIBERS, MAX_TOPICS};
    serde_json::json!({
        "topics": MAX_TOPICS,
        "subscribers": MAX_SUBSCRIBERS,
        "clients": MAX_CLIENTS,
        "in_flight": MAX_IN_FLIGHT,
        "payload_bytes": mwperf_core::payload::MAX_PAYLOAD,
        "header_bytes": mwperf_core::wire::HEADER_LEN,
    })
}

/// `mwperf-agent options [--json]`: `{"defaults": {flag: text}, "choices": {flag: [text]},
/// "limits": {name: number}}`; for people one line each.
pub fn options(json: bool) {
    let (defaults, choices, limits) = (option_defaults(), option_choices(), option_limits());
    if json {
        let v = serde_json::json!({"defaults": defaults, "choices": choices, "limits": limits});
        println!("{v}");
    } else {
        for (k, v) in &defaults {
            let v = v.as_str().unwrap_or("");
            println!("--{:<20} default {v}", k.replace('_', "-"));
        }
        for (k, v) in &choices {
            println!("--{:<20} one of {v}", k.replace('_', "-"));
        }
        for (k, v) in limits.as_object().into_iter().flatten() {
            println!("{k:<22} at most {v}");
        }
    }
}

/// `mwperf-agent payloads [--json]`: the payload catalogue, name → bytes after the header.
pub fn payloads(json: bool) {
    list(
        json,
        mwperf_core::payload::CATALOGUE
            .iter()
            .map(|(k, n)| (k.to_string(), Some(*n)))
            .collect(),
    );
}

fn list(json: bool, items: Vec<(String, Option<usize>)>) {
    if json {
        let v: serde_json::Value = if items.iter().all(|(_, n)| n.is_some()) {
            items
                .iter()
                .map(|(k, n)| (k.clone(), serde_json::json!(n)))
                .collect::<serde_json::Map<_, _>>()
                .into()
        } else {
            items
                .iter()
                .map(|(k, _)| k.clone())
                .collect::<Vec<_>>()
                .into()
        };
        println!("{v}");
    } else {
        for (k, n) in items {
            println!("{k}{}", n.map_or(String::new(), |n| format!("\t{n}")));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_transport_lists_its_whole_descriptor() {
        for k in Kind::ALL {
            let v = transport_json(*k);
            for key in [
                "name",
                "built",
                "daemon",
                "address",
                "description",
                "discovery",
                "framing",
                "max_message",
                "max_payload",
                "local_only",
                "crosses_hosts",
                "fanout",
                "node_session",
                "opts",
                "qos",
                "services",
            ] {
                assert!(v.get(key).is_some(), "{}: no '{key}'", k.name());
            }
            assert_eq!(v["name"], k.name());
        }
        assert_eq!(transport_json(Kind::Udp)["max_message"], 65_507);
        assert_eq!(transport_json(Kind::Udp)["max_payload"], 65_507 - 56);
        assert_eq!(
            transport_json(Kind::Tcp)["max_payload"],
            mwperf_core::payload::MAX_PAYLOAD
        );
        assert_eq!(
            transport_json(Kind::Zenoh)["opts"]["mode"]
                .as_str()
                .map(|h| h.contains("client")),
            Some(true)
        );
    }

    /// One default per flag: every measuring role that takes a flag gives it the same default
    /// (the listing keeps the first role's).
    #[test]
    fn a_flag_has_one_default_in_every_role() {
        let defaults = option_defaults();
        for (role, key, arg) in measuring_options() {
            if let [value] = arg.get_default_values() {
                assert_eq!(defaults[&key], &*value.to_string_lossy(), "{role} --{key}");
            }
        }
        assert_eq!(defaults["payload"], "Array1k");
        assert_eq!(defaults["depth"], "10");
        assert_eq!(option_limits()["topics"], crate::cli::MAX_TOPICS);
        assert_eq!(
            option_choices()["reliability"],
            serde_json::json!(["reliable", "best-effort"])
        );
    }
}
