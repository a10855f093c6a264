//! The iceoryx2 node an endpoint opens its services in: its own, or with `Spec::shared_session`
//! the one this process has for the `--opt domain` (a graph node's endpoints share it, as a ROS 2
//! node on rmw_iceoryx2 has one). Nodes are created with iceoryx2's signal handling off (the agent
//! owns SIGINT/SIGTERM); creating one also removes what dead nodes (killed processes) left behind.
//!
//! A `Node` of the thread-safe service flavour is `Send` but not `Sync`, so a shared one sits
//! behind a mutex, taken only to open services (at open time); the services and ports it made
//! keep its state alive and are used without it. The node is removed when the last endpoint
//! holding it drops.

use std::sync::Mutex;

use iceoryx2::prelude::*;

use super::{middleware, settings, Svc};
use crate::session::{SessionCache, SessionRef};
use crate::{Spec, TransportError};

pub type SharedNode = SessionRef<Mutex<Node<Svc>>>;

/// The shared nodes of this process, by `--opt domain` (None: iceoryx2's default prefix).
static SHARED: SessionCache<Option<String>, Mutex<Node<Svc>>> = SessionCache::new(super::NAME);

/// The node for an endpoint named after its role (`mwperf-ping`, ...; a shared one is
/// `mwperf-node`).
pub fn session(role: &str, spec: &Spec) -> Result<SharedNode, TransportError> {
    let opts = spec.options_of(&super::super::iceoryx2_descriptor::DESCRIPTOR)?;
    let domain = opts.get("domain").map(str::to_string);
    let role = if spec.shared_session { "node" } else { role };
    SHARED.session(spec.shared_session, domain, || {
        create(role, spec).map(Mutex::new)
    })
}

fn create(role: &str, spec: &Spec) -> Result<Node<Svc>, TransportError> {
    let node_name = NodeName::new(&format!("mwperf-{role}"))
        .map_err(|e| middleware(format!("node name: {e:?}")))?;
    let mut builder = NodeBuilder::new()
        .name(&node_name)
        .signal_handling_mode(SignalHandlingMode::Disabled);
    if let Some(config) = settings::domain_config(spec)? {
        builder = builder.config(&config);
    }
    builder.create::<Svc>().map_err(|e| {
        middleware(format!(
            "cannot create a node: {e:?} (is /dev/shm writable?)"
        ))
    })
}
