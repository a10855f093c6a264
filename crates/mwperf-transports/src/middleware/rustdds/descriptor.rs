//! What RustDDS is (see [`crate::descriptor`]); compiled with or without the `rustdds`
//! feature, so a transport compiled out is still listed.

use crate::{Descriptor, Fanout, Framing, Opt, QosSupport};

pub const DESCRIPTOR: Descriptor = Descriptor {
    name: "rustdds",
    description: "RustDDS (pure Rust DDS), ROS 2 topic and type names",
    address: "[<domain>/]<base> (topics rt/mwperf/<base>/ping|pong; 'auto' picks one)",
    daemon: None,
    discovery: true,
    framing: Framing::Middleware,
    max_message: None,
    local_only: false,
    crosses_hosts: true,
    fanout: Fanout::Counted,
    node_session: true,
    defaults: &[],
    opts: &[
        Opt { key: "service-mapping", help: "services only: cyclone (default: rmw_cyclonedds's 16-byte guid+seq header in every sample; talks to cyclonedds services) or enhanced (rmw_fastrtps's sample identities in inline QoS; talks to fastdds services; at most 64000 bytes per request/reply: RustDDS 0.15.1 corrupts fragmented samples that carry an identity)" },
        Opt { key: super::ros2_wire::OPT, help: super::ros2_wire::HELP },
        Opt { key: crate::dds_security::OPT, help: crate::dds_security::HELP },
        Opt { key: "network", help: "the interfaces RustDDS uses: loopback (default), auto (every multicast-capable non-loopback IPv4 interface) or an IPv4 address of this host" },
    ],
    qos: QosSupport {
        reliability: QosSupport::RELIABILITY,
        history: QosSupport::HISTORY,
        durability: QosSupport::DURABILITY,
        note: "every value maps to the DDS policy of the same name",
    },
    services: crate::service::Services::Native("ROS 2 services: rq/<name>Request + rr/<name>Reply topics, matched by rmw_cyclonedds's 16-byte guid+seq header (default) or by RTPS sample identities as rmw_fastrtps (--opt service-mapping=enhanced)"),
};
