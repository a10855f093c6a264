//! The answering side: a complete queryable on the service key; each query is kept under a
//! token until it is answered (dropping a query tells the client zenoh's final response).

use std::collections::HashMap;
use std::time::Duration;

use zenoh::handlers::{FifoChannel, FifoChannelHandler};
use zenoh::query::{Query, Queryable};
use zenoh::Wait;

use super::super::session::Opened;
use super::super::settings::Settings;
use super::super::{middleware_error, MAX_WAIT, NAME};
use crate::service::{Server, Token};
use crate::session::SessionRef;
use crate::TransportError;

/// Queries waiting in zenoh's channel for `recv_request` at least (more with a deeper history):
/// a full channel holds the session back rather than dropping a call.
const MIN_QUEUE: usize = 256;

pub struct ZenohServer {
    queryable: Option<Queryable<FifoChannelHandler<Query>>>,
    pending: HashMap<Token, Query>,
    next: Token,
    key: String,
    addr: String,
    _session: SessionRef<Opened>,
}

impl ZenohServer {
    pub(super) fn open(
        opened: SessionRef<Opened>,
        settings: &Settings,
        base: &str,
    ) -> Result<ZenohServer, TransportError> {
        let key = super::key(base);
        let queryable = opened
            .session
            .declare_queryable(key.clone())
            .complete(true)
            .with(FifoChannel::new(
                settings.depth.unwrap_or(MIN_QUEUE).max(MIN_QUEUE),
            ))
            .wait()
            .map_err(|e| middleware_error(format!("declare queryable {key}"), e))?;
        Ok(ZenohServer {
            queryable: Some(queryable),
            pending: HashMap::new(),
            next: 0,
            key,
            addr: format!("{}#{base}", opened.endpoint),
            _session: opened,
        })
    }
}

impl Server for ZenohServer {
    fn local_addr(&self) -> String {
        self.addr.clone()
    }

    fn recv_request(
        &mut self,
        buf: &mut Vec<u8>,
        wait_ns: u64,
    ) -> Result<Option<Token>, TransportError> {
        let q = self.queryable.as_ref().expect("declared until drop");
        let got = if wait_ns == 0 {
            q.try_recv()
        } else {
            q.recv_timeout(Duration::from_nanos(wait_ns).min(MAX_WAIT))
        };
        let Some(query) = got.map_err(|e| middleware_error("receive query", e))? else {
            return Ok(None);
        };
        buf.clear();
        if let Some(payload) = query.payload() {
            for slice in payload.slices() {
                buf.extend_from_slice(slice);
            }
        }
        self.next += 1;
        self.pending.insert(self.next, query);
        Ok(Some(self.next))
    }

    fn reply(&mut self, token: Token, reply: &[u8]) -> Result<(), TransportError> {
        let query = self
            .pending
            .remove(&token)
            .ok_or_else(|| TransportError::Middleware {
                transport: NAME,
                detail: format!("no pending query {token} to answer"),
            })?;
        query
            .reply(query.key_expr().clone(), reply.to_vec())
            .wait()
            .map_err(|e| middleware_error(format!("reply on {}", self.key), e))
        // dropping the query sends zenoh's final response: the client's get ends
    }
}

impl Drop for ZenohServer {
    /// Unanswered queries end first (their clients' gets finish), then the queryable goes.
    fn drop(&mut self) {
        self.pending.clear();
        if let Some(q) = self.queryable.take() {
            let _ = q.undeclare().wait();
        }
    }
}
