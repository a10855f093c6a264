//! Everything a measuring role (ping, sub) records per arriving message: response and service
//! latency, jitter, sequence accounting, per-second series and optional raw samples.

use std::fs::File;
use std::io::{BufWriter, Write};

use mwperf_core::result::{Late, Measurement, Throughput};
use mwperf_core::stats::{
    accounting::Arrival, LatencyRecorder, OutageWatch, Rfc3550Jitter, SecondSeries, SeqTracker,
};
use mwperf_core::wire::{payload_intact, Header, Reject, FLAG_RECORDED, HEADER_LEN};

pub struct Collector {
    pub response: LatencyRecorder,
    pub service: LatencyRecorder,
    jitter: Rfc3550Jitter,
    series: SecondSeries,
    pub seq: SeqTracker,
    late_threshold_ns: Option<u64>,
    late: u64,
    samples: Option<BufWriter<File>>,
    samples_path: Option<String>,
    first_ns: Option<u64>,
    last_ns: u64,
    payload_bytes: Option<u64>,
    /// the payload bytes of the measured messages that arrived intact (once each): the
    /// throughput of varying sizes (a replay, a graph's distribution) as well as of fixed ones
    payload_sum: u64,
    outage: Option<OutageWatch>,
    /// every samples row written out at once (a sub that may be killed: `--reopen`)
    flush_each: bool,
}

impl Collector {
    pub fn new(
        origin_ns: u64,
        period_ns: u64,
        samples_path: Option<&str>,
    ) -> std::io::Result<Self> {
        let samples = match samples_path {
            Some(p) => {
                let mut w = BufWriter::with_capacity(1 << 20, File::create(p)?);
                writeln!(
                    w,
                    "seq,intended_ns,sent_ns,peer_rx_ns,recv_ns,response_ns,service_ns"
                )?;
                Some(w)
            }
            None => None,
        };
        Ok(Collector {
            response: LatencyRecorder::default(),
            service: LatencyRecorder::default(),
            jitter: Rfc3550Jitter::default(),
            series: SecondSeries::new(origin_ns),
            seq: SeqTracker::default(),
            late_threshold_ns: (period_ns > 0).then_some(period_ns),
            late: 0,
            samples,
            samples_path: samples_path.map(str::to_string),
            first_ns: None,
            last_ns: 0,
            payload_bytes: None,
            payload_sum: 0,
            outage: None,
            flush_each: false,
        })
    }

    /// Write every samples row out at once (one write(2) per arrival, after its timestamp was
    /// taken) instead of every ~1 MiB: a sub that is killed (`mwperf run --restart sub@T`,
    /// `--reopen`) leaves every arrival it recorded on disk.
    pub fn flush_each(&mut self, on: bool) {
        self.flush_each = on;
    }

    /// Room for `seconds` rows of the per-second series now (SecondSeries::reserve).
    pub fn reserve_series(&mut self, seconds: usize) {
        self.series.reserve(seconds);
    }

    /// Count sends and deliveries around the outage `window` (start_ns, end_ns) from now on.
    pub fn watch_outage(&mut self, window: Option<(u64, u64)>) {
        self.outage = window.map(|(start, end)| OutageWatch::new(start, end));
    }

    /// The outage counts so far (None without a window); `sender`: this agent also sends.
    pub fn outage_counts(&self, sender: bool) -> Option<mwperf_core::result::OutageCounts> {
        let origin_ns = Some(self.series.origin_ns());
        self.outage
            .as_ref()
            .map(|w| mwperf_core::result::OutageCounts {
                series_origin_ns: origin_ns,
                ..w.counts(sender, true)
            })
    }

    /// Count a buffer that is not a usable message of this run.
    pub fn reject(&mut self, r: Reject) {
        if r.is_foreign() {
            self.seq.foreign += 1;
        } else {
            self.seq.malformed += 1;
        }
    }

    /// Mark the start of the measured window (first measured send, or first arrival for a sub).
    pub fn window_start(&mut self, t_ns: u64) {
        self.first_ns.get_or_insert(t_ns);
    }

    /// A sub's first measured arrival: its window starts, and its per-second series counts
    /// from here (the collector was made at its first arrival, a warm-up one: second 0 then
    /// held the few measured messages before that arrival's first second was over, a partial
    /// second read as a whole one, "delivered min 490" in a 64 KiB stream of 220 k/s).
    pub fn sub_window_start(&mut self, t_ns: u64) {
        if self.first_ns.is_none() {
            self.first_ns = Some(t_ns);
            self.series.restart_at(t_ns);
        }
    }

