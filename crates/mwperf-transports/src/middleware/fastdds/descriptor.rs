//! What Fast DDS is (see [`crate::descriptor`]); compiled with or without the `fastdds` feature,
//! so a transport compiled out is still listed.

use crate::{Descriptor, Fanout, Framing, Opt, QosSupport};

pub const DESCRIPTOR: Descriptor = Descriptor {
    name: "fastdds",
    description: "eProsima Fast DDS (Debian's libfastrtps 2.9, or with --opt distro the one of a ROS 2 distribution's RMW; ROS 2's default middleware), ROS 2 topic and type names",
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
        Opt { key: "distro", help: "jazzy|kilted: the Fast DDS of that ROS 2 distribution's rmw_fastrtps_cpp (Jazzy 2.14, Kilted 3.2; the shim compiled against it on first use, cached), so raw Fast DDS and --transport ros2 measure the same library (default: Debian's 2.9)" },
        Opt { key: "shm", help: "on|off: Fast DDS's shared-memory transport beside UDP for peers on this host (default on, as Fast DDS; a Cyclone or RustDDS peer is reached over UDP either way)" },
        Opt { key: "publish-mode", help: "sync|async: write from the caller's thread, or hand the sample to Fast DDS's publishing thread (default sync)" },
        Opt { key: "data-sharing", help: "off|on: zero-copy data-sharing; needs a bounded (plain) type, and mwperf's message is an unbounded sequence<octet>, so 'on' is refused (default off)" },
        Opt { key: "max-rate", help: "cap what a writer sends with Fast DDS's flow controller (asynchronous publishing), e.g. 5MB/s or 8Mbit/s: what Fast DDS needs to send large messages over a slow link without flooding it (default: no cap)" },
        Opt { key: "max-blocking", help: "how long a reliable write may block on a full history before it fails (a duration; default 100ms)" },
        Opt { key: "heartbeat", help: "a reliable writer's heartbeat period (a duration; default Fast DDS's 3s, as ROS 2 runs it). A Cyclone DDS reader drops the sample in flight at the first heartbeat it accepts when that sample is fragmented: a short period makes that first heartbeat come before the large samples (see docs/transports.md)" },
        Opt { key: "interface", help: "the IPv4 address to use (default 127.0.0.1; 'auto' = this host's address among --opt peers)" },
        Opt { key: super::ros2_wire::OPT, help: super::ros2_wire::HELP },
        Opt { key: crate::dds_security::OPT, help: crate::dds_security::HELP },
        Opt { key: "peers", help: "comma-separated IPv4 addresses to discover participants at (unicast, no multicast; default the interface)" },
    ],
    qos: QosSupport {
        reliability: QosSupport::RELIABILITY,
        history: QosSupport::HISTORY,
        durability: QosSupport::DURABILITY,
        note: "every value maps to the DDS policy of the same name (keep-all: unlimited resource limits)",
    },
    services: crate::service::Services::Native("ROS 2 services as rmw_fastrtps: rq/<name>Request + rr/<name>Reply topics, matched by RTPS sample identities (related_sample_identity inline QoS)"),
};

/// Fast DDS's default heartbeat period of a reliable writer (2.x and 3.x; rmw_fastrtps keeps
/// it): what such a writer may hold every send back for (`Endpoint::paced_ns`).
pub const DEFAULT_HEARTBEAT_NS: u64 = 3_000_000_000;
