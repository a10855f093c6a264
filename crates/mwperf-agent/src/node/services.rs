//! Opening a node's services before READY: its servers (each at its service's address), then
//! its clients, each of which makes first contact with its server (roles/client.rs's probe
//! calls) — so READY means every call of the node can be answered. Both sides share the node's
//! middleware session where the transport has one per node (`Spec::shared_session`), as a ROS
//! node's clients and services share its participant.

use mwperf_core::clock::now_ns;
use mwperf_core::result::Discovery;
use mwperf_transports::{open_client, open_server, CallId, Client, Qos, Server, Spec};

use super::spec::NodeSpec;
use crate::cli::Common;
use crate::roles::client::{first_contact, Probe};

/// How long a client waits before opening again (its server does not listen yet).
const RETRY: std::time::Duration = std::time::Duration::from_millis(20);

fn spec_at(common: &Common, addr: &str, qos: &Qos) -> Result<Spec, String> {
    let mut s = common.spec(addr)?;
    s.qos = *qos;
    s.shared_session = true;
    Ok(s)
}

/// Every server of the node, in the spec's order; Err names the service.
pub fn open_servers(
    common: &Common,
    spec: &NodeSpec,
    qos: &Qos,
) -> Result<Vec<Box<dyn Server>>, String> {
    spec.servers
        .iter()
        .map(|s| {
            let at = spec_at(common, &s.address, qos)?;
            open_server(common.transport, &at)
                .map_err(|e| format!("server of '{}' at {}: {e}", s.service, s.address))
        })
        .collect()
}

/// A client that made first contact with its server.
pub type Contacted = (Box<dyn Client>, (Discovery, Vec<CallId>));

/// Every client of the node, opened (again until `deadline` while its server is not there yet)
/// and in first contact with its server; Err names the service.
pub fn open_clients(
    common: &Common,
    spec: &NodeSpec,
    qos: &Qos,
    run_id: u32,
    deadline: u64,
) -> Result<Vec<Contacted>, String> {
    let mut out = Vec::with_capacity(spec.clients.len());
    for c in &spec.clients {
        let what = format!("client of '{}' at {}", c.service, c.address);
        let at = spec_at(common, &c.address, qos)?;
        let mut client = loop {
            match open_client(common.transport, &at) {
                Ok(client) => break client,
                Err(e) if !e.is_usage() && now_ns() < deadline && !crate::signals::stopped() => {
                    std::thread::sleep(RETRY);
                }
                Err(e) => return Err(format!("{what}: {e}")),
            }
        };
        let left = deadline.saturating_sub(now_ns()).max(1);
        let probe = Probe {
            run_id,
            topic: c.id,
            payload: c.request_bytes as usize,
            discovery_timeout_ns: left,
            bound_ns: left,
            server: &c.address,
        };
        let contact = first_contact(client.as_mut(), &probe).map_err(|e| format!("{what}: {e}"))?;
        out.push((client, contact));
    }
    Ok(out)
}