    /// A sent measured message, for the per-second series.
    pub fn sent(&mut self, t_ns: u64) {
        self.series.sent_at(t_ns);
        if let Some(w) = &mut self.outage {
            w.sent(t_ns);
        }
    }

    /// One arrival of a measured message with header `h`, received at `recv_ns`; `msg` is the whole
    /// message (payload checked against the pattern of `h.seq`).
    pub fn arrive(&mut self, h: &Header, msg: &[u8], recv_ns: u64) {
        self.arrive_checked(
            h,
            h.flags & FLAG_RECORDED != 0 || payload_intact(&msg[HEADER_LEN..], h.seq),
            recv_ns,
        );
    }

    /// [`Self::arrive`] with the payload already checked (`intact`): a sub replaying arrivals it
    /// kept for the final clock fit (clocksync/buffer.rs).
    pub fn arrive_checked(&mut self, h: &Header, intact: bool, recv_ns: u64) {
        self.payload_bytes.get_or_insert(h.payload_len as u64);
        if self.seq.arrive(h.seq, intact) == Arrival::Duplicate || !intact {
            return;
        }
        self.payload_sum += h.payload_len as u64;
        let response = recv_ns.saturating_sub(h.intended_ns);
        let service = recv_ns.saturating_sub(h.sent_ns);
        self.response.record(response);
        self.service.record(service);
        self.jitter.record(service);
        self.series.received_at(recv_ns, response);
        if let Some(w) = &mut self.outage {
            w.delivered(h.sent_ns, recv_ns);
        }
        if self.late_threshold_ns.is_some_and(|t| response > t) {
            self.late += 1;
        }
        self.first_ns.get_or_insert(recv_ns);
        self.last_ns = self.last_ns.max(recv_ns);
        if let Some(w) = &mut self.samples {
            // Buffered: a write(2) every ~1 MiB, after the timestamp was taken.
            let _ = writeln!(
                w,
                "{},{},{},{},{},{},{}",
                h.seq, h.intended_ns, h.sent_ns, h.peer_rx_ns, recv_ns, response, service
            );
            if self.flush_each {
                let _ = w.flush();
            }
        }
    }

    /// Late messages for a receiver that learns the period only at the end (a sub, from the
    /// end-of-stream marker): counted from the response histogram (3 significant digits).
    pub fn late_from_histogram(&mut self, period_ns: u64) {
        if period_ns > 0 && self.late_threshold_ns.is_none() {
            self.late_threshold_ns = Some(period_ns);
            self.late = self.response.count_above(period_ns);
        }
    }

    /// Payload size of the first message that arrived.
    pub fn payload_bytes(&self) -> Option<u64> {
        self.payload_bytes
    }

