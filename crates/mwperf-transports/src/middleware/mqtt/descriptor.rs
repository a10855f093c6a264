//! What MQTT is (see [`crate::descriptor`]); compiled with or without the `mqtt`
//! feature, so a transport compiled out is still listed.

use crate::{Descriptor, Fanout, Framing, Opt, QosSupport};

pub const DESCRIPTOR: Descriptor = Descriptor {
    name: "mqtt",
    description: "MQTT 3.1.1 through a mosquitto broker, QoS 0/1/2",
    address: "<broker host>:<port>[/<base>] (a TLS listener's with --opt tls)",
    daemon: Some("mosquitto"),
    discovery: true,
    framing: Framing::Middleware,
    max_message: None,
    local_only: false,
    crosses_hosts: true,
    fanout: Fanout::Uncounted,
    node_session: false,
    defaults: &[],
    opts: &[
        Opt { key: "qos", help: "MQTT QoS 0, 1 or 2 (default: 0 for best-effort, 1 for reliable)" },
        Opt { key: "tls", help: "ca=PATH[,cert=PATH,key=PATH]: connect to the broker over TLS, trusting the CA in PATH (the broker's certificate must name its host); cert/key: this client's own certificate, presented when the broker asks (mTLS: mosquitto's require_certificate); mwperf run --secure tls|mtls makes them per run" },
    ],
    qos: QosSupport {
        reliability: QosSupport::RELIABILITY,
        history: QosSupport::HISTORY,
        durability: QosSupport::DURABILITY,
        note: "history is the broker's queue (max_queued_messages); transient-local = retained messages, only with keep-last:1",
    },
    services: crate::service::Services::Native(
        "MQTT 5 request/response: PUBLISH with Response Topic + Correlation Data, answered on that topic",
    ),
};
