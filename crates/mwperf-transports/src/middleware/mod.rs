//! Middleware transports, one module (or folder) each, each behind its cargo feature.
//! Each exposes `open(side, spec) -> Result<Box<dyn Endpoint>, TransportError>`, and declares
//! what it is in `<name>/descriptor.rs`, compiled whether or not the feature is on.

#[path = "cyclonedds/descriptor.rs"]
pub mod cyclonedds_descriptor;
#[path = "fastdds/descriptor.rs"]
pub mod fastdds_descriptor;
#[path = "foxglove/descriptor.rs"]
pub mod foxglove_descriptor;
#[path = "iceoryx2/descriptor.rs"]
pub mod iceoryx2_descriptor;
#[path = "mqtt/descriptor.rs"]
pub mod mqtt_descriptor;
#[path = "ros1/descriptor.rs"]
pub mod ros1_descriptor;
#[path = "ros2/descriptor.rs"]
pub mod ros2_descriptor;
#[path = "rustdds/descriptor.rs"]
pub mod rustdds_descriptor;
#[path = "zenoh/descriptor.rs"]
pub mod zenoh_descriptor;

#[cfg(feature = "cyclonedds")]
pub mod cyclonedds;
#[cfg(any(
    feature = "cyclonedds",
    feature = "rustdds",
    feature = "fastdds",
    feature = "ros2"
))]
mod dds_address;
#[cfg(any(feature = "cyclonedds", feature = "fastdds", feature = "ros2"))]
mod dds_match;
#[cfg(feature = "fastdds")]
pub mod fastdds;
#[cfg(any(feature = "fastdds", feature = "ros2"))]
pub mod fastdds_shm;
#[cfg(feature = "foxglove")]
pub mod foxglove;
#[cfg(feature = "iceoryx2")]
pub mod iceoryx2;
#[cfg(feature = "mqtt")]
pub mod mqtt;
#[cfg(any(feature = "mqtt", feature = "foxglove"))]
mod pumped;
#[cfg(feature = "ros1")]
pub mod ros1;
#[cfg(feature = "ros2")]
pub mod ros2;
pub mod ros2_wire;
#[cfg(feature = "rustdds")]
pub mod rustdds;
#[cfg(feature = "zenoh")]
pub mod zenoh;
