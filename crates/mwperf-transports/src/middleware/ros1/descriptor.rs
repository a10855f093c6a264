//! What ROS 1 is (see [`crate::descriptor`]); compiled with or without the `ros1`
//! feature, so a transport compiled out is still listed.

use crate::{Descriptor, Fanout, Framing, Opt, QosSupport};

pub const DESCRIPTOR: Descriptor = Descriptor {
    name: "ros1",
    description: "ROS 1 TCPROS through rosmaster",
    address: "http://<master host>:<port>/[#<base>]",
    daemon: Some("rosmaster"),
    discovery: true,
    framing: Framing::Middleware,
    max_message: None,
    local_only: false,
    crosses_hosts: true,
    fanout: Fanout::Counted,
    node_session: false,
    defaults: &[],
    opts: &[Opt {
        key: "persistent",
        help: "service calls: true = one connection for all calls (pipelined), false = one connection per call (default: false, as rospy's ServiceProxy)",
    }],
    qos: QosSupport {
        reliability: &["reliable"],
        history: QosSupport::HISTORY,
        durability: QosSupport::DURABILITY,
        note: "best-effort refused (UDPROS is not implemented); transient-local = latching, only with keep-last:1",
    },
    services: crate::service::Services::Native(
        "TCPROS service calls (registerService/lookupService at rosmaster, srv mwperf_msgs/Bytes)",
    ),
};
