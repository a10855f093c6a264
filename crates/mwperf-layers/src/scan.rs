//! Which messages one system call carries: the pure logic of the interposer, without hooks,
//! clocks or the ring (so it is unit-tested here on plain buffers).
//!
//! A call is scanned for mwperf headers (magic, then `decode_header`: version and checksum).
//! Cheap for big buffers: a call of at most [`SMALL_CALL`] bytes is scanned whole; a bigger one
//! only [`WINDOW`] bytes from its start and [`WINDOW`] bytes after the end of every message
//! found (messages batched back to back are all found; a multi-megabyte payload is skipped, not
//! read).
//!
//! On a byte stream (TCP, Unix stream, pipe) a message may be cut anywhere: [`Stream`] keeps,
//! per fd and direction, the bytes still to come of the current message (the call that moves
//! the last of them logs a `last` event) and the start of a header cut by the end of a call
//! (completed by the next call). Datagrams carry no state: a datagram that holds only the
//! start of a message logs `first` without `last`, and the fragments after it are not tracked.

use mwperf_core::wire::{Header, HEADER_LEN};

use crate::gather::{decoded, At, Gather};

/// A call of at most this many bytes is scanned whole.
pub const SMALL_CALL: usize = 16 * 1024;
/// A bigger call is scanned this far from its start and from the end of every message found.
pub const WINDOW: usize = 2 * 1024;

/// Which message an event belongs to (copied from its header).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Ident {
    pub run_id: u32,
    pub topic: u16,
    pub flags: u8,
    pub seq: u64,
    /// The header's `peer_rx_ns`, low 32 bits: a graph node's message carries its publishing
    /// node's index there (several publishers of one topic number their messages alike).
    pub source: u32,
}

impl Ident {
    pub(crate) fn of(h: &Header) -> Self {
        Ident {
            run_id: h.run_id,
            topic: h.topic,
            flags: h.flags,
            seq: h.seq,
            source: h.peer_rx_ns as u32,
        }
    }
}

/// What one call logs about one message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ev {
    pub ident: Ident,
    /// This call carried the message's header.
    pub first: bool,
    /// This call moved the message's last byte.
    pub last: bool,
    /// The message's bytes in this call.
    pub bytes: u32,
}

/// One direction of one byte stream: what the calls before left unfinished.
#[derive(Debug, Clone, Copy)]
pub struct Stream {
    /// Bytes of the current message still to come (0: the next byte starts something new).
    pub remaining: u64,
    /// The message those bytes belong to.
    pub ident: Ident,
    /// The start of a header cut by the end of the last call (`stash_len` bytes).
    pub stash: [u8; HEADER_LEN],
    pub stash_len: u8,
}

impl Stream {
    pub const fn new() -> Self {
        Stream {
            remaining: 0,
            ident: Ident {
                run_id: 0,
                topic: 0,
                flags: 0,
                seq: 0,
                source: 0,
            },
            stash: [0; HEADER_LEN],
            stash_len: 0,
        }
    }

    /// Nothing carried over: the next call is scanned from its first byte.
    pub fn idle(&self) -> bool {
        self.remaining == 0 && self.stash_len == 0
    }
}

impl Default for Stream {
    fn default() -> Self {
        Self::new()
    }
}

/// Visit every header found in `g` from `start` on whose first byte is before `n` (the bytes
/// the call moved; `g` may hold more: a send's unsent rest still shows a whole header),
/// following the window rule. `visit(offset, header)`. With `cuts` (a byte stream), returns
/// the offset of a cut header at the end (the magic or a prefix of it, fewer than
/// [`HEADER_LEN`] bytes left in `g`), if any.
pub fn headers(
    g: &Gather,
    start: usize,
    n: usize,
    cuts: bool,
    hint: Hint,
    mut visit: impl FnMut(usize, &Header),
) -> Option<usize> {
    let n = n.min(g.len());
    let small = n <= SMALL_CALL;
    let mut from = start;
    let mut window_end = if small {
        n
    } else {
        start.saturating_add(WINDOW).min(n)
    };
    let mut hint = hint.filter(|&(o, _)| o >= start && o < window_end);
    while from < window_end {
        let found = match hint.take() {
            Some((o, h)) => Some((o, At::Header(h))),
            None => g.find_magic(from, window_end).map(|o| (o, g.at(o))),
        };
        let Some((o, at)) = found else {
            // a magic cut to 1..3 bytes by the end of the buffer
            if cuts && window_end == n && n == g.len() {
                return g.magic_prefix_from(from);
            }
            return None;
        };
        match at {
            At::Header(h) => {
                visit(o, &h);
                from = o.saturating_add(h.message_len());
                if !small {
                    window_end = from.saturating_add(WINDOW).min(n);
                }
            }
            At::Cut => return cuts.then_some(o),
            At::Nothing => from = o + 1,
        }
    }
    None
}

