//! What the Foxglove WebSocket transport is (see [`crate::descriptor`]); compiled with or without
//! the `foxglove` feature, so a transport compiled out is still listed.

use crate::{Descriptor, Fanout, Framing, Opt, QosSupport};

pub const DESCRIPTOR: Descriptor = Descriptor {
    name: "foxglove",
    description: "Foxglove WebSocket protocol (as foxglove_bridge speaks it) through a foxglove-sdk server: client publish and subscribe",
    address: "<server host>:<port>[/<base>]",
    daemon: Some("foxglove-server"),
    discovery: true,
    framing: Framing::Middleware,
    // tungstenite's default frame limit in the server (16 MiB), less the 5-byte message prefix
    max_message: Some((16 << 20) - 5),
    local_only: false,
    crosses_hosts: true,
    fanout: Fanout::Counted,
    node_session: false,
    defaults: &[],
    opts: &[
        Opt {
            key: "quickack",
            help: "off (default: the kernel's delayed ACKs, as an ordinary client) or on (acknowledge every read at once: TCP_QUICKACK)",
        },
        Opt {
            key: "tls",
            help: "ca=PATH: connect over TLS (wss), trusting the CA in PATH (the server's certificate must name its host); the foxglove-sdk server asks for no client certificate, so there is no mutual TLS; mwperf run --secure tls makes them per run",
        },
    ],
    qos: QosSupport {
        reliability: QosSupport::RELIABILITY,
        history: QosSupport::HISTORY,
        durability: &["volatile"],
        note: "one TCP connection per client: reliable and ordered (best-effort asks for no more, so it is the same); the server's per-client queue (its backlog) drops when a client cannot keep up; no late-joiner history",
    },
    services: crate::service::Services::None(
        "Foxglove services are advertised by the WebSocket server only (advertiseServices; clients just send serviceCallRequest): mwperf's foxglove sides are clients of the foxglove-sdk relay (python/mwperf/bridges/foxglove_server.py), which advertises none, so no mwperf side can serve",
    ),
};
