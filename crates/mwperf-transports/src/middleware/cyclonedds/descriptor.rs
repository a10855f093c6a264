//! What Cyclone DDS is (see [`crate::descriptor`]); compiled with or without the `cyclonedds`
//! feature, so a transport compiled out is still listed.

use crate::{Descriptor, Fanout, Framing, Opt, QosSupport};

pub const DESCRIPTOR: Descriptor = Descriptor {
    name: "cyclonedds",
    description: "Eclipse Cyclone DDS (Debian libddsc), ROS 2 topic and type names",
    address: "[<domain>/]<base> (topics rt/mwperf/<base>/ping|pong; 'auto' picks one)",
    daemon: None,
    discovery: true,
    framing: Framing::Middleware,
    max_message: None,
    local_only: false,
    crosses_hosts: true,
    fanout: Fanout::Counted,
    node_session: true,
    defaults: &[("config", LOOPBACK_CONFIG)],
    opts: &[
        Opt { key: "max-blocking", help: "how long a reliable write may block on a full history before it fails (a duration; default 100ms)" },
        Opt { key: "config", help: "a Cyclone DDS XML configuration (as CYCLONEDDS_URI takes)" },
        Opt { key: "batch", help: "true|false (default false): Cyclone's write batching (dds_write_set_batch, as ddsperf runs): samples share a datagram until it is full or the sender flushes before it waits or ends" },
        Opt { key: super::ros2_wire::OPT, help: super::ros2_wire::HELP },
        Opt { key: "ros-node", help: "announce the endpoint as ROS 2 node [<namespace>/]<name> on ros_discovery_info (Humble GIDs), as rmw_cyclonedds does; bridges following the ROS 2 graph need it" },
    ],
    qos: QosSupport {
        reliability: QosSupport::RELIABILITY,
        history: QosSupport::HISTORY,
        durability: QosSupport::DURABILITY,
        note: "every value maps to the DDS policy of the same name",
    },
    services: crate::service::Services::Native("ROS 2 services as rmw_cyclonedds: rq/<name>Request + rr/<name>Reply topics, a 16-byte header (client guid, seq) in every sample"),
};

/// Loopback only, unicast discovery to the participant ports on 127.0.0.1. Every process on the
/// host that joins a domain takes the next free participant index (each needs its own unicast
/// ports); 100 leaves room for parallel test binaries and agents. The receive buffer asks for
/// 4 MiB (this host's net.core.rmem_max; less is accepted): with the default one, a 4 MiB message overruns the
/// socket and crawls through retransmissions (measured: RTT p50 2 s and 70 % loss at 20 Hz,
/// against 14–18 ms and none with it). The control plane reads this text from the agent
/// (`transports --json`, the descriptor's defaults): bridges and ddsperf join the same way.
pub const LOOPBACK_CONFIG: &str = concat!(
    "<CycloneDDS><Domain Id=\"any\">",
    "<General><Interfaces><NetworkInterface address=\"127.0.0.1\"/></Interfaces>",
    "<AllowMulticast>false</AllowMulticast></General>",
    "<Discovery><ParticipantIndex>auto</ParticipantIndex>",
    "<MaxAutoParticipantIndex>100</MaxAutoParticipantIndex>",
    "<Peers><Peer address=\"127.0.0.1\"/></Peers></Discovery>",
    "<Internal><SocketReceiveBufferSize min=\"default\" max=\"4MiB\"/></Internal>",
    "</Domain></CycloneDDS>"
);
