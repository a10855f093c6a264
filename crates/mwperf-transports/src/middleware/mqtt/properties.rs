//! MQTT 5 properties (OASIS MQTT 5.0, §2.2.2): the variable-byte-integer length in front of a
//! property list, walking a received list without copying, and encoding the few properties a
//! client sends (a PUBLISH's Response Topic and Correlation Data, for request/response).
//!
//! Any list that does not parse (an unknown identifier, a value overrunning the list) is a
//! [`Malformed`] error, never a panic.

use std::ops::Range;

use super::codec::Malformed;

/// Property identifiers used by mwperf.
pub const RESPONSE_TOPIC: u8 = 0x08;
pub const CORRELATION_DATA: u8 = 0x09;
pub const RECEIVE_MAXIMUM: u8 = 0x21;

/// A variable byte integer at the front of `buf`: (value, bytes it took). `Ok(None)` = `buf`
/// ends inside it.
pub fn varint(buf: &[u8]) -> Result<Option<(usize, usize)>, Malformed> {
    let mut value = 0usize;
    for i in 0..4 {
        let Some(&b) = buf.get(i) else {
            return Ok(None);
        };
        value |= ((b & 0x7f) as usize) << (7 * i);
        if b & 0x80 == 0 {
            return Ok(Some((value, i + 1)));
        }
    }
    Err(Malformed("variable byte integer longer than 4 bytes"))
}

pub fn put_varint(out: &mut Vec<u8>, mut x: usize) {
    loop {
        let mut b = (x & 0x7f) as u8;
        x >>= 7;
        if x > 0 {
            b |= 0x80;
        }
        out.push(b);
        if x == 0 {
            break;
        }
    }
}

/// Bytes a variable byte integer of `x` takes.
pub fn varint_len(x: usize) -> usize {
    match x {
        0..=127 => 1,
        128..=16_383 => 2,
        16_384..=2_097_151 => 3,
        _ => 4,
    }
}

/// The property list starting at `at` in `body` (its length field first): the list's range and
/// where the packet continues after it.
pub fn list(body: &[u8], at: usize) -> Result<(Range<usize>, usize), Malformed> {
    let rest = body
        .get(at..)
        .ok_or(Malformed("properties beyond the packet"))?;
    let (len, n) = varint(rest)?.ok_or(Malformed("property length cut off"))?;
    let start = at + n;
    let end = start
        .checked_add(len)
        .filter(|e| *e <= body.len())
        .ok_or(Malformed("properties longer than the packet"))?;
    Ok((start..end, end))
}

/// Call `f(identifier, value)` for each property of `props` (a list without its length field);
/// a string or binary value is given without its 2-byte length.
pub fn walk(props: &[u8], mut f: impl FnMut(u8, Range<usize>)) -> Result<(), Malformed> {
    let mut at = 0;
    while at < props.len() {
        let id = props[at];
        at += 1;
        let u16_at = |i: usize| {
            props
                .get(i..i + 2)
                .map(|b| u16::from_be_bytes([b[0], b[1]]) as usize)
        };
        let len = match id {
            0x01 | 0x17 | 0x19 | 0x24 | 0x25 | 0x28 | 0x29 | 0x2a => Some(1),
            0x13 | 0x21 | 0x22 | 0x23 => Some(2),
            0x02 | 0x11 | 0x18 | 0x27 => Some(4),
            0x0b => Some(
                varint(&props[at..])?
                    .ok_or(Malformed("subscription identifier cut off"))?
                    .1,
            ),
            0x03 | 0x08 | 0x09 | 0x12 | 0x15 | 0x16 | 0x1a | 0x1c | 0x1f => {
                let len = u16_at(at).ok_or(Malformed("property length cut off"))?;
                at += 2;
                Some(len)
            }
            0x26 => {
                // user property: two strings; handed over whole
                let first = 2 + u16_at(at).ok_or(Malformed("user property cut off"))?;
                let second = 2 + u16_at(at + first).ok_or(Malformed("user property cut off"))?;
                Some(first + second)
            }
            _ => None,
        };
        let value = len.map(|n| at..at + n);
        let value = value.ok_or(Malformed("unknown property identifier"))?;
        if value.end > props.len() {
            return Err(Malformed("property value overruns the property list"));
        }
        at = value.end;
        f(id, value);
    }
    Ok(())
}

