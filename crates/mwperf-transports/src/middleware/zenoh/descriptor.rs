//! What zenoh is (see [`crate::descriptor`]); compiled with or without the `zenoh`
//! feature, so a transport compiled out is still listed.

use crate::{Descriptor, Fanout, Framing, Opt, QosSupport};

pub const DESCRIPTOR: Descriptor = Descriptor {
    name: "zenoh",
    description: "zenoh, peer mode or client mode through a router",
    address: "<endpoint>[#<base>], e.g. tcp/127.0.0.1:7447#demo (tls/HOST:PORT or quic/HOST:PORT with --opt tls)",
    daemon: None,
    discovery: true,
    framing: Framing::Middleware,
    max_message: None,
    local_only: false,
    crosses_hosts: true,
    fanout: Fanout::Uncounted,
    node_session: true,
    defaults: &[],
    opts: &[
        Opt { key: "mode", help: "peer (pong/sub listen, ping/pub connect; default) or client (both connect to a router at the endpoint)" },
        Opt { key: "express", help: "true (default: each message at once) or false (zenoh may batch)" },
        Opt { key: "tls", help: "ca=PATH[,cert=PATH,key=PATH][,mtls=on]: the files of a tls/ or quic/ endpoint (zenoh's TLS link): the CA to trust; this side's certificate and key (a listener's server certificate; a connector's own under mtls); mtls=on: listeners demand client certificates signed by the CA, connectors present theirs (mwperf run --secure tls|mtls makes them per run)" },
        Opt { key: "link", help: "tcp, tls or quic: the link of the endpoints (mwperf run: tcp plain, tls under --secure tls|mtls; quic = zenoh's QUIC link, TLS 1.3 over UDP, needs --secure tls|mtls); an agent checks it against the endpoint it is given" },
        Opt { key: "cdr", help: "false (default) or true: each message as the CDR sample of the DDS transports' type, as zenoh-plugin-ros2dds forwards ROS 2 messages (a zenoh end of --bridge zenoh-ros2dds)" },
    ],
    qos: QosSupport {
        reliability: QosSupport::RELIABILITY,
        history: &["keep-last", "keep-all"],
        durability: &["volatile"],
        note: "reliable = congestion control Block, best-effort = Drop; keep-last N = a ring of N samples per subscriber (the oldest dropped when it lags), keep-all = a FIFO that holds zenoh's receiving thread when full (a reliable publisher then blocks)",
    },
    services: crate::service::Services::Native(
        "queryable/get as rmw_zenoh: a complete queryable on mwperf/<base>/service, one get per call through a querier (target all-complete, no consolidation)",
    ),
};
