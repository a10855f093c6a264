//! Replay of a recording (`--replay-trace DIR`, written by mwperf's Python side from a ROS 1
//! bag, an MCAP file or a rosbag2 folder): topic i of the sender streams `DIR/topic-<i>.trace`,
//! so a recording of any size is read with one message buffer per topic (bounded memory).
//!
//! File: magic `MWPTRC01`, then u64 LE = the topic's median period in ns at the replay rate (the
//! schedule section's period: a message later than it counts as "behind"), then records
//! `<offset_ns u64 LE><len u32 LE><len bytes>` in offset order; offset = the message's time from
//! the replay's start (already scaled by --replay-rate and cut to --replay-window).
//!
//! `--replay-loop SPAN`: at the end of the file the trace starts over, its offsets SPAN later
//! each pass (SPAN = the recording's length plus one period, the same for every topic, so the
//! topics stay in step); the pacer stops at --duration.

use std::fs::File;
use std::io::{BufReader, ErrorKind, Read, Seek, SeekFrom};
use std::path::Path;

pub const MAGIC: &[u8; 8] = b"MWPTRC01";

#[derive(Debug)]
pub struct Trace {
    reader: BufReader<File>,
    /// The next record's offset (None = the trace is over).
    next_offset: Option<u64>,
    next_len: usize,
    /// The bytes of the record claimed last (what the sender sends now).
    current: Vec<u8>,
    pub period_ns: u64,
    what: String,
    /// `--replay-loop`: each pass's span; `base_ns` = this pass's start.
    loop_span_ns: Option<u64>,
    base_ns: u64,
    /// Records read in this pass (a pass without any ends the loop: an empty trace).
    in_pass: u64,
}

impl Trace {
    /// Open topic `topic`'s trace in `dir`.
    pub fn open(dir: &str, topic: u16) -> Result<Self, String> {
        let path = Path::new(dir).join(format!("topic-{topic}.trace"));
        let what = path.display().to_string();
        let file =
            File::open(&path).map_err(|e| format!("--replay-trace: cannot open {what}: {e}"))?;
        let mut reader = BufReader::with_capacity(1 << 20, file);
        let mut head = [0u8; 16];
        reader
            .read_exact(&mut head)
            .map_err(|e| format!("--replay-trace: {what}: no header ({e})"))?;
        if &head[..8] != MAGIC {
            return Err(format!(
                "--replay-trace: {what} is not an mwperf trace (magic {:?})",
                &head[..8]
            ));
        }
        let period_ns = u64::from_le_bytes(head[8..16].try_into().unwrap_or_default());
        let mut trace = Trace {
            reader,
            next_offset: None,
            next_len: 0,
            current: Vec::new(),
            period_ns,
            what,
            loop_span_ns: None,
            base_ns: 0,
            in_pass: 0,
        };
        trace.read_head()?;
        Ok(trace)
    }

    /// Start the trace over every `span_ns` (`--replay-loop`).
    pub fn looping(mut self, span_ns: u64) -> Self {
        self.loop_span_ns = Some(span_ns.max(1));
        self
    }

    fn read_head(&mut self) -> Result<(), String> {
        let mut head = [0u8; 12];
        let mut read = self.reader.read_exact(&mut head);
        if matches!(&read, Err(e) if e.kind() == ErrorKind::UnexpectedEof) {
            if let (Some(span), true) = (self.loop_span_ns, self.in_pass > 0) {
                self.reader
                    .seek(SeekFrom::Start(16))
                    .map_err(|e| format!("--replay-trace: {}: {e}", self.what))?;
                self.base_ns += span;
                self.in_pass = 0;
                read = self.reader.read_exact(&mut head);
            }
        }
        match read {
            Ok(()) => {
                self.in_pass += 1;
                self.next_offset = Some(
                    self.base_ns + u64::from_le_bytes(head[..8].try_into().unwrap_or_default()),
                );
                self.next_len =
                    u32::from_le_bytes(head[8..12].try_into().unwrap_or_default()) as usize;
                Ok(())
            }
            Err(e) if e.kind() == ErrorKind::UnexpectedEof => {
                self.next_offset = None;
                Ok(())
            }
            Err(e) => Err(format!("--replay-trace: {}: {e}", self.what)),
        }
    }

    /// The next message's offset from the start (None: all sent).
    pub fn next_offset(&self) -> Option<u64> {
        self.next_offset
    }

    /// Claim the next message: its bytes become `current()`; returns its offset.
    pub fn advance(&mut self) -> Result<u64, String> {
        let offset = self
            .next_offset
            .ok_or_else(|| "the trace is over".to_string())?;
        self.current.resize(self.next_len, 0);
        self.reader
            .read_exact(&mut self.current)
            .map_err(|e| format!("--replay-trace: {} is truncated ({e})", self.what))?;
        self.read_head()?;
        Ok(offset)
    }

    pub fn current(&self) -> &[u8] {
        &self.current
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn write(dir: &Path, topic: u16, records: &[(u64, Vec<u8>)]) {
        let mut f = File::create(dir.join(format!("topic-{topic}.trace"))).unwrap();
        f.write_all(MAGIC).unwrap();
        f.write_all(&25_000_000u64.to_le_bytes()).unwrap();
        for (offset, bytes) in records {
            f.write_all(&offset.to_le_bytes()).unwrap();
            f.write_all(&(bytes.len() as u32).to_le_bytes()).unwrap();
            f.write_all(bytes).unwrap();
        }
    }

    #[test]
    fn streams_records_in_order_then_ends() {
        let dir = std::env::temp_dir().join(format!("mwperf-trace-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        write(&dir, 1, &[(0, vec![1; 100]), (25_000_000, vec![2; 4000])]);
        let mut t = Trace::open(dir.to_str().unwrap(), 1).unwrap();
        assert_eq!(t.period_ns, 25_000_000);
        assert_eq!(t.next_offset(), Some(0));
        assert_eq!(t.advance().unwrap(), 0);
        assert_eq!(t.current(), &[1u8; 100][..]);
        assert_eq!(t.advance().unwrap(), 25_000_000);
        assert_eq!(t.current().len(), 4000);
        assert_eq!(t.next_offset(), None);
        assert!(Trace::open(dir.to_str().unwrap(), 7)
            .unwrap_err()
            .contains("topic-7.trace"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_looping_trace_starts_over_one_span_later() {
        let dir = std::env::temp_dir().join(format!("mwperf-trace-loop-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        write(&dir, 0, &[(0, vec![1; 10]), (10, vec![2; 20])]);
        let mut t = Trace::open(dir.to_str().unwrap(), 0).unwrap().looping(35);
        let offsets: Vec<u64> = (0..6).map(|_| t.advance().unwrap()).collect();
        assert_eq!(offsets, [0, 10, 35, 45, 70, 80]);
        assert_eq!(
            t.current(),
            &[2u8; 20][..],
            "the bytes come round again too"
        );
        write(&dir, 1, &[]);
        let empty = Trace::open(dir.to_str().unwrap(), 1).unwrap().looping(35);
        assert_eq!(
            empty.next_offset(),
            None,
            "an empty trace does not loop forever"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
