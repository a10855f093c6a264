//! The calling side: one client port; each call's `PendingResponse` is kept under its id until
//! its response came (or its server let go of the request without one: a failed call).

use std::collections::HashMap;
use std::time::Instant;

use iceoryx2::pending_response::PendingResponse;
use iceoryx2::port::client::Client as Port;
use iceoryx2::port::{BackpressureAction, BackpressureInfo, LoanError};
use iceoryx2::prelude::*;

use super::super::node::SharedNode;
use super::super::settings::Settings;
use super::super::{middleware, Svc, NAME};
use super::{chunks, poll_until, ReqRes, INITIAL_SLICE, MAX_IN_FLIGHT, MAX_SERVERS};
use crate::service::{CallId, Client, Reply};
use crate::TransportError;

type Pending = PendingResponse<Svc, [u8], (), [u8], ()>;

pub struct Iceoryx2Client {
    // Fields drop in order: pending calls, the port and the service before the node.
    pending: HashMap<CallId, Pending>,
    /// Ids of `pending` in call order, looked at round-robin (reused: no allocation per look).
    order: Vec<CallId>,
    port: Port<Svc, [u8], (), [u8], ()>,
    service: ReqRes,
    next: CallId,
    settings: Settings,
    _node: SharedNode,
}

impl Iceoryx2Client {
    pub(super) fn new(
        service: ReqRes,
        settings: &Settings,
        node: SharedNode,
    ) -> Result<Iceoryx2Client, TransportError> {
        let timeout = settings.send_timeout;
        // a request for each server's queue twice over, plus the one being loaned
        let count = chunks(settings, MAX_SERVERS * 2 * MAX_IN_FLIGHT + 1);
        let port = service
            .client_builder()
            .initial_max_slice_len(INITIAL_SLICE)
            .allocation_strategy(AllocationStrategy::PowerOfTwo)
            .override_request_preallocation(move |_| count)
            .backpressure_strategy(BackpressureStrategy::RetryUntilDelivered)
            .set_backpressure_handler(move |info: &BackpressureInfo| {
                if info.elapsed_time < timeout {
                    BackpressureAction::Retry
                } else {
                    BackpressureAction::DiscardDataAndFail
                }
            })
            .create()
            .map_err(|e| {
                middleware(format!(
                    "cannot create a client on {}: {e:?}",
                    service.name()
                ))
            })?;
        Ok(Iceoryx2Client {
            pending: HashMap::with_capacity(MAX_IN_FLIGHT),
            order: Vec::with_capacity(MAX_IN_FLIGHT),
            port,
            service,
            next: 0,
            settings: *settings,
            _node: node,
        })
    }

    /// One reply of any pending call, without waiting.
    fn look(&mut self, buf: &mut Vec<u8>) -> Result<Option<Reply>, TransportError> {
        for i in 0..self.order.len() {
            let call = self.order[i];
            let Some(p) = self.pending.get(&call) else {
                continue;
            };
            let receive = |p: &Pending| {
                p.receive().map_err(|e| {
                    middleware(format!(
                        "receive a response on {}: {e:?}",
                        self.service.name()
                    ))
                })
            };
            let mut got = receive(p)?;
            if got.is_none() {
                if p.is_connected() {
                    continue;
                }
                // the server let go of the request: its response may have come just before
                got = receive(p)?;
            }
            let ok = match got {
                Some(response) => {
                    buf.clear();
                    buf.extend_from_slice(response.payload());
                    true
                }
                // the server dropped the request unanswered (or went away): a failed call
                None => {
                    buf.clear();
                    false
                }
            };
            self.pending.remove(&call);
            self.order.remove(i);
            return Ok(Some(Reply { call, ok }));
        }
        Ok(None)
    }
}

impl Client for Iceoryx2Client {
    fn wait_matched(&mut self, timeout_ns: u64) -> Result<(), TransportError> {
        let start = Instant::now();
        let servers = poll_until(timeout_ns, || {
            Ok((self.service.dynamic_config().number_of_servers() > 0).then_some(()))
        })?;
        servers.ok_or_else(|| TransportError::NotMatched {
            transport: NAME,
            waited_ns: start.elapsed().as_nanos() as u64,
            detail: format!("no server on {}", self.service.name()),
        })
    }

    fn call(&mut self, request: &[u8]) -> Result<CallId, TransportError> {
        if self.pending.len() >= MAX_IN_FLIGHT {
            return Err(middleware(format!(
                "{} calls outstanding on {}: the most one iceoryx2 client may have (abandon the ones that timed out)",
                MAX_IN_FLIGHT,
                self.service.name()
            )));
        }
        let start = Instant::now();
        let loaned = loop {
            match self.port.loan_slice_uninit(request.len()) {
                Ok(r) => break r,
                // every chunk is still held by servers: wait (bounded) for one to come back
                Err(LoanError::OutOfMemory) if start.elapsed() < self.settings.send_timeout => {
                    std::thread::sleep(super::POLL_SLEEP)
                }
                Err(e) => {
                    return Err(middleware(format!(
                        "cannot loan a {}-byte request on {}: {e:?}",
                        request.len(),
                        self.service.name()
                    )))
                }
            }
        };
        let pending = loaned.write_from_slice(request).send().map_err(|e| {
            middleware(format!(
                "send a request on {}: {e:?} (a full server queue is waited for {:?}; --opt send-timeout)",
                self.service.name(),
                self.settings.send_timeout
            ))
        })?;
        self.next += 1;
        self.pending.insert(self.next, pending);
        self.order.push(self.next);
        Ok(self.next)
    }

    fn recv_reply(
        &mut self,
        buf: &mut Vec<u8>,
        wait_ns: u64,
    ) -> Result<Option<Reply>, TransportError> {
        poll_until(wait_ns, || self.look(buf))
    }

    fn abandon(&mut self, call: CallId) {
        if self.pending.remove(&call).is_some() {
            self.order.retain(|&c| c != call);
        }
    }

    fn max_in_flight(&self) -> Option<usize> {
        Some(MAX_IN_FLIGHT)
    }
}