/// The properties of a PUBLISH that mwperf sends (all absent = an empty list).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PubProps<'a> {
    pub response_topic: Option<&'a [u8]>,
    pub correlation: Option<&'a [u8]>,
}

// `len` is the list's encoded size, not a count: no `is_empty` (the lint shows under the
// `fuzzing` feature, which makes this type reachable from outside the crate)
#[allow(clippy::len_without_is_empty)]
impl PubProps<'_> {
    /// Bytes of the list without its length field. Callers keep each value below 64 KiB.
    pub fn len(&self) -> usize {
        self.response_topic.map_or(0, |t| 3 + t.len()) + self.correlation.map_or(0, |c| 3 + c.len())
    }

    /// Bytes of the list with its length field.
    pub fn encoded_len(&self) -> usize {
        varint_len(self.len()) + self.len()
    }

    /// Append the list with its length field.
    pub fn encode(&self, out: &mut Vec<u8>) {
        put_varint(out, self.len());
        for (id, v) in [
            (RESPONSE_TOPIC, self.response_topic),
            (CORRELATION_DATA, self.correlation),
        ] {
            if let Some(v) = v {
                out.push(id);
                out.extend_from_slice(&(v.len() as u16).to_be_bytes());
                out.extend_from_slice(v);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_round_trip() {
        for x in [
            0usize,
            1,
            127,
            128,
            16_383,
            16_384,
            2_097_151,
            2_097_152,
            268_435_455,
        ] {
            let mut out = Vec::new();
            put_varint(&mut out, x);
            assert_eq!(out.len(), varint_len(x));
            assert_eq!(varint(&out).unwrap(), Some((x, out.len())));
            assert_eq!(varint(&out[..out.len() - 1]).unwrap(), None);
        }
        assert!(varint(&[0x80, 0x80, 0x80, 0x80, 0x01]).is_err());
    }

    #[test]
    fn pub_props_walk_back() {
        let p = PubProps {
            response_topic: Some(b"a/b"),
            correlation: Some(&[0, 1, 2, 3, 4, 5, 6, 7]),
        };
        let mut out = vec![0xaa];
        p.encode(&mut out);
        assert_eq!(out.len(), 1 + p.encoded_len());
        let (r, next) = list(&out, 1).unwrap();
        assert_eq!(next, out.len());
        let mut seen = Vec::new();
        walk(&out[r.clone()], |id, v| {
            seen.push((id, out[r.start..][v].to_vec()))
        })
        .unwrap();
        assert_eq!(
            seen,
            vec![
                (RESPONSE_TOPIC, b"a/b".to_vec()),
                (CORRELATION_DATA, vec![0, 1, 2, 3, 4, 5, 6, 7])
            ]
        );
        let mut empty = Vec::new();
        PubProps::default().encode(&mut empty);
        assert_eq!(empty, [0]);
    }

    #[test]
    fn foreign_lists_are_errors_not_panics() {
        // a user property, a u16, a byte, a varint, a u32
        let ok = [
            0x26, 0, 1, b'k', 0, 1, b'v', 0x21, 0, 20, 0x01, 1, 0x0b, 0x81, 0x01, 0x02, 0, 0, 0, 9,
        ];
        let mut ids = Vec::new();
        walk(&ok, |id, _| ids.push(id)).unwrap();
        assert_eq!(ids, [0x26, 0x21, 0x01, 0x0b, 0x02]);
        for bad in [
            &[0x7f][..],         // unknown id
            &[0x08, 0, 5, b'a'], // string overruns
            &[0x21, 0],          // u16 cut off
            &[0x09],             // binary length cut off
            &[0x26, 0, 1, b'k'], // user property missing its value
            &[0x0b, 0x80, 0x80, 0x80, 0x80, 1],
        ] {
            assert!(walk(bad, |_, _| {}).is_err(), "{bad:?}");
        }
        assert!(list(&[5, 1, 2], 0).is_err());
        assert!(list(&[], 0).is_err());
        assert!(list(&[0], 3).is_err());
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..20_000 {
            let mut b = [0u8; 10];
            for v in b.iter_mut() {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                *v = x as u8;
            }
            let _ = walk(&b, |_, v| assert!(v.end <= b.len()));
        }
    }
}