    /// The measurement section of the report. The throughput window runs from the first measured
    /// send (or arrival) to the later of the last arrival and `end_ns` (the planned end of the
    /// schedule, so a slow rate is not divided by one round trip).
    pub fn finish(
        mut self,
        mode: &'static str,
        sent: u64,
        warmup_sent: u64,
        payload_bytes: u64,
        end_ns: u64,
        schedule: Option<mwperf_core::result::Schedule>,
    ) -> Measurement {
        if let Some(w) = &mut self.samples {
            let _ = w.flush();
        }
        let accounting = self.seq.accounting(sent, warmup_sent);
        let start = self.first_ns.unwrap_or(end_ns);
        let end = self.last_ns.max(end_ns).max(start);
        let duration_s = (end - start) as f64 / 1e9;
        let rate = |n: f64| {
            if duration_s > 0.0 {
                n / duration_s
            } else {
                0.0
            }
        };
        let message_bytes = payload_bytes + HEADER_LEN as u64;
        let received = accounting.received as f64;
        Measurement {
            mode: mode.into(),
            latency_kind: match mode {
                "roundtrip" => "rtt".into(),
                "service" => "call".into(),
                _ => "one-way".into(),
            },
            clock: mwperf_core::clock::CLOCK_NAME.into(),
            payload_bytes,
            message_bytes,
            response: self.response.summary(),
            service: self.service.summary(),
            jitter_rfc3550_ns: self.jitter.value(),
            late: self.late_threshold_ns.map(|t| Late {
                threshold_ns: t,
                count: self.late,
                fraction: if accounting.received > 0 {
                    self.late as f64 / received
                } else {
                    0.0
                },
            }),
            throughput: Throughput {
                duration_s,
                msgs_per_s: rate(received),
                payload_bytes_per_s: rate(self.payload_sum as f64),
                message_bytes_per_s: rate(self.payload_sum as f64 + received * HEADER_LEN as f64),
            },
            accounting,
            schedule,
            series: self.series.finish(),
            samples_file: self.samples_path,
            clock_sync: None,
            calls: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mwperf_core::wire::build_message;

    fn msg(seq: u64, intended: u64, sent: u64) -> (Header, Vec<u8>) {
        let h = Header {
            run_id: 1,
            seq,
            intended_ns: intended,
            sent_ns: sent,
            payload_len: 16,
            ..Default::default()
        };
        let mut b = Vec::new();
        build_message(&mut b, &h);
        (h, b)
    }

    #[test]
    fn response_service_late_and_window() {
        let mut c = Collector::new(0, 1_000_000, None).unwrap();
        // three messages due every 1 ms; the second left 0.5 ms late and arrives 2 ms after its due time
        for (seq, intended, sent, recv) in [
            (0, 0, 0, 100_000),
            (2, 2_000_000, 2_000_000, 2_100_000),
            (1, 1_000_000, 1_500_000, 3_000_000),
        ] {
            c.window_start(intended);
            let (h, b) = msg(seq, intended, sent);
            c.arrive(&h, &b, recv);
        }
        let m = c.finish("roundtrip", 3, 0, 16, 3_000_000, None);
        assert_eq!(m.response.max_ns, Some(2_000_000)); // from the intended time
        assert_eq!(m.service.max_ns, Some(1_500_000)); // from the actual send time
        let late = m.late.unwrap();
        assert_eq!((late.count, late.threshold_ns), (1, 1_000_000));
        assert_eq!(m.accounting.reordered, 1); // seq 2 arrived before seq 1
        assert!((m.throughput.duration_s - 0.003).abs() < 1e-12);
        assert!((m.throughput.msgs_per_s - 1000.0).abs() < 1e-6);
        assert_eq!(m.message_bytes, 72);
    }

    #[test]
    fn duplicates_and_corruption_stay_out_of_latency() {
        let mut c = Collector::new(0, 0, None).unwrap();
        let (h, b) = msg(0, 0, 0);
        c.arrive(&h, &b, 10_000);
        c.arrive(&h, &b, 20_000); // duplicate
        let (h1, mut b1) = msg(1, 0, 0);
        b1[HEADER_LEN + 3] ^= 0x40; // payload bit flip
        c.arrive(&h1, &b1, 30_000);
        let m = c.finish("oneway", 2, 0, 16, 0, None);
        assert_eq!(m.response.count, 1);
        assert_eq!(
            (
                m.accounting.received,
                m.accounting.duplicated,
                m.accounting.corrupted,
                m.accounting.lost
            ),
            (1, 1, 1, 0)
        );
        assert!(m.late.is_none());
    }

    #[test]
    fn late_from_histogram_for_a_sub() {
        let mut c = Collector::new(0, 0, None).unwrap();
        for (seq, lat) in [(0, 500_000u64), (1, 1_500_000), (2, 2_500_000)] {
            let (h, b) = msg(seq, 0, 0);
            c.arrive(&h, &b, lat);
        }
        c.late_from_histogram(1_000_000);
        assert_eq!(c.finish("oneway", 3, 0, 16, 0, None).late.unwrap().count, 2);
    }

    #[test]
    fn samples_file_has_one_row_per_intact_first_arrival() {
        let path = std::env::temp_dir().join(format!("mwperf-samples-{}.csv", std::process::id()));
        let mut c = Collector::new(0, 0, path.to_str()).unwrap();
        let (h, b) = msg(7, 100, 200);
        c.arrive(&h, &b, 1_200);
        c.arrive(&h, &b, 1_300);
        c.finish("roundtrip", 1, 0, 16, 0, None);
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert_eq!(
            text.lines().collect::<Vec<_>>(),
            vec![
                "seq,intended_ns,sent_ns,peer_rx_ns,recv_ns,response_ns,service_ns",
                "7,100,200,0,1200,1100,1000"
            ]
        );
    }
}
