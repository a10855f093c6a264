//! The participant an endpoint creates its writer and reader in: its own, or with
//! `Spec::shared_session` the one this process has for the same session-level settings (a graph
//! node's endpoints share it, as a ROS 2 node's entities share rmw_fastrtps's participant).
//!
//! The key is what the shim sets on the participant, not on a reader or writer: the domain, the
//! shared-memory transport, the interface and discovery peers, and the rate limit (a flow
//! controller of the participant) and its DDS-Security identity. Fast DDS's participant is thread-safe; the shim guards the
//! topics its endpoints share with a mutex, so endpoints open and close from any thread.

use super::ffi::{self, Api};
use super::{shm, T};
use crate::session::{SessionCache, SessionRef};
use crate::TransportError;

/// A participant of the shim; closed (with whatever is left in it) when dropped.
pub struct Participant {
    api: &'static Api,
    pub ptr: *mut ffi::mwfd_participant,
}

// SAFETY: Fast DDS's DomainParticipant is thread-safe, and the shim's topic table is behind a
// mutex; the handle is closed once, by the last holder.
unsafe impl Send for Participant {}
unsafe impl Sync for Participant {}

/// What endpoints sharing a participant must agree on.
#[derive(Debug, PartialEq, Eq)]
pub struct Key {
    pub domain: u32,
    pub shm: bool,
    pub interface: Option<String>,
    pub peers: Option<String>,
    pub max_bytes_per_s: i64,
    /// `--opt security`: the participant's identity (another identity, another participant)
    pub security: Option<String>,
}

static SHARED: SessionCache<Key, Participant> = SessionCache::new(T);

impl Participant {
    /// The participant for `config` (whose session-level fields are `key`'s), shared or not.
    pub fn session(
        api: &'static Api,
        key: Key,
        config: &ffi::Config,
        shared: bool,
    ) -> Result<SessionRef<Participant>, TransportError> {
        let domain = key.domain;
        SHARED.session(shared, key, || Participant::create(api, config, domain))
    }

    fn create(
        api: &'static Api,
        config: &ffi::Config,
        domain: u32,
    ) -> Result<Participant, TransportError> {
        let mut err = [0 as std::ffi::c_char; 512];
        // SAFETY: the config's strings outlive the call; err is a writable buffer.
        let ptr = unsafe { (api.participant_open)(config, err.as_mut_ptr(), err.len()) };
        if ptr.is_null() {
            return Err(TransportError::Middleware {
                transport: T,
                detail: format!("{} (domain {domain})", ffi::text(&err)),
            });
        }
        Ok(Participant { api, ptr })
    }
}

impl Drop for Participant {
    /// Close it, then remove the shared-memory files that nobody maps any more.
    fn drop(&mut self) {
        // SAFETY: closed once, after every endpoint in it was closed.
        unsafe { (self.api.participant_close)(self.ptr) };
        shm::sweep();
    }
}
