//! Opening a measuring role's transport: a pub's clock-sync server first, then the topics' names
//! and addresses (one per subscriber and topic), each topic's endpoint (a fan-out over several
//! subscribers), and a listener's READY line once they all are open.

use std::io::Write;

use mwperf_transports::{Side, Spec, TransportError};

use crate::cli::Role;
use crate::session::Session;
use crate::{addresses, allocs, fanout, multi, topic_names};

/// What opening worked out: each topic's name and samples file (`--samples`), and the
/// addresses and specs behind its endpoints. The session keeps it until the report is written,
/// so that --count-allocs counts its frees in the teardown phase.
#[derive(Default)]
pub struct Plan {
    pub names: Vec<String>,
    pub samples: Vec<Option<String>>,
    /// One address group per subscriber (`--subscribers`).
    groups: Vec<String>,
    /// groups_addrs[s][t]: subscriber s's address for topic t.
    groups_addrs: Vec<Vec<String>>,
    /// Each topic's addresses, one per subscriber, joined by ';'.
    addrs: Vec<String>,
    /// specs[s][t]: the open arguments of subscriber s's endpoint for topic t.
    specs: Vec<Vec<Spec>>,
}

/// Why nothing was opened.
pub enum Stop {
    /// A usage error (exit 2, no report).
    Usage(String),
    /// The run fails: reported as failed.
    Failed(String),
}

/// Open the session's topics (one endpoint each), filling its plan.
pub fn open(session: &mut Session) -> Result<Vec<multi::Topic>, Stop> {
    session.serve_clock().map_err(Stop::Failed)?;
    let (role, common, plan) = (session.role, session.common, &mut session.plan);
    let (side, flag, addr, samples) = match role {
        Role::Ping(a) => (Side::Ping, "--connect", &a.connect, &a.samples),
        Role::Pub(a) => (Side::Pub, "--connect", &a.connect, &a.samples),
        Role::Pong(a) => (Side::Pong, "--listen", &a.listen, &a.samples),
        Role::Sub(a) => (Side::Sub, "--listen", &a.listen, &a.samples),
        _ => unreachable!("not a measuring role"),
    };
    plan.names = topic_names::names(&common.topic_names, common.topics).map_err(Stop::Usage)?;
    // with several topics, each its own samples file (PATH.<topic name>.csv)
    plan.samples = topic_names::samples_paths(samples.as_deref(), &plan.names);
    let subscribers = match role {
        Role::Ping(a) if a.subscribers > 1 => return Err(Stop::Usage(format!("--subscribers {}: only a pub (one way) has several subscribers; a ping measures the round trip to one pong (use --subscribers 1)", a.subscribers))),
        Role::Pub(a) => a.subscribers,
        _ => 1,
    };
    plan.groups =
        addresses::subscribers(common.transport, flag, addr, subscribers).map_err(Stop::Usage)?;
    // one group for middleware and listeners
    for group in &plan.groups {
        let addrs =
            addresses::split(common.transport, flag, group, common.topics).map_err(Stop::Usage)?;
        addresses::distinct(flag, &addresses::fixed(common.transport, &addrs))
            .map_err(Stop::Usage)?;
        plan.groups_addrs.push(addrs);
    }
    plan.addrs = (0..common.topics as usize)
        .map(|t| {
            plan.groups_addrs
                .iter()
                .map(|g| g[t].clone())
                .collect::<Vec<_>>()
                .join(";")
        })
        .collect();
    plan.specs = plan
        .groups_addrs
        .iter()
        .map(|g| {
            g.iter()
                .map(|a| common.spec(a))
                .collect::<Result<Vec<_>, _>>()
        })
        .collect::<Result<Vec<_>, _>>()
        .map_err(Stop::Usage)?;
    let size_ok = match role {
        Role::Ping(a) | Role::Pub(a) => {
            crate::roles::check_size(common.transport, "--payload", a.payload)
        }
        _ => Ok(()),
    };
    let specs = &plan.specs;
    let open_topic = |t: usize| -> Result<Box<dyn mwperf_transports::Endpoint>, TransportError> {
        let mut eps = specs
            .iter()
            .map(|g| mwperf_transports::open(common.transport, side, &g[t]))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(if eps.len() == 1 {
            eps.pop().expect("one subscriber")
        } else {
            Box::new(fanout::FanOut::new(eps))
        })
    };
    let t0 = mwperf_core::clock::now_ns();
    let opened = size_ok.map_err(TransportError::Address).and_then(|_| {
        (0..plan.addrs.len())
            .map(open_topic)
            .collect::<Result<Vec<_>, _>>()
    });
    if opened.is_ok() {
        crate::phases::opened(mwperf_core::clock::now_ns() - t0);
    }
    let topics: Result<Vec<multi::Topic>, TransportError> = opened.map(|eps| {
        let names: Vec<String> = if side.is_listener() {
            eps.iter().map(|ep| ep.local_addr()).collect()
        } else {
            plan.addrs.clone()
        };
        eps.into_iter().zip(names).collect()
    });
    if let Ok(t) = &topics {
        let names: Vec<String> = t.iter().map(|(_, n)| n.clone()).collect();
        addresses::distinct(flag, &names).map_err(Stop::Usage)?;
        if side.is_listener() {
            println!("READY {} {}", common.transport.name(), names.join(","));
            let _ = std::io::stdout().flush();
            allocs::setup_done();
        }
    }
    match topics {
        Ok(topics) => Ok(topics),
        Err(e) if e.is_usage() => Err(Stop::Usage(e.to_string())),
        Err(e) => Err(Stop::Failed(e.to_string())),
    }
}
