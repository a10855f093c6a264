//! What the ros2 transport is (see [`crate::descriptor`]); compiled with or without the `ros2`
//! feature, so a transport compiled out is still listed.

use crate::{Descriptor, Fanout, Framing, Opt, QosSupport};

pub const DESCRIPTOR: Descriptor = Descriptor {
    name: "ros2",
    description: "a real ROS 2 node through rcl's C API and the RMW RMW_IMPLEMENTATION picks (mwperf's managed Kilted/Jazzy or a sourced ROS 2), mwperf's bytes in a real message type's data",
    address: "[<domain>/]<base> (ROS 2 topics /mwperf/<base>/ping|pong; 'auto' picks one)",
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
        Opt { key: "type", help: "topics only: the message type carrying mwperf's bytes in its data: std_msgs/msg/UInt8MultiArray, sensor_msgs/msg/PointCloud2 or sensor_msgs/msg/Image (default: PointCloud2 for the PointCloud payloads, else UInt8MultiArray; the control plane picks it per payload)" },
        Opt { key: "window", help: "a reliable publisher's window: after N messages it waits (rcl_publisher_wait_for_all_acked, 100 ms at a time, then the send is refused as blocked and retried) until every matched subscription acknowledged them, so it never runs more than N ahead of its slowest subscription (rmw_fastrtps_cpp's write blocks only on a full history: 5000 messages with keep-all, never with keep-last, which overwrites); default: no window" },
        Opt { key: "timer", help: "what paces a sender at a --rate: mwperf (its own pacer, the default) or rcl (an rcl timer on the steady clock in an rcl wait set, as a ROS 2 node's timer callback: the pub of --mode oneway and throughput, a round trip's ping, whose echoes wait in the same wait set, and a graph node's timer publishers; a pong or a sub answers in its subscription's wait set either way); its lateness is reported as the pacer's" },
        Opt { key: "loan", help: "on: publish loaned messages (rcl_borrow_loaned_message / rcl_publish_loaned_message); a publisher asks rcl_publisher_can_loan_messages and refuses to open otherwise, naming the type and the RMW (rmw_fastrtps_cpp lends plain fixed-size types only: none of the types mwperf's bytes travel in); off (the default): serialized publish" },
        Opt { key: "distro", help: "the ROS 2 distribution: jazzy, kilted or a sourced one's name (default: a sourced ROS 2, else mwperf's managed kilted); the control plane gives the agent that distribution's environment" },
    ],
    qos: QosSupport {
        reliability: QosSupport::RELIABILITY,
        history: QosSupport::HISTORY,
        durability: QosSupport::DURABILITY,
        note: "each value maps to the rmw_qos_profile_t policy of the same name (keep-last:N sets the depth)",
    },
    services: crate::service::Services::Native("an rcl service and client (rcl_interfaces/srv/GetParameters: the request's bytes base64 in names[0], the reply's in values[0].byte_array_value), matched by the RMW's request sequence numbers"),
};
