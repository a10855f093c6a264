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
/// The last four are ROS 2's own moments (the tracepoints libmwperf_layers.so interposes: its
/// ros2.rs): of the message the row sends (rcl_publish, rmw_publish) and of the one it receives
/// (rmw_take, rcl_take); empty for every other transport.
pub const COLUMNS: &str = "topic,seq,intended,write,send_first,send_last,recv_first,recv_last,\
take,callback,rcl_publish,rmw_publish,rmw_take,rcl_take";

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
    /// ROS 2's moments, in [`COLUMNS`]' order (None: not seen, or not ROS 2).
    pub ros2: [Option<u64>; 4],
}

/// (run id, topic, seq, echo, send, source: None unless keyed by the publisher too)
type Key = (u32, u16, u64, bool, bool, Option<u32>);

/// The calls of every message, keyed with the header's source (`sourced`: a graph node's
/// rows) or without it (the point roles, whose `peer_rx_ns` is a time or 0).
fn calls_of(events: &[SyscallEvent], sourced: bool) -> HashMap<Key, Calls> {
    let key = |e: &SyscallEvent| {
        (
            e.run_id,
            e.topic,
            e.seq,
            e.flags & FLAG_ECHO != 0,
            e.send,
            sourced.then_some(e.source),
        )
    };
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

/// (run id, topic, seq, echo, tracepoint kind, source as in [`Key`])
type TraceKey = (u32, u16, u64, bool, u8, Option<u32>);

/// The earliest moment of each ROS 2 tracepoint per message (a later one for the same message
/// would be a second delivery).
fn moments_of(events: &[SyscallEvent], sourced: bool) -> HashMap<TraceKey, u64> {
    let mut out: HashMap<TraceKey, u64> = HashMap::new();
    for e in events.iter().filter(|e| measured(e)) {
        if let Some(kind) = e.trace {
            let key = (
                e.run_id,
                e.topic,
                e.seq,
                e.flags & FLAG_ECHO != 0,
                kind,
                sourced.then_some(e.source),
            );
            let t = out.entry(key).or_insert(e.t_ns);
            *t = (*t).min(e.t_ns);
        }
    }
    out
}

fn measured(e: &SyscallEvent) -> bool {
    e.flags & (FLAG_WARMUP | FLAG_PROBE) == 0
}

/// Every row with the calls of its outgoing and incoming message.
pub fn pair(rows: Vec<Row>, events: &[SyscallEvent]) -> Vec<Paired> {
    let plain = rows
        .iter()
        .any(|r| r.source.is_none())
        .then(|| calls_of(events, false));
    let sourced = rows
        .iter()
        .any(|r| r.source.is_some())
        .then(|| calls_of(events, true));
    let find = |r: &Row, echo: Option<bool>, send: bool| {
        let calls = if r.source.is_some() { &sourced } else { &plain };
        echo.zip(calls.as_ref())
            .and_then(|(echo, calls)| {
                calls
                    .get(&(r.run_id, r.topic, r.seq, echo, send, r.source))
                    .copied()
            })
            .unwrap_or_default()
    };
    let traced = events.iter().any(|e| e.trace.is_some());
    let plain_moments = traced.then(|| moments_of(events, false));
    let sourced_moments = traced.then(|| moments_of(events, true));
    let moment = |r: &Row, echo: Option<bool>, kind: u8| {
        let moments = if r.source.is_some() {
            &sourced_moments
        } else {
            &plain_moments
        };
        echo.zip(moments.as_ref()).and_then(|(echo, m)| {
            m.get(&(r.run_id, r.topic, r.seq, echo, kind, r.source))
                .copied()
        })
    };
    rows.into_iter()
        .map(|row| Paired {
            send: find(&row, row.side.sends_echo(), true),
            recv: find(&row, row.side.receives_echo(), false),
            ros2: [0u8, 1, 2, 3].map(|kind| {
                let echo = if kind < 2 {
                    row.side.sends_echo()
                } else {
                    row.side.receives_echo()
                };
                moment(&row, echo, kind)
            }),
            row,
        })
        .collect()
}

fn cell(v: Option<u64>) -> String {
    v.filter(|&t| t > 0)
        .map_or_else(String::new, |t| t.to_string())
}

/// A graph node's CSV (python/mwperf/graph/layers.py): which side of the node the row is
/// (`pub`: a publisher or a chain stage's outlet sent it; `sub`: a subscription received it),
/// the publishing node's index, the point columns, and for a stage's message the one it was
/// published on (`cause_*`).
pub const NODE_COLUMNS: &str = "side,topic,source,seq,intended,write,send_first,send_last,\
recv_first,recv_last,take,callback,cause_topic,cause_source,cause_seq";

/// Which columns a rows file has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// ping, pong, pub, sub: [`COLUMNS`]
    Point,
    /// a graph node: [`NODE_COLUMNS`]
    Node,
}

