//! What happened to the packets of one direction, counted while forwarding and reported as JSON
//! at the end (the run-result's link section).

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use crate::model::Drop;

/// Counters shared between a direction's thread and the reporting main thread.
#[derive(Default)]
pub struct Counters {
    pub received: AtomicU64,
    pub forwarded: AtomicU64,
    pub forwarded_bytes: AtomicU64,
    pub duplicated: AtomicU64,
    pub reordered: AtomicU64,
    pub corrupted: AtomicU64,
    pub dropped_outage: AtomicU64,
    pub dropped_mtu: AtomicU64,
    pub dropped_loss: AtomicU64,
    pub dropped_queue: AtomicU64,
    /// the kernel refused the packet on the other side (malformed) or the device was gone
    pub dropped_write: AtomicU64,
    /// still queued when the emulator stopped
    pub dropped_pending: AtomicU64,
    /// release lateness (write time - deadline): sum, max, and how many were > 50 µs late
    pub late_sum_ns: AtomicU64,
    pub late_max_ns: AtomicU64,
    pub late_over_50us: AtomicU64,
}

impl Counters {
    pub fn dropped(&self, why: Drop) {
        let counter = match why {
            Drop::Outage => &self.dropped_outage,
            Drop::Mtu => &self.dropped_mtu,
            Drop::Loss => &self.dropped_loss,
            Drop::Queue => &self.dropped_queue,
        };
        counter.fetch_add(1, Relaxed);
    }

    pub fn released(&self, bytes: usize, late_ns: u64) {
        self.forwarded.fetch_add(1, Relaxed);
        self.forwarded_bytes.fetch_add(bytes as u64, Relaxed);
        self.late_sum_ns.fetch_add(late_ns, Relaxed);
        self.late_max_ns.fetch_max(late_ns, Relaxed);
        if late_ns > 50_000 {
            self.late_over_50us.fetch_add(1, Relaxed);
        }
    }

    /// The counters as a JSON object.
    pub fn to_json(&self) -> String {
        let get = |c: &AtomicU64| c.load(Relaxed);
        let forwarded = get(&self.forwarded);
        let late_mean = if forwarded > 0 { get(&self.late_sum_ns) / forwarded } else { 0 };
        format!(
            "{{\"received\": {}, \"forwarded\": {forwarded}, \"forwarded_bytes\": {}, \"duplicated\": {}, \
             \"reordered\": {}, \"corrupted\": {}, \"dropped\": {{\"outage\": {}, \"mtu\": {}, \"loss\": {}, \
             \"queue\": {}, \"write\": {}, \"pending\": {}}}, \"release_late_ns\": {{\"mean\": {late_mean}, \
             \"max\": {}, \"over_50us\": {}}}}}",
            get(&self.received), get(&self.forwarded_bytes), get(&self.duplicated), get(&self.reordered),
            get(&self.corrupted), get(&self.dropped_outage), get(&self.dropped_mtu), get(&self.dropped_loss),
            get(&self.dropped_queue), get(&self.dropped_write), get(&self.dropped_pending),
            get(&self.late_max_ns), get(&self.late_over_50us),
        )
    }
}
