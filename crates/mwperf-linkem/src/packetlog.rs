//! `--packet-log PREFIX`: every packet a direction released, as (time, size), for the control
//! plane to count bytes on the wire per phase of a run (setup, steady state, idle, teardown).
//!
//! Records are appended by the forwarding thread into memory reserved up front (no allocation
//! per packet: pages are touched as they fill) and written once at the end to `PREFIX-up.bin` /
//! `PREFIX-down.bin`: 12 bytes each, little endian, `u64` ns since the link's epoch (the READY
//! line's `epoch_ns`, CLOCK_MONOTONIC) at the release, then `u32` IP packet length in bytes (the
//! TUN device carries IP packets: no Ethernet header). Beyond `capacity` records it counts the
//! packets it could not log (`truncated`), so a reader knows the log is incomplete.

use std::io::Write;

/// One record's size in the file.
#[cfg(test)]
const RECORD_BYTES: usize = 12;

/// The released packets of one direction.
pub struct PacketLog {
    records: Vec<(u64, u32)>,
    capacity: usize,
    pub truncated: u64,
}

impl PacketLog {
    /// Room for `capacity` packets, reserved now.
    pub fn new(capacity: usize) -> Self {
        PacketLog {
            records: Vec::with_capacity(capacity),
            capacity,
            truncated: 0,
        }
    }

    /// A packet of `bytes` released at `at_ns` (ns since the epoch).
    #[inline]
    pub fn push(&mut self, at_ns: u64, bytes: usize) {
        if self.records.len() < self.capacity {
            self.records.push((at_ns, bytes as u32));
        } else {
            self.truncated += 1;
        }
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.records.len()
    }

    /// Write the records to `path` (through a temporary file: a reader never sees half of it).
    pub fn write(&self, path: &str) -> std::io::Result<()> {
        let tmp = format!("{path}.tmp");
        let mut out = std::io::BufWriter::new(std::fs::File::create(&tmp)?);
        for &(at, bytes) in &self.records {
            out.write_all(&at.to_le_bytes())?;
            out.write_all(&bytes.to_le_bytes())?;
        }
        out.into_inner().map_err(|e| e.into_error())?.sync_all()?;
        std::fs::rename(&tmp, path)
    }

    /// `{"path", "packets", "truncated"}` for the report.
    pub fn to_json(&self, path: &str) -> String {
        format!(
            "{{\"path\": {:?}, \"packets\": {}, \"truncated\": {}}}",
            path,
            self.records.len(),
            self.truncated
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_are_written_little_endian_and_overflow_is_counted() {
        let mut log = PacketLog::new(2);
        log.push(5, 92);
        log.push(1 << 40, 1500);
        log.push(7, 60);
        assert_eq!((log.len(), log.truncated), (2, 1));
        let path =
            std::env::temp_dir().join(format!("mwperf-linkem-log-{}.bin", std::process::id()));
        let path = path.to_str().unwrap();
        log.write(path).unwrap();
        let bytes = std::fs::read(path).unwrap();
        std::fs::remove_file(path).unwrap();
        assert_eq!(bytes.len(), 2 * RECORD_BYTES);
        assert_eq!(u64::from_le_bytes(bytes[0..8].try_into().unwrap()), 5);
        assert_eq!(u32::from_le_bytes(bytes[8..12].try_into().unwrap()), 92);
        assert_eq!(
            u64::from_le_bytes(bytes[12..20].try_into().unwrap()),
            1 << 40
        );
        assert_eq!(u32::from_le_bytes(bytes[20..24].try_into().unwrap()), 1500);
        assert!(log
            .to_json(path)
            .contains("\"packets\": 2, \"truncated\": 1"));
    }
}
