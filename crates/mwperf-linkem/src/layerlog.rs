//! `--layer-log PREFIX`: for every mwperf message a direction forwarded, when the emulator read
//! its packet from the sender's TUN device and when it released it to the receiver's, so the
//! control plane can split a message's kernel-and-network time into the sender's kernel, the
//! link, and the receiver's kernel (python/mwperf/layers_link.py reads it).
//!
//! Like `--packet-log` (src/packetlog.rs): rows go into memory reserved up front (no allocation
//! per packet; pages are touched only as they fill), and are written once at the end, through a
//! temporary file and a rename, to `PREFIX-up.layers.csv` / `PREFIX-down.layers.csv`:
//! `run_id,topic,seq,flags,read_ns,release_ns`, one row per header found (a packet carrying a
//! batch of messages gives several rows with the same times; a duplicated packet is released
//! twice and logged twice). Times are absolute CLOCK_MONOTONIC ns, the agents' clock (the
//! emulator keeps ns since its epoch in memory and adds the epoch when writing). A lost packet
//! is never released and not logged. Beyond `capacity` rows it counts what it could not log
//! (`truncated`), so a reader knows the log is incomplete.

use std::io::Write;

use crate::scan::for_each_header;

/// The CSV's first line.
pub const CSV_HEADER: &str = "run_id,topic,seq,flags,read_ns,release_ns";

/// One message's passage (32 bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Row {
    run_id: u32,
    topic: u16,
    flags: u8,
    seq: u64,
    /// ns since the epoch
    read_ns: u64,
    /// ns since the epoch
    release_ns: u64,
}

/// The forwarded messages of one direction.
pub struct LayerLog {
    rows: Vec<Row>,
    capacity: usize,
    pub truncated: u64,
}

impl LayerLog {
    /// Room for `capacity` rows, reserved now.
    pub fn new(capacity: usize) -> Self {
        LayerLog {
            rows: Vec::with_capacity(capacity),
            capacity,
            truncated: 0,
        }
    }

    /// `packet` was read at `read_ns` and released at `release_ns` (ns since the epoch): a row
    /// for each mwperf header in it (none for a packet without one).
    #[inline]
    pub fn released(&mut self, packet: &[u8], read_ns: u64, release_ns: u64) {
        for_each_header(packet, |h| {
            if self.rows.len() < self.capacity {
                self.rows.push(Row {
                    run_id: h.run_id,
                    topic: h.topic,
                    flags: h.flags,
                    seq: h.seq,
                    read_ns,
                    release_ns,
                });
            } else {
                self.truncated += 1;
            }
        });
    }

    /// Rows logged so far.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Write the CSV to `path` with times made absolute by `epoch_ns` (CLOCK_MONOTONIC at the
    /// link's time 0), through a temporary file: a reader never sees half of it.
    pub fn write(&self, path: &str, epoch_ns: u64) -> std::io::Result<()> {
        let tmp = format!("{path}.tmp");
        let mut out = std::io::BufWriter::new(std::fs::File::create(&tmp)?);
        writeln!(out, "{CSV_HEADER}")?;
        for r in &self.rows {
            writeln!(
                out,
                "{},{},{},{},{},{}",
                r.run_id,
                r.topic,
                r.seq,
                r.flags,
                epoch_ns + r.read_ns,
                epoch_ns + r.release_ns
            )?;
        }
        out.into_inner().map_err(|e| e.into_error())?.sync_all()?;
        std::fs::rename(&tmp, path)
    }

    /// `{"path", "rows", "truncated"}` for the report.
    pub fn to_json(&self, path: &str) -> String {
        format!(
            "{{\"path\": {:?}, \"rows\": {}, \"truncated\": {}}}",
            path,
            self.rows.len(),
            self.truncated
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mwperf_core::wire::{Header, FLAG_ECHO, HEADER_LEN};

    fn message(seq: u64, flags: u8) -> Vec<u8> {
        let mut buf = vec![0u8; HEADER_LEN + 4];
        Header {
            flags,
            run_id: 0xABCD,
            topic: 3,
            seq,
            payload_len: 4,
            ..Header::default()
        }
        .encode(&mut buf);
        buf
    }

    #[test]
    fn rows_per_header_with_absolute_times_and_overflow_counted() {
        let mut log = LayerLog::new(3);
        let mut batch = vec![0u8; 28]; // IPv4 + UDP headers
        batch.extend(message(1, 0));
        batch.extend(message(2, FLAG_ECHO));
        log.released(&batch, 10, 5_010);
        log.released(&[0x45; 200], 20, 30); // no header: no row
        log.released(&message(3, 0), 40, 50);
        log.released(&message(4, 0), 60, 70); // no room
        assert_eq!((log.len(), log.truncated), (3, 1));
        let path =
            std::env::temp_dir().join(format!("mwperf-linkem-layers-{}.csv", std::process::id()));
        let path = path.to_str().unwrap();
        log.write(path, 1_000_000).unwrap();
        let text = std::fs::read_to_string(path).unwrap();
        std::fs::remove_file(path).unwrap();
        assert_eq!(
            text,
            "run_id,topic,seq,flags,read_ns,release_ns\n\
             43981,3,1,0,1000010,1005010\n\
             43981,3,2,4,1000010,1005010\n\
             43981,3,3,0,1000040,1000050\n"
        );
        assert!(log.to_json(path).contains("\"rows\": 3, \"truncated\": 1"));
        assert!(!std::path::Path::new(&format!("{path}.tmp")).exists());
    }

    #[test]
    fn rows_are_32_bytes() {
        assert_eq!(std::mem::size_of::<Row>(), 32);
    }
}
