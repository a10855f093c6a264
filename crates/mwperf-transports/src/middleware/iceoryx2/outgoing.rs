//! The sending half of an endpoint: one publisher on the data service and one notifier on the
//! event service.
//!
//! Memory. iceoryx2 sizes a publisher's data segment for every sample it could ever need:
//! `max subscribers × (queue + borrowed) + history + loans`, each as large as the largest message.
//! Messages here range from 56 bytes to several MiB, and the size is only known at the first
//! `send`, so the publisher starts with small samples and is replaced by one with larger samples
//! when a message does not fit (at most a few times per run: the size at least doubles). Its
//! sample count is iceoryx2's worst case, capped at `--opt max-shm` bytes: keep-last 1000 with
//! 4 MiB messages then holds 64 samples (256 MiB) instead of an 8 GiB segment (sparse at first,
//! but filled as the pool rotates through its samples). A capped pool can run
//! dry when the subscriber falls that far behind; a reliable send then waits for it to drain
//! (bounded by the send timeout, like a full queue), a best-effort send drops the message.
//! The allocation strategy is `Static` on purpose: iceoryx2's growing strategies would add
//! samples beyond the count its bookkeeping was sized for.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use iceoryx2::port::notifier::Notifier;
use iceoryx2::port::publisher::Publisher;
use iceoryx2::port::{BackpressureAction, BackpressureInfo, LoanError};
use iceoryx2::prelude::*;

use super::incoming::Drain;
use super::services::{Events, PubSub};
use super::settings::{Settings, PUBLISHER_LOANS};
use super::{middleware, Svc, NAME};
use crate::TransportError;

/// Sample size of a new publisher: covers the small messages of latency runs.
const INITIAL_SLICE: usize = 2048;
/// Bytes per sample beyond the payload (iceoryx2's chunk header and alignment), for the budget.
const SAMPLE_OVERHEAD: usize = 128;

pub struct Outgoing {
    publisher: Option<Publisher<Svc, [u8], ()>>,
    /// Largest message the current publisher's samples hold.
    slice_len: usize,
    notifier: Notifier<Svc>,
    pub(super) events: Events,
    pub(super) service: PubSub,
    settings: Settings,
    name: String,
    /// This endpoint's subscriber, drained while a send waits (see `incoming.rs`).
    drain: Option<Arc<Mutex<Drain>>>,
}

impl Outgoing {
    pub fn new(
        service: PubSub,
        events: Events,
        settings: Settings,
        name: String,
        drain: Option<Arc<Mutex<Drain>>>,
    ) -> Result<Outgoing, TransportError> {
        let notifier = events
            .notifier_builder()
            .create()
            .map_err(|e| middleware(format!("cannot create a notifier on {name}.ev: {e:?}")))?;
        let mut out = Outgoing {
            publisher: None,
            slice_len: 0,
            notifier,
            events,
            service,
            settings,
            name,
            drain,
        };
        out.replace_publisher(INITIAL_SLICE)?;
        Ok(out)
    }

    /// Samples a publisher with `slice_len`-byte samples gets, or why there cannot be one.
    fn sample_count(&self, slice_len: usize) -> Result<usize, TransportError> {
        let s = &self.settings;
        let fit = s.max_shm / (slice_len + SAMPLE_OVERHEAD);
        let need = s.service.minimum_samples();
        if fit < need {
            return Err(TransportError::Unsupported {
                transport: NAME,
                what: format!(
                    "a {slice_len}-byte message with {} (needs {need} samples, {} MiB of shared memory; --opt max-shm={} MiB)",
                    s.service.describe(),
                    (need * (slice_len + SAMPLE_OVERHEAD)) >> 20,
                    s.max_shm >> 20
                ),
            });
        }
        Ok(s.service.worst_case_samples().min(fit))
    }

    /// Drop the current publisher (if any) and create one whose samples hold `slice_len` bytes.
    fn replace_publisher(&mut self, slice_len: usize) -> Result<(), TransportError> {
        let count = self.sample_count(slice_len)?;
        // Free the old memory before taking more. Known limit: when both peers replace their
        // publishers at the same moment under heavy load, iceoryx2 0.10 occasionally fails to
        // map the new data segment and never retries (upstream issues #369, #129).
        self.publisher = None;
        let timeout = self.settings.send_timeout;
        let drain = self.drain.clone();
        let builder = self
            .service
            .publisher_builder()
            .initial_max_slice_len(slice_len)
            .allocation_strategy(AllocationStrategy::Static)
            .max_loaned_samples(PUBLISHER_LOANS)
            .override_sample_preallocation(move |_| count);
        let builder = if self.settings.reliable {
            // Wait (bounded) for a full subscriber queue, then fail this message.
            builder
                .backpressure_strategy(BackpressureStrategy::RetryUntilDelivered)
                .set_backpressure_handler(move |info: &BackpressureInfo| {
                    // Keep our peer going while we wait for it (it may be blocked sending to us).
                    if let Some(d) = &drain {
                        if let Ok(mut d) = d.try_lock() {
                            d.drain();
                        }
                    }
                    if info.elapsed_time < timeout {
                        BackpressureAction::Retry
                    } else {
                        BackpressureAction::DiscardDataAndFail
                    }
                })
        } else {
            builder.backpressure_strategy(BackpressureStrategy::DiscardData)
        };
        let publisher = builder.create().map_err(|e| {
            middleware(format!(
                "cannot create a publisher on {} ({count} samples of {slice_len} bytes): {e:?}",
                self.name
            ))
        })?;
        self.publisher = Some(publisher);
        self.slice_len = slice_len;
        Ok(())
    }

    pub fn send(&mut self, msg: &[u8]) -> Result<(), TransportError> {
        if msg.len() > self.slice_len {
            self.replace_publisher(msg.len().max(2 * self.slice_len))?;
        }
        let Some(publisher) = self.publisher.as_ref() else {
            return Err(middleware(format!("no publisher on {}", self.name)));
        };
        let start = Instant::now();
        let sample = loop {
            match publisher.loan_slice_uninit(msg.len()) {
                Ok(s) => break s,
                // The pool is capped and the subscriber holds all of it.
                Err(LoanError::OutOfMemory) if !self.settings.reliable => return Ok(()),
                Err(LoanError::OutOfMemory) if start.elapsed() < self.settings.send_timeout => {
                    if let Some(d) = &self.drain {
                        if let Ok(mut d) = d.try_lock() {
                            d.drain();
                        }
                    }
                    std::thread::sleep(Duration::from_micros(50))
                }
                Err(LoanError::OutOfMemory) => {
                    return Err(TransportError::Blocked { transport: "iceoryx2", detail: format!(
                        "{}: the subscriber has not released shared memory for --opt send-timeout={:?} (it holds all samples the --opt max-shm budget allows)",
                        self.name, self.settings.send_timeout
                    ) })
                }
                Err(e) => return Err(middleware(format!("cannot loan a {}-byte sample on {}: {e:?}", msg.len(), self.name))),
            }
        };
        sample
            .write_from_slice(msg)
            .send()
            .map_err(|e| TransportError::Blocked { transport: "iceoryx2", detail: format!("send on {}: {e:?} (a reliable send gives up after --opt send-timeout={:?} when a subscriber's queue stays full)", self.name, self.settings.send_timeout) })?;
        // A receiver only listens while it blocks; busy-polling peers pay no wake-up.
        if self.events.dynamic_config().number_of_listeners() > 0 {
            let _ = self.notifier.notify();
        }
        Ok(())
    }
}
