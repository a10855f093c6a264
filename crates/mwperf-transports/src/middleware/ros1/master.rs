//! Calls to rosmaster's master API (rosmaster/master_api.py): register and unregister our
//! publication, subscription and service; look a service up.

use std::time::Duration;

use super::slave::Config;
use super::xmlrpc::{self, CallError, Value};
use crate::TransportError;

/// rosmaster answers in milliseconds; a busy one (or a stopped one) must not hang the agent.
const TIMEOUT: Duration = Duration::from_secs(5);

/// One master call; an unreachable master becomes the one-line "start one" error.
fn call(cfg: &Config, method: &str, params: &[Value]) -> Result<Value, TransportError> {
    let v = call_raw(cfg, method, params)?;
    xmlrpc::ros_result(v).map_err(|e| TransportError::Middleware {
        transport: "ros1",
        detail: format!("rosmaster at {} refused {method}: {e}", cfg.master),
    })
}

/// One master call, its `[code, message, value]` answer as it came.
fn call_raw(cfg: &Config, method: &str, params: &[Value]) -> Result<Value, TransportError> {
    match xmlrpc::call(&cfg.master, method, params, TIMEOUT) {
        Ok(v) => Ok(v),
        Err(CallError::Connect(e)) => Err(TransportError::Missing {
            what: format!("rosmaster at {} ({e})", cfg.master),
            install: format!(
                "start one: `ROS_MASTER_URI={} rosmaster --core -p {}` (`mwperf run` starts it for you; install: apt-get install python3-rosmaster)",
                cfg.master,
                xmlrpc::split_uri(&cfg.master).map_or(11311, |(_, port, _)| port)
            ),
        }),
        Err(CallError::Protocol(e)) => Err(TransportError::Middleware { transport: "ros1", detail: format!("rosmaster at {}: {e} (is it a ROS master?)", cfg.master) }),
    }
}

/// The URIs in a master answer's list (strings only; anything else is ignored).
fn uris(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap_or(&[])
        .iter()
        .filter_map(|u| u.as_str().map(str::to_string))
        .collect()
}

/// registerPublisher(caller_id, topic, topic_type, caller_api) → current subscribers (unused:
/// subscribers connect to us after the master's publisherUpdate reaches them).
pub fn register_publisher(cfg: &Config, topic: &str, api: &str) -> Result<(), TransportError> {
    call(
        cfg,
        "registerPublisher",
        &[
            Value::str(&cfg.caller_id),
            Value::str(topic),
            Value::str(super::tcpros::MSG_TYPE),
            Value::str(api),
        ],
    )
    .map(|_| ())
}

/// registerSubscriber(caller_id, topic, topic_type, caller_api) → the publishers' slave URIs.
pub fn register_subscriber(
    cfg: &Config,
    topic: &str,
    api: &str,
) -> Result<Vec<String>, TransportError> {
    call(
        cfg,
        "registerSubscriber",
        &[
            Value::str(&cfg.caller_id),
            Value::str(topic),
            Value::str(super::tcpros::MSG_TYPE),
            Value::str(api),
        ],
    )
    .map(|v| uris(&v))
}

/// unregisterPublisher / unregisterSubscriber(caller_id, topic, caller_api); best effort (drop).
pub fn unregister(cfg: &Config, method: &str, topic: &str, api: &str) {
    let _ = xmlrpc::call(
        &cfg.master,
        method,
        &[
            Value::str(&cfg.caller_id),
            Value::str(topic),
            Value::str(api),
        ],
        Duration::from_secs(2),
    );
}

/// registerService(caller_id, service, service_api, caller_api): `service_api` is our
/// `rosrpc://host:port`, `caller_api` our slave URI.
pub fn register_service(
    cfg: &Config,
    service: &str,
    service_api: &str,
    api: &str,
) -> Result<(), TransportError> {
    call(
        cfg,
        "registerService",
        &[
            Value::str(&cfg.caller_id),
            Value::str(service),
            Value::str(service_api),
            Value::str(api),
        ],
    )
    .map(|_| ())
}

/// lookupService(caller_id, service) → the provider's `rosrpc://` URI; None while no node
/// provides it (the master answers code -1 then).
pub fn lookup_service(cfg: &Config, service: &str) -> Result<Option<String>, TransportError> {
    let v = call_raw(
        cfg,
        "lookupService",
        &[Value::str(&cfg.caller_id), Value::str(service)],
    )?;
    match v.as_array() {
        Some([Value::Int(1), _, Value::Str(uri)]) => Ok(Some(uri.clone())),
        Some([Value::Int(_), _, _]) => Ok(None),
        _ => Err(TransportError::Middleware {
            transport: "ros1",
            detail: format!(
                "rosmaster at {} answered lookupService with {v:?}, not [code, message, uri]",
                cfg.master
            ),
        }),
    }
}
