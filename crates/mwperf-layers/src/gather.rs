//! A read-only view of the bytes one system call moves: one buffer, or an iovec array
//! (`writev`, `sendmsg`, `readv`, `recvmsg`, …), cut at the bytes that count (`limit`).
//!
//! The scanner never copies a buffer to look at it: the magic is searched piece by piece with
//! glibc's `memchr` ([`find4`]), and only the 3 bytes either side of a piece boundary (a magic cut in two)
//! and a header that straddles a boundary are gathered into small stack buffers.

use core::ffi::c_void;

use mwperf_core::wire::{Header, Reject, HEADER_LEN, MAGIC};

/// The first offset of the magic in `hay`: glibc's SIMD `memchr` for its first byte, then the
/// other three compared. On payload bytes (the pattern, or anything not made of `M`s) that is
/// several times faster than `memmem`, whose short-needle search goes about a byte per cycle:
/// a call without a header costs a few ns per KiB, not a few hundred.
fn find4(hay: &[u8]) -> Option<usize> {
    let mut from = 0;
    while from + 4 <= hay.len() {
        let rest = &hay[from..hay.len() - 3];
        // SAFETY: a valid slice; memchr only reads it
        let hit =
            unsafe { libc::memchr(rest.as_ptr() as *const c_void, MAGIC[0] as i32, rest.len()) };
        if hit.is_null() {
            return None;
        }
        let p = from + (hit as usize - rest.as_ptr() as usize);
        if hay[p..p + 4] == MAGIC {
            return Some(p);
        }
        from = p + 1;
    }
    None
}

/// The bytes of one call: `iov` pieces in order, of which the first `len()` bytes count.
pub struct Gather<'a> {
    iov: &'a [libc::iovec],
    len: usize,
}

/// What is at an offset where the magic was seen.
#[derive(Debug, PartialEq, Eq)]
pub enum At {
    /// A valid header (magic, version, checksum).
    Header(Header),
    /// The magic (or a prefix of it) and fewer than [`HEADER_LEN`] bytes until the end: maybe a
    /// header whose rest comes with the next call on a byte stream.
    Cut,
    /// Not a header (a payload that happens to hold the magic, damaged bytes).
    Nothing,
}

impl<'a> Gather<'a> {
    /// The first `limit` bytes of `iov` (fewer if the pieces hold fewer).
    pub fn new(iov: &'a [libc::iovec], limit: usize) -> Self {
        let total = iov.iter().fold(0usize, |a, v| a.saturating_add(v.iov_len));
        Gather {
            iov,
            len: total.min(limit),
        }
    }

