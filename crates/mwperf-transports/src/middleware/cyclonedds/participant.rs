//! The participant an endpoint creates its entities in: its own, or with
//! `Spec::shared_session` the one this process has in the domain (a graph node's endpoints share
//! it, as a ROS 2 node's publishers and subscriptions share rmw_cyclonedds's participant).
//! Cyclone is thread-safe: endpoints of one participant create, use and delete their own
//! readers, writers and waitsets from any thread.
//!
//! The key is the domain alone: a process has one configuration per domain (`domain.rs`), and
//! everything else an endpoint sets (QoS, max-blocking) belongs to its reader or writer.

use super::ffi::{self, Api};
use super::{check, T};
use crate::session::{SessionCache, SessionRef};
use crate::TransportError;

/// A Cyclone participant, deleted (with whatever is left in it) when dropped.
pub struct Participant {
    api: &'static Api,
    pub handle: ffi::dds_entity_t,
}

/// The shared participants of this process, by domain.
static SHARED: SessionCache<u32, Participant> = SessionCache::new(T);

impl Participant {
    /// A participant in `domain` (which must exist: `domain::ensure`), shared or not.
    pub fn session(
        api: &'static Api,
        domain: u32,
        shared: bool,
    ) -> Result<SessionRef<Participant>, TransportError> {
        SHARED.session(shared, domain, || Participant::create(api, domain))
    }

    fn create(api: &'static Api, domain: u32) -> Result<Participant, TransportError> {
        // SAFETY: plain constructor call; a negative return is an error code.
        let handle =
            unsafe { (api.dds_create_participant)(domain, std::ptr::null(), std::ptr::null()) };
        check(
            api,
            handle,
            format_args!("creating a participant in domain {domain}"),
        )?;
        Ok(Participant { api, handle })
    }
}

impl Drop for Participant {
    fn drop(&mut self) {
        // SAFETY: deleted once, after every endpoint holding it (and its entities) is gone.
        unsafe { (self.api.dds_delete)(self.handle) };
    }
}
