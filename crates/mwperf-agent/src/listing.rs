//! The listings: `mwperf-agent payloads`, `warnings` and `transports` (each `[--json]`).
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
}
