//! The calling side: a querier on the service key, one `get` per call whose callback queues the
//! reply under the call's id for `recv_reply`.

use std::sync::mpsc::{self, Receiver, Sender};
use std::time::Duration;

use zenoh::query::{ConsolidationMode, Querier, QueryTarget};
use zenoh::Wait;

use super::super::session::Opened;
use super::super::settings::{Mode, Settings};
use super::super::{middleware_error, wait_for_match, MAX_WAIT};
use crate::service::{CallId, Client, Reply};
use crate::session::SessionRef;
use crate::TransportError;

/// One reply as the get's callback queued it (copied out by `recv_reply`, not in the callback).
type Queued = (CallId, zenoh::query::Reply);

pub struct ZenohClient {
    querier: Option<Querier<'static>>,
    /// Each get's callback holds a clone; replies arrive here.
    tx: Sender<Queued>,
    rx: Receiver<Queued>,
    next: CallId,
    key: String,
    mode: Mode,
    endpoint: String,
    /// Dropped after the querier is undeclared.
    _session: SessionRef<Opened>,
}

impl ZenohClient {
    pub(super) fn open(
        opened: SessionRef<Opened>,
        settings: &Settings,
        base: &str,
    ) -> Result<ZenohClient, TransportError> {
        let key = super::key(base);
        let querier = opened
            .session
            .declare_querier(key.clone())
            .target(QueryTarget::AllComplete)
            .consolidation(ConsolidationMode::None)
            .congestion_control(settings.congestion)
            .express(settings.express)
            .wait()
            .map_err(|e| middleware_error(format!("declare querier {key}"), e))?;
        let (tx, rx) = mpsc::channel();
        Ok(ZenohClient {
            querier: Some(querier),
            tx,
            rx,
            next: 0,
            key,
            mode: settings.mode,
            endpoint: opened.endpoint.clone(),
            _session: opened,
        })
    }

    fn querier(&self) -> &Querier<'static> {
        self.querier.as_ref().expect("declared until drop")
    }
}

impl Client for ZenohClient {
    /// Until the querier sees a complete queryable on the key (zenoh's matching status).
    fn wait_matched(&mut self, timeout_ns: u64) -> Result<(), TransportError> {
        wait_for_match(
            timeout_ns,
            || {
                Ok(self
                    .querier()
                    .matching_status()
                    .wait()
                    .map_err(|e| middleware_error("querier matching status", e))?
                    .matching())
            },
            || {
                format!(
                    "no queryable for {} reached through {} in {} mode",
                    self.key,
                    self.endpoint,
                    self.mode.name()
                )
            },
        )
    }

    fn call(&mut self, request: &[u8]) -> Result<CallId, TransportError> {
        self.next += 1;
        let (id, tx) = (self.next, self.tx.clone());
        self.querier()
            .get()
            .payload(request.to_vec())
            .callback(move |reply| {
                let _ = tx.send((id, reply)); // the client is gone: nobody waits for it
            })
            .wait()
            .map_err(|e| middleware_error(format!("get on {}", self.key), e))?;
        Ok(id)
    }

    fn recv_reply(
        &mut self,
        buf: &mut Vec<u8>,
        wait_ns: u64,
    ) -> Result<Option<Reply>, TransportError> {
        // empty, timed out or disconnected (never: the client holds a sender): no reply
        let got = if wait_ns == 0 {
            self.rx.try_recv().ok()
        } else {
            self.rx
                .recv_timeout(Duration::from_nanos(wait_ns).min(MAX_WAIT))
                .ok()
        };
        let Some((call, reply)) = got else {
            return Ok(None);
        };
        buf.clear();
        let (payload, ok) = match reply.result() {
            Ok(sample) => (sample.payload(), true),
            Err(err) => (err.payload(), false),
        };
        for slice in payload.slices() {
            buf.extend_from_slice(slice);
        }
        Ok(Some(Reply { call, ok }))
    }

    // abandon: nothing is kept per call (the get's callback owns its sender and is dropped when
    // the query ends: answered, or the querier's timeout); zenoh's cancellation token is behind
    // its "unstable" feature, which mwperf does not build.
}

impl Drop for ZenohClient {
    fn drop(&mut self) {
        if let Some(q) = self.querier.take() {
            let _ = q.undeclare().wait();
        }
    }
}
