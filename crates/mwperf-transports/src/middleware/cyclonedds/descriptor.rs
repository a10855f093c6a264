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
    opts: &[
        Opt { key: "max-blocking", help: "how long a reliable write may block on a full history before it fails (a duration; default 100ms)" },
        Opt { key: "config", help: "a Cyclone DDS XML configuration (as CYCLONEDDS_URI takes)" },
        Opt { key: "ros-node", help: "announce the endpoint as ROS 2 node [<namespace>/]<name> on ros_discovery_info (Humble GIDs), as rmw_cyclonedds does; bridges following the ROS 2 graph need it" },
    ],
    qos: QosSupport {
        reliability: QosSupport::RELIABILITY,
        history: QosSupport::HISTORY,
        durability: QosSupport::DURABILITY,
        note: "every value maps to the DDS policy of the same name",
    },
};
