//! Pairing the agent's stamps (book.rs) with the system calls that carried each message
//! (ring.rs), and the CSV the control plane reads (python/mwperf/layers_rows.py).
//!
//! Per message and direction the earliest call carrying its header is `*_first` (a reliable
//! middleware's retransmission or a second copy to another locator comes later and is left
//! out) and the earliest call that completed its bytes at or after it is `*_last` (the same
//! call for a message carried whole; a later one on a byte stream; none for a message split
//! over several datagrams, whose last fragment the interposer cannot recognise).

use std::collections::HashMap;
use std::io::Write;

use mwperf_core::wire::{FLAG_ECHO, FLAG_PROBE, FLAG_WARMUP};

use super::book::Row;
use super::ring::SyscallEvent;

/// The CSV's columns; empty = not seen.
pub const COLUMNS: &str =
    "topic,seq,intended,write,send_first,send_last,recv_first,recv_last,take,callback";

/// The system calls of one message in one direction.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Calls {
    pub first: Option<u64>,
    pub last: Option<u64>,
}

/// One row of the CSV.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Paired {
    pub row: Row,
    pub send: Calls,
    pub recv: Calls,
}

/// (run id, topic, seq, echo, send)
type Key = (u32, u16, u64, bool, bool);

fn calls_of(events: &[SyscallEvent]) -> HashMap<Key, Calls> {
    let mut firsts: HashMap<Key, u64> = HashMap::new();
    for e in events.iter().filter(|e| e.first && measured(e)) {
        let t = firsts.entry(key(e)).or_insert(e.t_ns);
        *t = (*t).min(e.t_ns);
    }
    let mut out: HashMap<Key, Calls> = firsts
        .iter()
        .map(|(k, &t)| {
            (
                *k,
                Calls {
                    first: Some(t),
                    last: None,
                },
            )
        })
        .collect();
    for e in events.iter().filter(|e| e.last && measured(e)) {
        if let Some(c) = out.get_mut(&key(e)) {
            if c.first.is_some_and(|f| e.t_ns >= f) {
                c.last = Some(c.last.map_or(e.t_ns, |l| l.min(e.t_ns)));
            }
        }
    }
    out
}

fn measured(e: &SyscallEvent) -> bool {
    e.flags & (FLAG_WARMUP | FLAG_PROBE) == 0
}

fn key(e: &SyscallEvent) -> Key {
    (e.run_id, e.topic, e.seq, e.flags & FLAG_ECHO != 0, e.send)
}

/// Every row with the calls of its outgoing and incoming message.
pub fn pair(rows: Vec<Row>, events: &[SyscallEvent]) -> Vec<Paired> {
    let calls = calls_of(events);
    let find = |r: &Row, echo: Option<bool>, send: bool| {
        echo.and_then(|echo| calls.get(&(r.run_id, r.topic, r.seq, echo, send)).copied())
            .unwrap_or_default()
    };
    rows.into_iter()
        .map(|row| Paired {
            send: find(&row, row.side.sends_echo(), true),
            recv: find(&row, row.side.receives_echo(), false),
            row,
        })
        .collect()
}

fn cell(v: Option<u64>) -> String {
    v.filter(|&t| t > 0)
        .map_or_else(String::new, |t| t.to_string())
}

/// One CSV line (no newline).
pub fn line(p: &Paired) -> String {
    let r = &p.row;
    [
        r.topic.to_string(),
        r.seq.to_string(),
        cell(Some(r.intended)),
        cell(Some(r.write)),
        cell(p.send.first),
        cell(p.send.last),
        cell(p.recv.first),
        cell(p.recv.last),
        cell(Some(r.take)),
        cell(Some(r.callback)),
    ]
    .join(",")
}

/// Write the rows to `path` (through a temporary file: a reader never sees half of it).
pub fn write(path: &str, rows: &[Paired]) -> std::io::Result<()> {
    let tmp = format!("{path}.tmp{}", std::process::id());
    let mut out = std::io::BufWriter::new(std::fs::File::create(&tmp)?);
    writeln!(out, "{COLUMNS}")?;
    for p in rows {
        writeln!(out, "{}", line(p))?;
    }
    out.into_inner().map_err(|e| e.into_error())?;
    std::fs::rename(&tmp, path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layers::book::Side;

    fn ev(t: u64, seq: u64, flags: u8, send: bool, first: bool, last: bool) -> SyscallEvent {
        SyscallEvent {
            t_ns: t,
            seq,
            run_id: 9,
            topic: 0,
            flags,
            send,
            first,
            last,
            bytes: 100,
            fd: 3,
        }
    }

    fn row(side: Side, seq: u64) -> Row {
        Row {
            side,
            run_id: 9,
            topic: 0,
            seq,
            intended: 10,
            write: 20,
            take: 90,
            callback: 95,
        }
    }

    #[test]
    fn a_ping_row_gets_its_send_and_its_echo_s_receive() {
        let events = [
            ev(30, 1, 0, true, true, true),           // the ping's message
            ev(35, 1, 0, true, true, true),           // a second copy: later, left out
            ev(80, 1, FLAG_ECHO, false, true, false), // the echo's first bytes
            ev(85, 1, FLAG_ECHO, false, false, true), // ... its last
            ev(50, 1, FLAG_WARMUP, true, true, true), // warm-up: never measured
            ev(60, 2, 0, true, true, true),           // another message
            ev(70, 1, 0, false, true, true),          // its own message looped back: not the echo
        ];
        let p = pair(vec![row(Side::Ping, 1)], &events);
        assert_eq!(
            p[0].send,
            Calls {
                first: Some(30),
                last: Some(30)
            }
        );
        assert_eq!(
            p[0].recv,
            Calls {
                first: Some(80),
                last: Some(85)
            }
        );
        assert_eq!(line(&p[0]), "0,1,10,20,30,30,80,85,90,95");
    }

    #[test]
    fn a_pong_receives_the_message_and_sends_the_echo() {
        let events = [
            ev(40, 4, 0, false, true, true),
            ev(60, 4, FLAG_ECHO, true, true, true),
        ];
        let p = pair(vec![row(Side::Pong, 4)], &events);
        assert_eq!(p[0].recv.first, Some(40));
        assert_eq!(p[0].send.first, Some(60));
    }

    #[test]
    fn a_fragmented_datagram_has_a_first_call_but_no_last_and_other_runs_are_ignored() {
        let mut other = ev(41, 4, 0, false, true, true);
        other.run_id = 8;
        let events = [ev(40, 4, 0, false, true, false), other];
        let p = pair(vec![row(Side::Sub, 4)], &events);
        assert_eq!(
            p[0].recv,
            Calls {
                first: Some(40),
                last: None
            }
        );
        assert_eq!(p[0].send, Calls::default());
        assert_eq!(line(&p[0]), "0,4,10,20,,,40,,90,95");
    }
}
