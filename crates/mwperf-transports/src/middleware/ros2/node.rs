//! The ROS 2 node an endpoint creates its publisher and subscription in: its own (one rcl
//! context, so one DDS participant with rmw_fastrtps_cpp), or with `Spec::shared_session` the
//! one this process has for the domain (a graph node's endpoints share one node, as a ROS 2
//! node's publishers and subscriptions do).
//!
//! Node names are `mwperf_<pid>_<n>` in the root namespace: unique on the host, so two agents
//! never appear as one node in the ROS 2 graph.

use std::ffi::{c_char, CString};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;

use super::super::fastdds_shm;
use super::ffi::{self, Api};
use super::T;
use crate::session::{SessionCache, SessionRef};
use crate::TransportError;

/// A node of the shim; closed (after every endpoint in it) when dropped.
pub struct Node {
    api: &'static Api,
    pub ptr: *mut ffi::mwr_node,
    /// rcl does not promise that one node's entities are created and destroyed from several
    /// threads at once: endpoints of a shared node open and close under this lock.
    pub entities: Mutex<()>,
    pub name: String,
}

// SAFETY: the node is only touched to create or destroy its entities, under `entities`; the
// handle is closed once, by the last holder.
unsafe impl Send for Node {}
unsafe impl Sync for Node {}

static SHARED: SessionCache<u32, Node> = SessionCache::new(T);

/// Shared nodes kept open past their last endpoint while held ([`hold_shared`]), until
/// [`release_held`]: a graph node writes its report before its ROS 2 nodes close, because
/// closing one can hang inside the RMW (Fast DDS 3.2.2's participant destruction while other
/// participants leave, docs/ros2.md) and a node stopped then would lose what it measured.
static HELD: Mutex<Option<Vec<SessionRef<Node>>>> = Mutex::new(None);

/// From now on keep every shared node open until [`release_held`].
pub fn hold_shared() {
    *HELD.lock().unwrap_or_else(|p| p.into_inner()) = Some(Vec::new());
}

/// Close the held nodes whose endpoints are all gone (in this thread); stop holding.
pub fn release_held() {
    let held = HELD.lock().unwrap_or_else(|p| p.into_inner()).take();
    drop(held);
}

impl Node {
    /// The node for `domain`, shared or not.
    pub fn session(
        api: &'static Api,
        domain: u32,
        shared: bool,
    ) -> Result<SessionRef<Node>, TransportError> {
        let node = SHARED.session(shared, domain, || Node::create(api, domain))?;
        if shared {
            if let Some(held) = HELD.lock().unwrap_or_else(|p| p.into_inner()).as_mut() {
                if !held.iter().any(|n| n.ptr == node.ptr) {
                    held.push(node.clone());
                }
            }
        }
        Ok(node)
    }

    fn create(api: &'static Api, domain: u32) -> Result<Node, TransportError> {
        fastdds_shm::watch();
        static N: AtomicU32 = AtomicU32::new(0);
        let name = format!(
            "mwperf_{}_{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        );
        let c_name = CString::new(name.clone()).expect("no NUL");
        let mut err = [0 as c_char; 512];
        // SAFETY: the name outlives the call; err is a writable buffer.
        let ptr = unsafe { (api.node_open)(domain, c_name.as_ptr(), err.as_mut_ptr(), err.len()) };
        if ptr.is_null() {
            return Err(TransportError::Middleware {
                transport: T,
                detail: format!(
                    "{} (domain {domain}, ROS 2 {})",
                    ffi::text(&err),
                    api.installation.describe()
                ),
            });
        }
        Ok(Node {
            api,
            ptr,
            entities: Mutex::new(()),
            name,
        })
    }
}

impl Drop for Node {
    /// Close it, then remove the Fast DDS shared-memory files nobody maps any more (an
    /// rmw_fastrtps_cpp participant may leave a port segment: [`fastdds_shm`]).
    fn drop(&mut self) {
        // SAFETY: closed once, after every endpoint in it was closed (each holds the node).
        unsafe { (self.api.node_close)(self.ptr) };
        fastdds_shm::sweep();
    }
}