/// One graph node's CSV line (no newline).
pub fn node_line(p: &Paired) -> String {
    let r = &p.row;
    let side = if r.side.sends_echo().is_some() {
        "pub"
    } else {
        "sub"
    };
    let (ct, cs, cq) = r.cause.map_or_else(
        || (String::new(), String::new(), String::new()),
        |c| (c.topic.to_string(), c.source.to_string(), c.seq.to_string()),
    );
    let point = base_line(p);
    let (topic, rest) = point.split_once(',').expect("a line has columns");
    let source = r.source.map_or_else(String::new, |s| s.to_string());
    format!("{side},{topic},{source},{rest},{ct},{cs},{cq}")
}

/// One point's CSV line (no newline): [`COLUMNS`].
pub fn line(p: &Paired) -> String {
    let mut out = base_line(p);
    for t in p.ros2 {
        out.push(',');
        out.push_str(&cell(t));
    }
    out
}

/// The columns a point and a graph node share (a node's have no ROS 2 moments yet).
fn base_line(p: &Paired) -> String {
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

/// Write the rows to `path` in `layout` (through a temporary file: a reader never sees half
/// of it).
pub fn write(path: &str, rows: &[Paired], layout: Layout) -> std::io::Result<()> {
    let tmp = format!("{path}.tmp{}", std::process::id());
    let mut out = std::io::BufWriter::new(std::fs::File::create(&tmp)?);
    let (head, line): (&str, fn(&Paired) -> String) = match layout {
        Layout::Point => (COLUMNS, line),
        Layout::Node => (NODE_COLUMNS, node_line),
    };
    writeln!(out, "{head}")?;
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
            source: 0,
            trace: None,
        }
    }

    fn trace(t: u64, seq: u64, flags: u8, kind: u8) -> SyscallEvent {
        SyscallEvent {
            trace: Some(kind),
            ..ev(t, seq, flags, false, false, false)
        }
    }

    #[test]
    fn a_ros2_row_gets_the_moments_of_its_own_message_and_of_the_echo() {
        let events = [
            trace(22, 1, 0, 0), // the ping's rcl_publish
            trace(25, 1, 0, 1), // its rmw_publish
            trace(26, 1, 0, 1), // a later one (never for one message): left out
            ev(30, 1, 0, true, true, true),
            trace(60, 1, 0, 2), // the pong's take of the ping: not the ping's row's
            trace(86, 1, FLAG_ECHO, 2), // the echo's rmw_take
            trace(88, 1, FLAG_ECHO, 3), // the echo's rcl_take
            trace(87, 2, FLAG_ECHO, 3), // another message's
        ];
        let p = pair(vec![row(Side::Ping, 1)], &events);
        assert_eq!(p[0].ros2, [Some(22), Some(25), Some(86), Some(88)]);
        // the system calls are paired as before: a tracepoint is not a call
        assert_eq!(p[0].send.first, Some(30));
        assert_eq!(p[0].recv, Calls::default());
        assert_eq!(line(&p[0]), "0,1,10,20,30,30,,,90,95,22,25,86,88");
        let pong = pair(vec![row(Side::Pong, 1)], &events);
        assert_eq!(pong[0].ros2, [None, None, Some(60), None]);
        assert_eq!(COLUMNS.split(',').count(), line(&p[0]).split(',').count());
    }

    fn row(side: Side, seq: u64) -> Row {
        Row {
            side,
            run_id: 9,
            topic: 0,
            seq,
            source: None,
            cause: None,
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
        assert_eq!(line(&p[0]), "0,1,10,20,30,30,80,85,90,95,,,,");
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
        assert_eq!(line(&p[0]), "0,4,10,20,,,40,,90,95,,,,");
    }

    #[test]
    fn a_node_row_takes_the_calls_of_its_own_publisher_not_another_copy_s() {
        // two copies publish topic 0 and both number from 0: the header's source tells them apart
        let from = |t: u64, source: u32| {
            let mut e = ev(t, 4, 0, false, true, true);
            e.source = source;
            e
        };
        let events = [from(40, 2), from(41, 1)];
        let mut r = row(Side::Sub, 4);
        r.source = Some(1);
        let p = pair(vec![r], &events);
        assert_eq!(p[0].recv.first, Some(41));
        assert_eq!(node_line(&p[0]), "sub,0,1,4,10,20,,,41,41,90,95,,,");
    }

    #[test]
    fn a_stage_s_row_names_the_message_it_was_published_on() {
        let mut send = ev(30, 7, 0, true, true, true);
        send.source = 5;
        send.topic = 2;
        let mut r = row(Side::Pub, 7);
        (r.topic, r.source) = (2, Some(5));
        r.cause = Some(crate::layers::book::Cause {
            topic: 0,
            source: 1,
            seq: 4,
        });
        let p = pair(vec![r], &[send]);
        assert_eq!(p[0].send.first, Some(30));
        assert_eq!(node_line(&p[0]), "pub,2,5,7,10,20,30,30,,,90,95,0,1,4");
        assert_eq!(
            NODE_COLUMNS.split(',').count(),
            node_line(&p[0]).split(',').count()
        );
    }
}