/// The first header of a call as its scan before the clock read found it (offset, header),
/// so the accounting after the call does not search and decode it a second time.
pub type Hint = Option<(usize, Header)>;

/// Whether a call is worth a clock read: a header in its first window (`Some(Some(first))`),
/// or on a byte stream (`cuts`) the start of one cut by the end of the call (`Some(None)`).
/// Stops at the first header.
pub fn worth_stamping(g: &Gather, cuts: bool) -> Option<Hint> {
    let n = g.len();
    let window_end = if n <= SMALL_CALL { n } else { WINDOW.min(n) };
    let mut from = 0;
    while from < window_end {
        let Some(o) = g.find_magic(from, window_end) else {
            let cut = cuts && window_end == n && g.magic_prefix_from(from).is_some();
            return cut.then_some(None);
        };
        match g.at(o) {
            At::Header(h) => return Some(Some((o, h))),
            At::Cut => return cuts.then_some(None),
            At::Nothing => from = o + 1,
        }
    }
    None
}

/// Account for a call that moved the first `n` bytes of `g` (`n <= g.len()`): `emit` every
/// event it logs, in order, and update the stream state (`None`: a datagram, or a stream whose
/// state is busy in another thread: scanned without carry-over). `hint`: the first header of
/// `g` (from [`worth_stamping`]), used when the scan starts at the call's first byte.
pub fn account(
    g: &Gather,
    n: usize,
    mut stream: Option<&mut Stream>,
    hint: Hint,
    mut emit: impl FnMut(Ev),
) {
    let n = n.min(g.len());
    if n == 0 {
        return;
    }
    let mut pos = 0usize;
    if let Some(s) = stream.as_deref_mut() {
        if s.stash_len > 0 {
            pos = complete_stash(g, n, s, &mut emit);
            if s.stash_len > 0 {
                return; // still not a whole header: everything went into the stash
            }
        }
        if s.remaining > 0 {
            let c = s.remaining.min((n - pos) as u64);
            s.remaining -= c;
            pos += c as usize;
            if s.remaining == 0 {
                emit(Ev {
                    ident: s.ident,
                    first: false,
                    last: true,
                    bytes: c as u32,
                });
            }
        }
    }
    if pos >= n {
        return;
    }
    let hint = if pos == 0 { hint } else { None };
    let cut = headers(g, pos, n, stream.is_some(), hint, |o, h| {
        let len = h.message_len() as u64;
        let here = len.min((n - o) as u64);
        let ident = Ident::of(h);
        emit(Ev {
            ident,
            first: true,
            last: here == len,
            bytes: here as u32,
        });
        if let Some(s) = stream.as_deref_mut() {
            if here < len {
                s.remaining = len - here;
                s.ident = ident;
            }
        }
    });
    if let (Some(s), Some(o)) = (stream, cut) {
        if s.remaining == 0 && o < n {
            let k = g.copy(o, &mut s.stash[..(n - o).min(HEADER_LEN - 1)]);
            s.stash_len = k as u8;
        }
    }
}

