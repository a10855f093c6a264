//! What a ROS 2 probe sees (`mwperf-agent probe-ros2`, python/mwperf/probe/ros2.py): the
//! entities of a DDS domain from its discovery, the ROS 2 nodes that own them, and one call per
//! sample taken from each selected topic. The middleware side is Cyclone DDS
//! (`middleware::cyclonedds::probe`); these types are always compiled so the agent builds
//! without it.

/// A 16-byte DDS GUID (participant or endpoint).
pub type Guid = [u8; 16];

/// What to listen to and how.
#[derive(Debug, Clone)]
pub struct Options {
    /// DDS domain id (0..=232).
    pub domain: u32,
    /// A network interface name, or None for Cyclone's own choice.
    pub interface: Option<String>,
    /// How far automatic discovery reaches (`ROS_AUTOMATIC_DISCOVERY_RANGE`).
    pub range: DiscoveryRange,
    /// Hosts discovered by unicast besides (`ROS_STATIC_PEERS`).
    pub static_peers: Vec<String>,
    /// The Cyclone DDS configuration a ROS 2 node in the same environment reads
    /// (`CYCLONEDDS_URI`: XML fragments and/or `file://` URIs, comma separated), or None.
    pub cyclonedds_uri: Option<String>,
    /// DDS topic names to subscribe to; empty = every topic with a writer (not `rq/`, `rr/`,
    /// `ros_discovery_info`, `DCPS*`).
    pub topics: Vec<String>,
    /// Reliable readers instead of best-effort (the writers then keep and resend for the probe).
    pub reliable: bool,
    /// Keep-last depth of each reader.
    pub depth: i32,
    /// How long discovery runs before the measurement window opens, ns.
    pub discovery_ns: u64,
    /// The measurement window, ns.
    pub duration_ns: u64,
}

/// `ROS_AUTOMATIC_DISCOVERY_RANGE` (ROS 2 Iron and later): how far a node discovers others.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DiscoveryRange {
    /// Unicast to this host's participants only, no multicast.
    Localhost,
    /// The middleware's multicast on the subnet (ROS 2's default when the variable is unset).
    #[default]
    Subnet,
    /// No discovery of other processes.
    Off,
    /// The middleware's own defaults, untouched (static peers ignored).
    SystemDefault,
}

impl DiscoveryRange {
    /// The variable's spellings, as rcl reads them.
    pub const NAMES: [&'static str; 4] = ["LOCALHOST", "SUBNET", "OFF", "SYSTEM_DEFAULT"];

    pub fn parse(text: &str) -> Result<Self, String> {
        match text {
            "LOCALHOST" => Ok(Self::Localhost),
            "SUBNET" => Ok(Self::Subnet),
            "OFF" => Ok(Self::Off),
            "SYSTEM_DEFAULT" => Ok(Self::SystemDefault),
            _ => Err(format!(
                "'{text}' is not a discovery range (one of {})",
                Self::NAMES.join(", ")
            )),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Localhost => "LOCALHOST",
            Self::Subnet => "SUBNET",
            Self::Off => "OFF",
            Self::SystemDefault => "SYSTEM_DEFAULT",
        }
    }
}

/// The highest DDS domain id whose ports fit in 16 bits with the RTPS port mapping.
pub const MAX_DOMAIN: u32 = 232;

/// An endpoint's QoS as discovered (None = infinite).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EndpointQos {
    pub reliability: &'static str,
    pub durability: &'static str,
    /// `unknown` where the endpoint's vendor does not send it (history is no standard SEDP
    /// field: Cyclone DDS sends it, Fast DDS does not)
    pub history: &'static str,
    pub depth: Option<i32>,
    pub deadline_ns: Option<i64>,
    pub liveliness: &'static str,
    pub lease_ns: Option<i64>,
    pub lifespan_ns: Option<i64>,
    pub ownership: &'static str,
    pub partitions: Vec<String>,
}

/// A writer or reader of the domain.
#[derive(Debug, Clone)]
pub struct Endpoint {
    pub writer: bool,
    pub guid: Guid,
    pub participant: Guid,
    pub topic: String,
    pub type_name: String,
    pub qos: EndpointQos,
    /// false: it left (disposed or no longer alive).
    pub alive: bool,
}

/// One ROS 2 node of a participant, from `ros_discovery_info`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    pub namespace: String,
    pub name: String,
    pub readers: Vec<Guid>,
    pub writers: Vec<Guid>,
}

/// One thing the probe learnt.
#[derive(Debug, Clone)]
pub enum Event {
    Participant {
        guid: Guid,
        alive: bool,
    },
    Endpoint(Endpoint),
    /// A participant's ROS 2 nodes (the whole list, each time it changes).
    Nodes {
        participant: Guid,
        nodes: Vec<Node>,
    },
    /// The probe reads `topic` from now on; samples carry `index`.
    Subscribed {
        index: u32,
        topic: String,
        type_name: String,
        /// The type starts with a std_msgs/Header: samples carry its stamp.
        header: bool,
    },
    SubscribeFailed {
        topic: String,
        type_name: String,
        why: String,
    },
    /// The discovery time is over: the measurement window starts.
    Discovered,
    /// The window is over: samples taken, and samples lost per subscription index (Cyclone's
    /// sample-lost status).
    End {
        taken: u64,
        lost: Vec<u64>,
    },
}

/// Where the probe's findings go. `sample` runs on Cyclone's receive threads, once per sample:
/// keep it short.
pub trait Sink: Send + Sync {
    fn event(&self, event: &Event);
    /// A sample of subscription `index`: when it was taken (unix ns), its serialized size
    /// (with the 4-byte encapsulation header) and its header stamp (unix ns) or -1.
    fn sample(&self, at_ns: u64, index: u32, size: u32, stamp_ns: i64);
}

/// How a person names DDS topic `topic`: a ROS 2 topic (`rt/x`) as `/x`, any other as it is.
pub fn shown(topic: &str) -> String {
    match topic.strip_prefix("rt/") {
        Some(rest) => format!("/{rest}"),
        None => topic.to_string(),
    }
}

/// Lower-case hex of a GUID.
pub fn hex(guid: &Guid) -> String {
    guid.iter().map(|b| format!("{b:02x}")).collect()
}

/// Whether the probe subscribes to `topic` when no topic was named: ROS 2 topics and plain DDS
/// topics, not the ROS 2 graph, services or DDS's own builtin topics.
pub fn selected_by_default(topic: &str) -> bool {
    !(topic == "ros_discovery_info"
        || topic.starts_with("rq/")
        || topic.starts_with("rr/")
        || topic.starts_with("DCPS"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_selection_leaves_out_graph_services_and_builtins() {
        assert!(selected_by_default("rt/chatter"));
        assert!(selected_by_default("DDSPerfRDataKS"));
        assert!(!selected_by_default("ros_discovery_info"));
        assert!(!selected_by_default("rq/add_two_intsRequest"));
        assert!(!selected_by_default("rr/add_two_intsReply"));
        assert!(!selected_by_default("DCPSPublication"));
    }

    #[test]
    fn ros_topics_are_shown_by_their_ros_name() {
        assert_eq!(shown("rt/scan"), "/scan");
        assert_eq!(shown("rt/robot/odom"), "/robot/odom");
        assert_eq!(shown("DDSPerfRDataKS"), "DDSPerfRDataKS");
    }

    #[test]
    fn hex_is_lower_case_32_digits() {
        let mut g = [0u8; 16];
        g[0] = 0xab;
        g[15] = 0x01;
        assert_eq!(hex(&g), "ab000000000000000000000000000001");
    }
}