    /// How many bytes count.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Each piece as (offset of its first byte, its bytes), up to `len()`.
    fn pieces(&self) -> impl Iterator<Item = (usize, &'a [u8])> + 'a {
        let len = self.len;
        let mut off = 0usize;
        self.iov.iter().filter_map(move |v| {
            if off >= len || v.iov_base.is_null() {
                off = off.saturating_add(v.iov_len);
                return None;
            }
            let n = v.iov_len.min(len - off);
            // SAFETY: the caller of the system call vouches for iov_base..+iov_len being
            // readable (for a receive: the kernel just wrote its first `len` bytes)
            let s = unsafe { core::slice::from_raw_parts(v.iov_base as *const u8, n) };
            let at = off;
            off = off.saturating_add(v.iov_len);
            (n > 0).then_some((at, s))
        })
    }

    /// Copy the bytes from `off` into `out` (as many as there are); how many were copied.
    pub fn copy(&self, off: usize, out: &mut [u8]) -> usize {
        let mut done = 0;
        for (at, s) in self.pieces() {
            if done == out.len() {
                break;
            }
            let want = off + done;
            if want >= at + s.len() || want < at {
                continue;
            }
            let from = &s[want - at..];
            let k = from.len().min(out.len() - done);
            out[done..done + k].copy_from_slice(&from[..k]);
            done += k;
        }
        done
    }

    /// The first offset `p` in `from..to` (and `p + 4 <= len()`) where the magic starts.
    pub fn find_magic(&self, from: usize, to: usize) -> Option<usize> {
        let to = to.min(self.len);
        if from >= to {
            return None;
        }
        let mut prev: Option<(usize, &[u8])> = None;
        for (at, s) in self.pieces() {
            let end = at + s.len();
            if end <= from {
                prev = Some((at, s));
                continue;
            }
            // a magic cut by the boundary before this piece (starts in an earlier piece)
            if let Some((pat, ps)) = prev {
                let pend = pat + ps.len();
                let lo = from.max(pend.saturating_sub(3));
                for p in lo..pend.min(to) {
                    let mut w = [0u8; 4];
                    if self.copy(p, &mut w) == 4 && w == MAGIC {
                        return Some(p);
                    }
                }
            }
            if at >= to {
                return None;
            }
            // wholly inside this piece: [max(from, at), min(to + 3, end))
            let lo = from.max(at);
            let hi = (to + 3).min(end);
            if hi >= lo + 4 {
                if let Some(p) = find4(&s[lo - at..hi - at]) {
                    return Some(lo + p);
                }
            }
            prev = Some((at, s));
        }
        None
    }

    /// The first offset at or after `from` where the bytes up to the end are a proper prefix
    /// of the magic (1 to 3 bytes: a magic cut by the end of the call). One copy of the last
    /// 3 bytes at most.
    pub fn magic_prefix_from(&self, from: usize) -> Option<usize> {
        let lo = from.max(self.len.saturating_sub(3));
        if lo >= self.len {
            return None;
        }
        let mut w = [0u8; 3];
        let k = self.len - lo;
        if self.copy(lo, &mut w[..k]) != k {
            return None;
        }
        (0..k)
            .find(|&i| w[i..k].iter().zip(MAGIC.iter()).all(|(a, b)| a == b))
            .map(|i| lo + i)
    }

    /// What starts at `off` (where the magic was found).
    pub fn at(&self, off: usize) -> At {
        if off + HEADER_LEN > self.len {
            return At::Cut;
        }
        // within one piece: decode in place; else gather the 56 bytes
        for (at, s) in self.pieces() {
            if off >= at && off + HEADER_LEN <= at + s.len() {
                return decoded(Header::decode_header(&s[off - at..off - at + HEADER_LEN]));
            }
        }
        let mut buf = [0u8; HEADER_LEN];
        if self.copy(off, &mut buf) < HEADER_LEN {
            return At::Cut;
        }
        decoded(Header::decode_header(&buf))
    }
}

/// A decode's verdict as [`At`].
pub fn decoded(r: Result<Header, Reject>) -> At {
    match r {
        Ok(h) => At::Header(h),
        Err(Reject::Truncated { .. }) => At::Cut,
        Err(_) => At::Nothing,
    }
}

/// An iovec over a byte slice.
#[cfg(test)]
pub fn iovec(s: &[u8]) -> libc::iovec {
    libc::iovec {
        iov_base: s.as_ptr() as *mut c_void,
        iov_len: s.len(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_magic_inside_and_across_pieces() {
        let a = b"xxxxMW".to_vec();
        let b = b"PFyyyyMWPF".to_vec();
        let iov = [iovec(&a), iovec(&b)];
        let g = Gather::new(&iov, usize::MAX);
        assert_eq!(g.len(), 16);
        assert_eq!(g.find_magic(0, 16), Some(4));
        assert_eq!(g.find_magic(5, 16), Some(12));
        assert_eq!(g.find_magic(5, 12), None);
        assert_eq!(g.find_magic(0, 4), None);
        // a magic that starts before `to` but ends after it is found
        assert_eq!(g.find_magic(10, 13), Some(12));
        // cut at 15 bytes: the last magic is no longer whole
        assert_eq!(Gather::new(&iov, 15).find_magic(5, 16), None);
        assert_eq!(Gather::new(&iov, 14).magic_prefix_from(0), Some(12));
        assert_eq!(Gather::new(&iov, 15).magic_prefix_from(0), Some(12));
        assert_eq!(Gather::new(&iov, 15).magic_prefix_from(13), None);
        assert_eq!(Gather::new(&iov, 16).magic_prefix_from(0), None);
        assert_eq!(Gather::new(&iov, 5).magic_prefix_from(0), Some(4));
        let mut w = [0u8; 4];
        assert_eq!(g.copy(4, &mut w), 4);
        assert_eq!(&w, b"MWPF");
    }

    #[test]
    fn find4_skips_lone_first_bytes() {
        assert_eq!(find4(b"MMWMWPMWPF"), Some(6));
        assert_eq!(find4(b"MWP"), None);
        assert_eq!(find4(b"xMWPFx"), Some(1));
        assert_eq!(find4(b"MMMMMMMMMM"), None);
    }

    #[test]
    fn many_small_pieces_and_empty_ones() {
        let parts: Vec<Vec<u8>> = ["", "M", "", "W", "P", "F", "z"]
            .iter()
            .map(|s| s.as_bytes().to_vec())
            .collect();
        let iov: Vec<_> = parts.iter().map(|p| iovec(p)).collect();
        let g = Gather::new(&iov, usize::MAX);
        assert_eq!(g.find_magic(0, 5), Some(0));
        assert_eq!(g.find_magic(1, 5), None);
    }
}
