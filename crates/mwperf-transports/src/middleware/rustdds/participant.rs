//! The DomainParticipant an endpoint creates its publisher, subscriber, reader and writer in:
//! its own, or with `Spec::shared_session` the one this process has for the domain and network
//! (a graph node's endpoints share it, as a ROS 2 node's entities share its participant). A
//! RustDDS participant is a handle (`Arc<Mutex<..>>` inside) that is `Send` and `Sync`: its
//! endpoints' readers and writers are used from the node's threads; it stops its threads when
//! the last endpoint holding it is dropped.
//!
//! RustDDS matches a writer with a reader of the same participant (the writer counts it) but
//! never delivers to it (measured with 0.15.1: nothing arrives in 15 s), so a shared participant
//! holds each topic once: an endpoint on a topic the participant already has (a node subscribing
//! to what it publishes) takes the next shared participant of the key instead (its slot).
//!
//! One participant per node matters on loopback: RustDDS announces itself only to participant
//! ids 0..12 there, so a graph meets at most 13 participants, i.e. 13 nodes (not 13 endpoints).

use std::sync::Mutex;

use ::rustdds::{DomainParticipant, DomainParticipantBuilder};

use super::network::Network;
use super::{middleware, signals, SOCKET_BUFFER};
use crate::session::{SessionCache, SessionRef};
use crate::TransportError;

/// A participant and the topics its endpoints use (each at most once, see above).
pub struct Participant {
    pub dp: DomainParticipant,
    topics: Mutex<Vec<String>>,
}

/// An endpoint's hold on its participant; gives its topics back when dropped.
pub struct Held {
    pub participant: SessionRef<Participant>,
    topics: Vec<String>,
}

impl Drop for Held {
    fn drop(&mut self) {
        let mut used = self
            .participant
            .topics
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        used.retain(|t| !self.topics.contains(t));
    }
}

/// The shared participants of this process, by domain, `--opt network` and slot.
static SHARED: SessionCache<(u32, Network, usize), Participant> = SessionCache::new(super::NAME);

/// A participant in `domain` on `network` for an endpoint on `topics`, shared or not.
pub fn session(
    domain: u32,
    network: &Network,
    shared: bool,
    topics: Vec<String>,
) -> Result<Held, TransportError> {
    let open = || {
        create(domain, network).map(|dp| Participant {
            dp,
            topics: Mutex::new(Vec::new()),
        })
    };
    if !shared {
        let participant = SessionRef::own(open()?);
        return Ok(Held {
            participant,
            topics: Vec::new(),
        });
    }
    for slot in 0.. {
        let participant = SHARED.get_or_open((domain, network.clone(), slot), open)?;
        let mut used = participant.topics.lock().unwrap_or_else(|p| p.into_inner());
        if topics.iter().any(|t| used.contains(t)) {
            continue;
        }
        used.extend(topics.iter().cloned());
        drop(used);
        return Ok(Held {
            participant,
            topics,
        });
    }
    unreachable!("slots are unbounded")
}

fn create(domain: u32, network: &Network) -> Result<DomainParticipant, TransportError> {
    let (only, same_host) = network.resolve()?;
    let builder = DomainParticipantBuilder::new(domain as u16)
        .with_only_networks(only)
        .same_host_loopback(same_host)
        .socket_receive_buffer_size(SOCKET_BUFFER)
        .socket_send_buffer_size(SOCKET_BUFFER);
    signals::with_async_signals_blocked(|| builder.build()).map_err(|e| {
        middleware(
            &format!("cannot create a participant in domain {domain}"),
            e,
        )
    })
}
