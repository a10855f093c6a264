//! Middleware transports, one module (or folder) each, each behind its cargo feature.
//! Each exposes `open(side, spec) -> Result<Box<dyn Endpoint>, TransportError>`.

#[cfg(feature = "cyclonedds")]
pub mod cyclonedds;
#[cfg(any(feature = "cyclonedds", feature = "rustdds"))]
mod dds_address;
#[cfg(feature = "iceoryx2")]
pub mod iceoryx2;
#[cfg(feature = "mqtt")]
pub mod mqtt;
#[cfg(feature = "ros1")]
pub mod ros1;
#[cfg(feature = "rustdds")]
pub mod rustdds;
#[cfg(feature = "zenoh")]
pub mod zenoh;
