//! Opening (or creating) the iceoryx2 services of one direction: `mwperf/<base>/<topic>`
//! (publish-subscribe of byte slices) and `mwperf/<base>/<topic>.ev` (events that wake a blocked
//! receiver). Whoever comes first creates them; the other side must ask for exactly the same
//! settings, else it gets an error naming both (iceoryx2 itself accepts an existing service whose
//! queues are merely larger, which would silently change the measured QoS).

use iceoryx2::prelude::*;
use iceoryx2::service::port_factory::{event, publish_subscribe};

use super::settings::{ServiceSettings, MAX_PUBLISHERS, MAX_SUBSCRIBERS, SUBSCRIBER_BORROWED};
use super::{middleware, Svc, NAME};
use crate::TransportError;

pub type PubSub = publish_subscribe::PortFactory<Svc, [u8], ()>;
pub type Events = event::PortFactory<Svc>;

/// The name of the publish-subscribe service of `topic` (ping or pong) under `base`.
pub fn service_name(base: &str, topic: &str) -> String {
    format!("mwperf/{base}/{topic}")
}

fn parse_name(name: &str) -> Result<ServiceName, TransportError> {
    ServiceName::new(name).map_err(|e| {
        TransportError::Address(format!("cannot use '{name}' as an iceoryx2 service name ({e:?}); the address is a base name of at most {} characters", ServiceName::max_len().saturating_sub(12)))
    })
}

/// The data service of one direction, with exactly `want`'s settings.
pub fn open_pubsub(
    node: &Node<Svc>,
    name: &str,
    want: &ServiceSettings,
) -> Result<PubSub, TransportError> {
    let sname = parse_name(name)?;
    let opened = node
        .service_builder(&sname)
        .publish_subscribe::<[u8]>()
        .subscriber_max_buffer_size(want.depth)
        .history_size(want.history)
        .enable_safe_overflow(want.safe_overflow)
        .subscriber_max_borrowed_samples(SUBSCRIBER_BORROWED)
        .max_subscribers(MAX_SUBSCRIBERS)
        .max_publishers(MAX_PUBLISHERS)
        .open_or_create();
    let service = match opened {
        Ok(s) => s,
        Err(e) => {
            // iceoryx2 refuses an existing service with smaller queues: say what the peer chose.
            return Err(
                match node
                    .service_builder(&sname)
                    .publish_subscribe::<[u8]>()
                    .open()
                {
                    Ok(existing) => mismatch(name, &settings_of(&existing), want),
                    Err(_) => middleware(format!("cannot open or create service {name}: {e:?}")),
                },
            );
        }
    };
    let have = settings_of(&service);
    if have != *want {
        return Err(mismatch(name, &have, want));
    }
    Ok(service)
}

/// The wake-up service of one direction (default settings on both sides).
pub fn open_events(node: &Node<Svc>, name: &str) -> Result<Events, TransportError> {
    let ev = format!("{name}.ev");
    node.service_builder(&parse_name(&ev)?)
        .event()
        .open_or_create()
        .map_err(|e| middleware(format!("cannot open or create event service {ev}: {e:?}")))
}

fn settings_of(service: &PubSub) -> ServiceSettings {
    let c = service.static_config();
    ServiceSettings {
        depth: c.subscriber_max_buffer_size(),
        history: c.history_size(),
        safe_overflow: c.has_safe_overflow(),
    }
}

fn mismatch(name: &str, have: &ServiceSettings, want: &ServiceSettings) -> TransportError {
    TransportError::Middleware {
        transport: NAME,
        detail: format!(
            "service {name} already exists with other QoS: the peer created it as {}, this side asks for {}; both sides need the same --reliability, --history/--depth and --durability",
            have.describe(),
            want.describe()
        ),
    }
}
