//! Foxglove request/response (see crate::service): none. In the Foxglove WebSocket protocol only
//! the server advertises services (`advertiseServices`) and answers `serviceCallRequest` with
//! `serviceCallResponse`; a client can call but never serve. mwperf's foxglove endpoints are
//! WebSocket clients of a relay server (python/mwperf/bridges/foxglove_server.py, foxglove-sdk),
//! which advertises no services, so there is no server side to build here; the descriptor says
//! so and crate::service refuses before it gets here. Serving would take the relay advertising a
//! service that forwards each call to an mwperf client (a Python change).

use crate::service::{Client, Server};
use crate::{Spec, TransportError};

fn missing() -> TransportError {
    TransportError::Unsupported {
        transport: "foxglove",
        what: "request/response".into(),
    }
}

pub fn client(_spec: &Spec) -> Result<Box<dyn Client>, TransportError> {
    Err(missing())
}

pub fn server(_spec: &Spec) -> Result<Box<dyn Server>, TransportError> {
    Err(missing())
}
