//! The answering side: one server port; each `ActiveRequest` is kept under a token until it is
//! answered with one response loaned from the server's data segment.

use std::collections::HashMap;
use std::time::Instant;

use iceoryx2::active_request::ActiveRequest;
use iceoryx2::port::server::Server as Port;
use iceoryx2::port::{BackpressureAction, BackpressureInfo, LoanError};
use iceoryx2::prelude::*;

use super::super::node::SharedNode;
use super::super::settings::Settings;
use super::super::{middleware, Svc};
use super::{
    chunks, poll_until, ReqRes, INITIAL_SLICE, MAX_CLIENTS, MAX_IN_FLIGHT, RESPONSE_BUFFER,
};
use crate::service::{Server, Token};
use crate::TransportError;

type Active = ActiveRequest<Svc, [u8], (), [u8], ()>;

pub struct Iceoryx2Server {
    // Fields drop in order: unanswered requests, the port and the service before the node.
    pending: HashMap<Token, Active>,
    port: Port<Svc, [u8], (), [u8], ()>,
    service: ReqRes,
    next: Token,
    base: String,
    settings: Settings,
    _node: SharedNode,
}

impl Iceoryx2Server {
    pub(super) fn new(
        service: ReqRes,
        settings: &Settings,
        base: String,
        node: SharedNode,
    ) -> Result<Iceoryx2Server, TransportError> {
        let timeout = settings.send_timeout;
        // iceoryx2's worst case: each client's active requests twice over, each with a full
        // response buffer, one borrowed and one loaned response
        let count = chunks(
            settings,
            MAX_CLIENTS * 2 * MAX_IN_FLIGHT * (RESPONSE_BUFFER + 2),
        );
        let port = service
            .server_builder()
            .initial_max_slice_len(INITIAL_SLICE)
            .allocation_strategy(AllocationStrategy::PowerOfTwo)
            .max_loaned_responses_per_request(1)
            .override_response_preallocation(move |_| count)
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
                    "cannot create a server on {}: {e:?}",
                    service.name()
                ))
            })?;
        Ok(Iceoryx2Server {
            pending: HashMap::new(),
            port,
            service,
            next: 0,
            base,
            settings: *settings,
            _node: node,
        })
    }
}

impl Server for Iceoryx2Server {
    fn local_addr(&self) -> String {
        self.base.clone()
    }

    fn recv_request(
        &mut self,
        buf: &mut Vec<u8>,
        wait_ns: u64,
    ) -> Result<Option<Token>, TransportError> {
        let got = poll_until(wait_ns, || {
            self.port.receive().map_err(|e| {
                middleware(format!(
                    "receive a request on {}: {e:?}",
                    self.service.name()
                ))
            })
        })?;
        let Some(active) = got else {
            return Ok(None);
        };
        buf.clear();
        buf.extend_from_slice(active.payload());
        self.next += 1;
        self.pending.insert(self.next, active);
        Ok(Some(self.next))
    }

    fn reply(&mut self, token: Token, reply: &[u8]) -> Result<(), TransportError> {
        let active = self
            .pending
            .remove(&token)
            .ok_or_else(|| middleware(format!("no pending request {token} to answer")))?;
        if !active.is_connected() {
            return Ok(()); // the client gave up on it (or left): nobody to answer
        }
        let start = Instant::now();
        let loaned = loop {
            match active.loan_slice_uninit(reply.len()) {
                Ok(r) => break r,
                // every chunk is held by clients that have not read yet: wait (bounded)
                Err(LoanError::OutOfMemory) if start.elapsed() < self.settings.send_timeout => {
                    std::thread::sleep(super::POLL_SLEEP)
                }
                Err(e) => {
                    return Err(middleware(format!(
                        "cannot loan a {}-byte response on {}: {e:?}",
                        reply.len(),
                        self.service.name()
                    )))
                }
            }
        };
        loaned.write_from_slice(reply).send().map_err(|e| {
            middleware(format!(
                "send a response on {}: {e:?} (a client's full response buffer is waited for {:?}; --opt send-timeout)",
                self.service.name(),
                self.settings.send_timeout
            ))
        })
        // the active request drops here: the client's pending response sees it answered
    }
}