/// The call after one that ended in a cut header: complete it with this call's first bytes.
/// Returns how many of this call's bytes belong to that message (0 if it was no header).
fn complete_stash(g: &Gather, n: usize, s: &mut Stream, emit: &mut impl FnMut(Ev)) -> usize {
    let k = s.stash_len as usize;
    let need = HEADER_LEN - k;
    let mut buf = [0u8; HEADER_LEN];
    buf[..k].copy_from_slice(&s.stash[..k]);
    if n < need {
        // still short: keep collecting while it still looks like the magic
        let got = g.copy(0, &mut buf[k..k + n]);
        let m = (k + got).min(4);
        if buf[..m] == mwperf_core::wire::MAGIC[..m] {
            s.stash[k..k + got].copy_from_slice(&buf[k..k + got]);
            s.stash_len = (k + got) as u8;
        } else {
            s.stash_len = 0;
        }
        return 0;
    }
    s.stash_len = 0;
    g.copy(0, &mut buf[k..]);
    let At::Header(h) = decoded(Header::decode_header(&buf)) else {
        return 0; // not a header after all: this call is scanned from its start
    };
    let rest = h.message_len() as u64 - k as u64; // the message's bytes from this call on
    let here = rest.min(n as u64);
    let ident = Ident::of(&h);
    emit(Ev {
        ident,
        first: true,
        last: here == rest,
        bytes: here as u32,
    });
    if here < rest {
        s.remaining = rest - here;
        s.ident = ident;
    }
    here as usize
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gather::iovec;
    use mwperf_core::wire::build_message;

    fn msg(seq: u64, payload: u32) -> Vec<u8> {
        let mut v = Vec::new();
        let h = Header {
            flags: 0,
            run_id: 9,
            topic: 1,
            seq,
            intended_ns: 1,
            sent_ns: 2,
            peer_rx_ns: 0,
            payload_len: payload,
        };
        build_message(&mut v, &h);
        v
    }

    fn run(pieces: &[&[u8]], n: usize, s: Option<&mut Stream>) -> Vec<(u64, bool, bool, u32)> {
        let iov: Vec<_> = pieces.iter().map(|p| iovec(p)).collect();
        let g = Gather::new(&iov, usize::MAX);
        let mut out = Vec::new();
        let before = s.as_deref().copied();
        let cuts = s.is_some();
        account(&g, n, s, None, |e| {
            out.push((e.ident.seq, e.first, e.last, e.bytes))
        });
        // the hooks' way: the hint of the scan before the clock read gives the same events
        if before.is_none_or(|b| b.idle()) {
            if let Some(hint) = worth_stamping(&g, cuts) {
                let mut copy = before;
                let mut hinted = Vec::new();
                account(&g, n, copy.as_mut(), hint, |e| {
                    hinted.push((e.ident.seq, e.first, e.last, e.bytes))
                });
                assert_eq!(hinted, out);
            } else {
                assert!(out.is_empty());
            }
        }
        out
    }

    #[test]
    fn a_whole_message_is_first_and_last() {
        let m = msg(5, 100);
        assert_eq!(run(&[&m], m.len(), None), [(5, true, true, 156)]);
        // foreign bytes around it
        let mut b = b"garbage MWPF not a header".to_vec();
        b.extend_from_slice(&m);
        b.extend_from_slice(b"tail");
        assert_eq!(run(&[&b], b.len(), None), [(5, true, true, 156)]);
        // no header at all
        assert!(run(&[&[7u8; 4000]], 4000, None).is_empty());
    }

    #[test]
    fn batched_messages_are_all_found() {
        let mut b = Vec::new();
        for seq in 0..50 {
            b.extend_from_slice(&[0xEE; 3]); // a batching protocol's own framing
            b.extend_from_slice(&msg(seq, 64));
        }
        let ev = run(&[&b], b.len(), None);
        assert_eq!(ev.len(), 50);
        assert!(ev
            .iter()
            .enumerate()
            .all(|(i, e)| *e == (i as u64, true, true, 120)));
    }

    #[test]
    fn a_header_straddling_iovecs_is_found() {
        let m = msg(3, 10);
        for cut in 1..m.len() {
            let (a, b) = m.split_at(cut);
            assert_eq!(
                run(&[b"xy", a, b], m.len() + 2, None),
                [(3, true, true, 66)],
                "cut {cut}"
            );
        }
        // three pieces, the magic over all of them
        let (a, rest) = m.split_at(1);
        let (b, c) = rest.split_at(2);
        assert_eq!(run(&[a, b, c], m.len(), None), [(3, true, true, 66)]);
    }

    #[test]
    fn big_buffers_are_scanned_in_windows() {
        // batched big messages back to back: every header is found by jumping over payloads
        let mut b = Vec::new();
        for seq in 0..4 {
            b.extend_from_slice(&msg(seq, 100_000));
        }
        let ev = run(&[&b], b.len(), None);
        assert_eq!(ev.iter().map(|e| e.0).collect::<Vec<_>>(), [0, 1, 2, 3]);
        // a header deep inside a big foreign buffer is not looked for (only 2 KiB are read)
        let mut far = vec![0u8; 40_000];
        far.extend_from_slice(&msg(1, 10));
        assert!(run(&[&far], far.len(), None).is_empty());
        // within the first window it is found
        let mut near = vec![0u8; 1000];
        near.extend_from_slice(&msg(1, 20_000));
        assert_eq!(run(&[&near], near.len(), None), [(1, true, true, 20_056)]);
        // a small call is scanned whole
        let mut small = vec![0u8; 15_000];
        small.extend_from_slice(&msg(2, 10));
        assert_eq!(run(&[&small], small.len(), None), [(2, true, true, 66)]);
    }

    #[test]
    fn a_datagram_fragment_is_first_without_last() {
        let m = msg(4, 1000);
        assert_eq!(run(&[&m[..500]], 500, None), [(4, true, false, 500)]);
        assert!(run(&[&m[500..]], 556, None).is_empty());
        // a cut header in a datagram is nothing
        assert!(run(&[&m[..30]], 30, None).is_empty());
    }

    #[test]
    fn a_stream_message_split_over_calls_logs_first_then_last() {
        let m = msg(7, 1000);
        let mut s = Stream::new();
        assert_eq!(
            run(&[&m[..100]], 100, Some(&mut s)),
            [(7, true, false, 100)]
        );
        assert_eq!(s.remaining, 956);
        assert!(run(&[&m[100..600]], 500, Some(&mut s)).is_empty());
        // the completing call also starts the next message
        let next = msg(8, 0);
        let mut tail = m[600..].to_vec();
        tail.extend_from_slice(&next);
        assert_eq!(
            run(&[&tail], tail.len(), Some(&mut s)),
            [(7, false, true, 456), (8, true, true, 56)]
        );
        assert!(s.idle());
    }

    #[test]
    fn a_stream_header_cut_by_a_call_is_completed_by_the_next() {
        let m = msg(11, 40);
        for cut in 1..HEADER_LEN {
            let mut s = Stream::new();
            let mut first = b"zz".to_vec();
            first.extend_from_slice(&m[..cut]);
            assert!(
                run(&[&first], first.len(), Some(&mut s)).is_empty(),
                "cut {cut}"
            );
            assert_eq!(s.stash_len as usize, cut, "cut {cut}");
            let rest = &m[cut..];
            assert_eq!(
                run(&[rest], rest.len(), Some(&mut s)),
                [(11, true, true, (m.len() - cut) as u32)],
                "cut {cut}"
            );
            assert!(s.idle());
        }
        // the rest of a header arriving one byte at a time
        let mut s = Stream::new();
        for i in 0..HEADER_LEN - 1 {
            assert!(run(&[&m[i..i + 1]], 1, Some(&mut s)).is_empty());
        }
        let last = &m[HEADER_LEN - 1..HEADER_LEN];
        assert_eq!(run(&[last], 1, Some(&mut s)), [(11, true, false, 1)]);
        assert_eq!(
            run(&[&m[HEADER_LEN..]], 40, Some(&mut s)),
            [(11, false, true, 40)]
        );
        // a stashed "M" that was not a header: the next call is scanned as usual
        let mut s = Stream::new();
        assert!(run(&[b"xxM"], 3, Some(&mut s)).is_empty());
        assert_eq!(s.stash_len, 1);
        let mut b = b"oops".to_vec();
        b.extend_from_slice(&m);
        assert_eq!(run(&[&b], b.len(), Some(&mut s)), [(11, true, true, 96)]);
    }

    #[test]
    fn a_partial_send_logs_only_what_was_written() {
        // send side: the buffer holds the whole message, the kernel took 20 bytes of it
        let m = msg(2, 100);
        let mut s = Stream::new();
        assert_eq!(run(&[&m], 20, Some(&mut s)), [(2, true, false, 20)]);
        assert_eq!(s.remaining, 136);
        assert_eq!(run(&[&m[20..]], 136, Some(&mut s)), [(2, false, true, 136)]);
        // a datagram send that failed to move the header's start logs nothing
        assert!(run(&[b"ab", &m], 2, None).is_empty());
    }

    #[test]
    fn stamping_is_decided_by_a_header_or_its_start() {
        let m = msg(1, 0);
        let iov = [iovec(&m)];
        assert_eq!(
            worth_stamping(&Gather::new(&iov, usize::MAX), false),
            Some(Some((0, Header::decode(&m).unwrap())))
        );
        assert_eq!(worth_stamping(&Gather::new(&iov, 10), true), Some(None));
        assert_eq!(worth_stamping(&Gather::new(&iov, 10), false), None); // a cut header in a datagram
        assert_eq!(worth_stamping(&Gather::new(&iov, 2), true), Some(None));
        let other = [0u8; 100];
        let iov = [iovec(&other)];
        assert_eq!(worth_stamping(&Gather::new(&iov, usize::MAX), true), None);
        // a big call: only the first window is looked at before stamping
        let mut far = vec![0u8; 40_000];
        far.extend_from_slice(&m);
        let iov = [iovec(&far)];
        assert_eq!(worth_stamping(&Gather::new(&iov, usize::MAX), true), None);
    }
}
