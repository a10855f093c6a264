//! The parsers of outside bytes, reachable from outside the crate for the fuzz targets only
//! (`fuzz/`, docs/fuzzing.md): compiled with the `fuzzing` feature, which no product build
//! turns on. Not an API: names and signatures follow the modules they come from.

/// MQTT 3.1.1/5 packets and MQTT 5 property lists.
#[cfg(feature = "mqtt")]
pub mod mqtt {
    pub use crate::middleware::mqtt::codec::*;
    /// MQTT 5 property lists.
    pub mod properties {
        pub use crate::middleware::mqtt::properties::*;
    }
}

/// TCPROS connection headers and frames; XML-RPC documents and HTTP messages.
#[cfg(feature = "ros1")]
pub mod ros1 {
    pub mod tcpros {
        pub use crate::middleware::ros1::tcpros::*;
    }
    pub mod xmlrpc {
        pub use crate::middleware::ros1::xmlrpc::*;
    }
}

/// WebSocket frames and the Foxglove WebSocket protocol's server messages.
#[cfg(feature = "foxglove")]
pub mod foxglove {
    pub use crate::middleware::foxglove::ws::{
        apply_mask, assemble, frame_header, parse_frame, Frame, BINARY, TEXT,
    };
    pub use crate::middleware::foxglove::{message_data, Control};
}

/// `ros_discovery_info` samples (the ROS 2 probe's CDR parser). The file is compiled here on its
/// own so that fuzzing it does not need Cyclone DDS (the `cyclonedds` feature).
#[path = "middleware/cyclonedds/probe/node_info.rs"]
pub mod node_info;
