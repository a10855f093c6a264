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

use ::rustdds::{
    DomainParticipant, DomainParticipantBuilder, DomainParticipantSecurityConfigFiles,
};

use super::network::Network;
use super::{middleware, signals, SOCKET_BUFFER};
use crate::dds_security::SecurityFiles;
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

/// The shared participants of this process, by domain, `--opt network`, `--opt security` and
/// slot.
#[allow(clippy::type_complexity)]
static SHARED: SessionCache<(u32, Network, Option<SecurityFiles>, usize), Participant> =
    SessionCache::new(super::NAME);

/// A participant in `domain` on `network` for an endpoint on `topics`, shared or not; with
/// `security` it joins with DDS-Security's builtin plugins as that identity.
pub fn session(
    domain: u32,
    network: &Network,
    security: Option<&SecurityFiles>,
    shared: bool,
    topics: Vec<String>,
) -> Result<Held, TransportError> {
    let open = || {
        create(domain, network, security).map(|dp| Participant {
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
        let key = (domain, network.clone(), security.cloned(), slot);
        let participant = SHARED.get_or_open(key, open)?;
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

fn create(
    domain: u32,
    network: &Network,
    security: Option<&SecurityFiles>,
) -> Result<DomainParticipant, TransportError> {
    let (only, same_host) = network.resolve()?;
    let mut builder = DomainParticipantBuilder::new(domain as u16)
        .with_only_networks(only)
        .same_host_loopback(same_host)
        .socket_receive_buffer_size(SOCKET_BUFFER)
        .socket_send_buffer_size(SOCKET_BUFFER);
    let key = match security {
        Some(files) => {
            let (config, key) = config_files(files)?;
            builder = builder.builtin_security(config);
            Some(key)
        }
        None => None,
    };
    let built = signals::with_async_signals_blocked(|| builder.build()).map_err(|e| {
        middleware(
            &format!("cannot create a participant in domain {domain}"),
            e,
        )
    });
    drop(key); // read while the participant was created
    built
}

/// RustDDS's builtin plugins' files for an identity: the identity CA is the permissions CA too
/// (one CA per run). RustDDS takes its key file only by the ROS 2 default name (`key.pem` in a
/// folder: its key type is not public), so a private folder beside the key holds a link of that
/// name to it until the participant has read it ([`KeyLink`]).
fn config_files(
    files: &SecurityFiles,
) -> Result<(DomainParticipantSecurityConfigFiles, KeyLink), TransportError> {
    let link = KeyLink::to(&files.key)?;
    let mut config = DomainParticipantSecurityConfigFiles::with_ros_default_names(
        &link.0,
        String::new(), // an unencrypted key (RustDDS decrypts none)
    );
    config.identity_ca_certificate = files.ca.clone();
    config.participant_identity_certificate = files.cert.clone();
    config.permissions_ca_certificate = files.ca.clone();
    config.domain_governance_document = files.governance.clone();
    config.participant_permissions_document = files.permissions.clone();
    config.certificate_revocation_list = None;
    Ok((config, link))
}

/// A private folder holding `key.pem`, a link to an identity's key; removed when dropped.
struct KeyLink(std::path::PathBuf);

impl KeyLink {
    fn to(key: &std::path::Path) -> Result<KeyLink, TransportError> {
        use std::os::unix::fs::DirBuilderExt;
        let name = format!(
            ".rustdds-key-{}-{:x}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos())
        );
        let folder = key.with_file_name(name);
        let made = std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&folder)
            .and_then(|()| std::os::unix::fs::symlink(key, folder.join("key.pem")));
        let link = KeyLink(folder);
        made.map_err(|e| TransportError::Middleware {
            transport: super::NAME,
            detail: format!(
                "--opt security: cannot link {} as key.pem for RustDDS beside it: {e}",
                key.display()
            ),
        })?;
        Ok(link)
    }
}

impl Drop for KeyLink {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
