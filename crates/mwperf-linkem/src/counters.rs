//! What happened to the packets of one direction, counted while forwarding and reported as JSON
//! at the end (the run-result's link section).

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use crate::model::Drop;

/// Counters shared between a direction's thread and the reporting main thread.
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
    /// arrival times (ns since the link came up) of the first and last packet the scheduled
    /// outage dropped: the outage as the traffic saw it (u64::MAX / 0 = none dropped)
    pub outage_first_ns: AtomicU64,
    pub outage_last_ns: AtomicU64,
}

impl Default for Counters {
    fn default() -> Self {
        let zero = || AtomicU64::new(0);
        Counters {
            received: zero(),
            forwarded: zero(),
            forwarded_bytes: zero(),
            duplicated: zero(),
            reordered: zero(),
            corrupted: zero(),
            dropped_outage: zero(),
            dropped_mtu: zero(),
            dropped_loss: zero(),
            dropped_queue: zero(),
            dropped_write: zero(),
            dropped_pending: zero(),
            late_sum_ns: zero(),
            late_max_ns: zero(),
            late_over_50us: zero(),
            outage_first_ns: AtomicU64::new(u64::MAX),
            outage_last_ns: zero(),
        }
    }
}

impl Counters {
    /// A packet arriving at `at_ns` was dropped because of `why`.
    pub fn dropped(&self, why: Drop, at_ns: u64) {
        if why == Drop::Outage {
            self.outage_first_ns.fetch_min(at_ns, Relaxed);
            self.outage_last_ns.fetch_max(at_ns, Relaxed);
        }
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

    /// The counters as a JSON object; `epoch_ns` turns the outage's drop times into
    /// CLOCK_MONOTONIC (`outage_drops`: null when the outage dropped nothing in this direction).
    pub fn to_json(&self, epoch_ns: u64) -> String {
        let get = |c: &AtomicU64| c.load(Relaxed);
        let outage_drops = match get(&self.outage_first_ns) {
            u64::MAX => "null".to_string(),
            first => format!(
                "{{\"first_ns\": {}, \"last_ns\": {}}}",
                epoch_ns + first,
                epoch_ns + get(&self.outage_last_ns)
            ),
        };
        let forwarded = get(&self.forwarded);
        let late_mean = get(&self.late_sum_ns).checked_div(forwarded).unwrap_or(0);
        format!(
            "{{\"received\": {}, \"forwarded\": {forwarded}, \"forwarded_bytes\": {}, \"duplicated\": {}, \
             \"reordered\": {}, \"corrupted\": {}, \"dropped\": {{\"outage\": {}, \"mtu\": {}, \"loss\": {}, \
             \"queue\": {}, \"write\": {}, \"pending\": {}}}, \"release_late_ns\": {{\"mean\": {late_mean}, \
             \"max\": {}, \"over_50us\": {}}}, \"outage_drops\": {outage_drops}}}",
            get(&self.received), get(&self.forwarded_bytes), get(&self.duplicated), get(&self.reordered),
            get(&self.corrupted), get(&self.dropped_outage), get(&self.dropped_mtu), get(&self.dropped_loss),
            get(&self.dropped_queue), get(&self.dropped_write), get(&self.dropped_pending),
            get(&self.late_max_ns), get(&self.late_over_50us),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outage_drops_are_reported_on_the_epoch_clock() {
        let c = Counters::default();
        assert!(c.to_json(1000).contains("\"outage_drops\": null"));
        c.dropped(Drop::Loss, 5);
        c.dropped(Drop::Outage, 30);
        c.dropped(Drop::Outage, 20);
        c.dropped(Drop::Outage, 70);
        let json = c.to_json(1000);
        assert!(
            json.contains("\"outage_drops\": {\"first_ns\": 1020, \"last_ns\": 1070}"),
            "{json}"
        );
        assert!(json.contains("\"outage\": 3,"), "{json}");
    }
}
