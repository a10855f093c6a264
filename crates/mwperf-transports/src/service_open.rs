//! Which module opens each transport's service sides: one line per transport, so that adding
//! services to a transport touches its own module and this table only (crate::service checks
//! the descriptor and the build first).

use crate::service::{Client, Server};
use crate::stream_service::{StreamClient, StreamServer};
use crate::{Kind, Spec, TransportError};

pub(crate) fn client(kind: Kind, spec: &Spec) -> Result<Box<dyn Client>, TransportError> {
    match kind {
        Kind::Udp => crate::udp_service::client(spec),
        Kind::Tcp => Ok(Box::new(StreamClient::new(
            crate::tcp::connect(&spec.addr)?,
            "tcp",
        ))),
        Kind::Uds => Ok(Box::new(StreamClient::new(
            crate::uds::connect(&spec.addr)?,
            "uds",
        ))),
        #[cfg(feature = "cyclonedds")]
        Kind::CycloneDds => crate::middleware::cyclonedds::service::client(spec),
        #[cfg(feature = "fastdds")]
        Kind::FastDds => crate::middleware::fastdds::service::client(spec),
        #[cfg(feature = "rustdds")]
        Kind::RustDds => crate::middleware::rustdds::service::client(spec),
        #[cfg(feature = "zenoh")]
        Kind::Zenoh => crate::middleware::zenoh::service::client(spec),
        #[cfg(feature = "mqtt")]
        Kind::Mqtt => crate::middleware::mqtt::service::client(spec),
        #[cfg(feature = "iceoryx2")]
        Kind::Iceoryx2 => crate::middleware::iceoryx2::service::client(spec),
        #[cfg(feature = "foxglove")]
        Kind::Foxglove => crate::middleware::foxglove::service::client(spec),
        #[cfg(feature = "ros1")]
        Kind::Ros1 => crate::middleware::ros1::service::client(spec),
        #[cfg(feature = "ros2")]
        Kind::Ros2 => crate::middleware::ros2::service::client(spec),
        #[allow(unreachable_patterns)]
        _ => Err(TransportError::NotBuilt {
            transport: kind.name(),
        }),
    }
}

pub(crate) fn server(kind: Kind, spec: &Spec) -> Result<Box<dyn Server>, TransportError> {
    match kind {
        Kind::Udp => crate::udp_service::server(spec),
        Kind::Tcp => Ok(Box::new(StreamServer::new(crate::tcp::bind(&spec.addr)?))),
        Kind::Uds => Ok(Box::new(StreamServer::new(crate::uds::bind(&spec.addr)?))),
        #[cfg(feature = "cyclonedds")]
        Kind::CycloneDds => crate::middleware::cyclonedds::service::server(spec),
        #[cfg(feature = "fastdds")]
        Kind::FastDds => crate::middleware::fastdds::service::server(spec),
        #[cfg(feature = "rustdds")]
        Kind::RustDds => crate::middleware::rustdds::service::server(spec),
        #[cfg(feature = "zenoh")]
        Kind::Zenoh => crate::middleware::zenoh::service::server(spec),
        #[cfg(feature = "mqtt")]
        Kind::Mqtt => crate::middleware::mqtt::service::server(spec),
        #[cfg(feature = "iceoryx2")]
        Kind::Iceoryx2 => crate::middleware::iceoryx2::service::server(spec),
        #[cfg(feature = "foxglove")]
        Kind::Foxglove => crate::middleware::foxglove::service::server(spec),
        #[cfg(feature = "ros1")]
        Kind::Ros1 => crate::middleware::ros1::service::server(spec),
        #[cfg(feature = "ros2")]
        Kind::Ros2 => crate::middleware::ros2::service::server(spec),
        #[allow(unreachable_patterns)]
        _ => Err(TransportError::NotBuilt {
            transport: kind.name(),
        }),
    }
}
