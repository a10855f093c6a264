//! The zenoh session an endpoint declares its publisher and subscriber on: its own, or with
//! `Spec::shared_session` the one this process already has for the same mode, direction and
//! endpoint (a graph node's endpoints share it, as a ROS 2 node on rmw_zenoh has one session).
//! A zenoh `Session` is `Send + Sync`; it is closed when the last endpoint holding it drops.
//!
//! The key: in client mode the router's endpoint (every session connects there); in peer mode
//! the endpoint and whether the session listens on it or connects to it (a session's listen and
//! connect endpoints are fixed when it opens). A listener asked for `HOST:0` shares the session
//! that first resolved it: the node's subscriptions listen on one port. A peer that would connect
//! to an endpoint this process's shared session listens on uses that session (the subscription
//! is in it: a node publishing what it subscribes to).

use zenoh::{Session, Wait};

use super::address::Address;
use super::settings::{Mode, Settings};
use crate::session::{SessionCache, SessionRef};
use crate::tls_files::TlsFiles;
use crate::{Side, TransportError};

/// An open session and the endpoint it actually uses (port 0 resolved); closed on drop.
pub struct Opened {
    pub session: Session,
    pub endpoint: String,
}

impl Drop for Opened {
    fn drop(&mut self) {
        let _ = self.session.close().wait();
    }
}

#[derive(Debug, PartialEq, Eq)]
struct Key {
    mode: Mode,
    listens: bool,
    endpoint: String,
    /// Endpoints with other TLS files never share a session.
    tls: Option<TlsFiles>,
}

static SHARED: SessionCache<Key, Opened> = SessionCache::new(super::NAME);

/// The session for `side` in the settings' mode at `address`, shared or not.
pub fn session(
    side: Side,
    settings: &Settings,
    address: &Address,
    shared: bool,
) -> Result<SessionRef<Opened>, TransportError> {
    let (mode, tls) = (settings.mode, settings.tls.as_ref());
    super::settings::check_link(
        address,
        tls,
        mode == Mode::Peer && side.is_listener(),
        settings.link.as_deref(),
    )?;
    if shared && mode == Mode::Peer && !side.is_listener() {
        if let Some(own) =
            SHARED.find(|k, s| k.listens && s.endpoint == address.endpoint && k.tls.as_ref() == tls)
        {
            return Ok(own);
        }
    }
    let key = Key {
        mode,
        listens: mode == Mode::Peer && side.is_listener(),
        endpoint: address.endpoint.clone(),
        tls: tls.cloned(),
    };
    SHARED.session(shared, key, || {
        super::open_session(side, mode, address, tls)
            .map(|(session, endpoint)| Opened { session, endpoint })
    })
}
