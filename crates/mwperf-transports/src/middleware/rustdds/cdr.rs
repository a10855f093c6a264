//! The ROS 2 wire type both DDS transports share, written by hand for RustDDS:
//! IDL `struct Bytes_ { sequence<octet> data; long long time; unsigned long long id; }`, type name
//! [`TYPE_NAME`], serialized as plain CDR (XCDR1) little-endian:
//!
//! ```text
//! offset 0      u32 length n
//! offset 4      n data bytes
//! pad to 8      (alignment counts from the first byte after the 4-byte encapsulation header)
//! +0            i64 time   (the mwperf header's sent_ns)
//! +8            u64 id     (the mwperf header's seq)
//! ```
//!
//! Why by hand: serde's CDR path moves a `Vec<u8>` element by element; here the whole message
//! is one `memcpy` each way. The writer side is [`Encoded`] (already-serialized bytes, so the
//! adapter only hands them over); the reader side decodes into [`BytesMsg`]. Decoding never
//! panics: truncated or inconsistent input is an error (RustDDS then drops that sample).
//! Big-endian CDR and final-struct XCDR2 (8-byte values aligned to 4) are accepted on input
//! so other vendors' writers are understood too; output is always CDR little-endian.

use std::fmt;

use ::rustdds::bytes::Bytes;
use ::rustdds::no_key::{Decode, DefaultDecoder, DeserializerAdapter, SerializerAdapter};
use ::rustdds::RepresentationIdentifier;

/// DDS type name of `mwperf_msgs/msg/Bytes` under the ROS 2 naming convention.
pub const TYPE_NAME: &str = "mwperf_msgs::msg::dds_::Bytes_";

/// A decoded sample: the whole mwperf message in `data`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BytesMsg {
    pub data: Vec<u8>,
    pub time: i64,
    pub id: u64,
}

/// A sample serialized by [`encode`], ready for the writer (cloning it is a reference count).
#[derive(Debug, Clone)]
pub struct Encoded(pub Bytes);

/// Why bytes could not be (de)serialized.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CdrError {
    /// Fewer bytes than the layout needs.
    Truncated { have: usize, want: usize },
    /// A representation this adapter does not read (e.g. parameter lists).
    Encoding([u8; 2]),
    /// More than 4 GiB of data cannot be described by the u32 length.
    TooLong(usize),
}

impl fmt::Display for CdrError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CdrError::Truncated { have, want } => write!(
                f,
                "{TYPE_NAME}: {have} bytes, the layout needs at least {want}"
            ),
            CdrError::Encoding(id) => write!(
                f,
                "{TYPE_NAME}: unsupported representation {:02x}{:02x}",
                id[0], id[1]
            ),
            CdrError::TooLong(n) => write!(
                f,
                "{TYPE_NAME}: {n} data bytes do not fit a CDR sequence length"
            ),
        }
    }
}

impl std::error::Error for CdrError {}

/// Round `offset` up to a multiple of `align` (a power of two).
fn align_up(offset: usize, align: usize) -> Option<usize> {
    offset.checked_add(align - 1).map(|o| o & !(align - 1))
}

/// Serialized length of a sample with `n` data bytes (CDR little-endian).
pub fn encoded_len(n: usize) -> usize {
    (4 + n).next_multiple_of(8) + 16
}

/// Serialize one sample as CDR little-endian (the body after the encapsulation header).
pub fn encode(data: &[u8], time: i64, id: u64) -> Result<Encoded, CdrError> {
    let n = u32::try_from(data.len()).map_err(|_| CdrError::TooLong(data.len()))?;
    let total = encoded_len(data.len());
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(&n.to_le_bytes());
    out.extend_from_slice(data);
    out.resize((4 + data.len()).next_multiple_of(8), 0);
    out.extend_from_slice(&time.to_le_bytes());
    out.extend_from_slice(&id.to_le_bytes());
    debug_assert_eq!(out.len(), total);
    Ok(Encoded(Bytes::from(out)))
}

/// The layout parameters of a representation: (little-endian, alignment of 8-byte values).
fn layout(encoding: RepresentationIdentifier) -> Result<(bool, usize), CdrError> {
    let id = encoding.to_bytes();
    match id {
        [0x00, 0x01] => Ok((true, 8)),  // CDR_LE (XCDR1)
        [0x00, 0x00] => Ok((false, 8)), // CDR_BE (XCDR1)
        [0x00, 0x07] => Ok((true, 4)),  // XCDR2 LE, final struct
        [0x00, 0x06] => Ok((false, 4)), // XCDR2 BE, final struct
        _ => Err(CdrError::Encoding(id)),
    }
}

/// Deserialize one sample (the body after the encapsulation header). Trailing bytes (padding a
/// writer may add) are ignored.
pub fn decode(input: &[u8], encoding: RepresentationIdentifier) -> Result<BytesMsg, CdrError> {
    let (little, align8) = layout(encoding)?;
    let truncated = |want: usize| CdrError::Truncated {
        have: input.len(),
        want,
    };
    let len_bytes: [u8; 4] = input
        .get(0..4)
        .and_then(|s| s.try_into().ok())
        .ok_or(truncated(4))?;
    let n = if little {
        u32::from_le_bytes(len_bytes)
    } else {
        u32::from_be_bytes(len_bytes)
    } as usize;
    let data_end = 4usize.checked_add(n).ok_or(truncated(usize::MAX))?;
    let tail = align_up(data_end, align8).ok_or(truncated(usize::MAX))?;
    let want = tail.checked_add(16).ok_or(truncated(usize::MAX))?;
    if input.len() < want {
        return Err(truncated(want));
    }
    let word = |o: usize| -> [u8; 8] { input[o..o + 8].try_into().expect("bounds checked above") };
    let (time, id) = if little {
        (
            i64::from_le_bytes(word(tail)),
            u64::from_le_bytes(word(tail + 8)),
        )
    } else {
        (
            i64::from_be_bytes(word(tail)),
            u64::from_be_bytes(word(tail + 8)),
        )
    };
    Ok(BytesMsg {
        data: input[4..data_end].to_vec(),
        time,
        id,
    })
}

/// The RustDDS adapter: serializes [`Encoded`], deserializes [`BytesMsg`].
pub struct BytesCdr;

impl SerializerAdapter<Encoded> for BytesCdr {
    type Error = CdrError;

    fn output_encoding() -> RepresentationIdentifier {
        RepresentationIdentifier::CDR_LE
    }

    fn to_bytes(value: &Encoded) -> Result<Bytes, CdrError> {
        Ok(value.0.clone())
    }
}

const ENCODINGS: [RepresentationIdentifier; 4] = [
    RepresentationIdentifier::CDR_LE,
    RepresentationIdentifier::CDR_BE,
    RepresentationIdentifier::XCDR2_LE,
    RepresentationIdentifier::XCDR2_BE,
];

impl DeserializerAdapter<BytesMsg> for BytesCdr {
    type Error = CdrError;
    type Decoded = BytesMsg;

    fn supported_encodings() -> &'static [RepresentationIdentifier] {
        &ENCODINGS
    }

    fn transform_decoded(decoded: BytesMsg) -> BytesMsg {
        decoded
    }
}

/// The decoder RustDDS calls for every received sample.
#[derive(Clone, Copy)]
pub struct BytesDecoder;

impl<'de> Decode<'de, BytesMsg> for BytesDecoder {
    type Error = CdrError;

    fn decode_bytes(
        self,
        input: &'de [u8],
        encoding: RepresentationIdentifier,
    ) -> Result<BytesMsg, CdrError> {
        decode(input, encoding)
    }
}

impl DefaultDecoder<BytesMsg> for BytesCdr {
    type Decoder = BytesDecoder;
    const DECODER: BytesDecoder = BytesDecoder;
}

/// DDS type names of the ROS 2 service `mwperf_msgs/srv/Bytes` (`uint8[] data --- uint8[] data`):
/// IDL `struct Bytes_Request_ { sequence<octet> data; }` and the same `Bytes_Response_`, plain
/// CDR `u32 length n`, then the n bytes; with the Cyclone mapping (rmw_cyclonedds) a 16-byte
/// header comes first: `u64 guid`, `i64 seq` (offsets 0 and 8, the length at 16).
pub const REQUEST_TYPE_NAME: &str = "mwperf_msgs::srv::dds_::Bytes_Request_";
pub const RESPONSE_TYPE_NAME: &str = "mwperf_msgs::srv::dds_::Bytes_Response_";

/// A received service sample as it came: the CDR body after the encapsulation header and its
/// byte order. Decoding it never fails (beyond an unknown representation), so the service can
/// count the samples it cannot read instead of RustDDS dropping them unseen.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RawMsg {
    pub body: Vec<u8>,
    pub little: bool,
}

/// The 16-byte header of the Cyclone mapping: (guid, seq).
pub type CycloneHeader = (u64, i64);

/// Serialize a service sample as CDR little-endian: the Cyclone header if any, then the
/// sequence (length, bytes; one copy).
pub fn encode_service(header: Option<CycloneHeader>, data: &[u8]) -> Result<Encoded, CdrError> {
    let n = u32::try_from(data.len()).map_err(|_| CdrError::TooLong(data.len()))?;
    let mut out = Vec::with_capacity(16 + 4 + data.len());
    if let Some((guid, seq)) = header {
        out.extend_from_slice(&guid.to_le_bytes());
        out.extend_from_slice(&seq.to_le_bytes());
    }
    out.extend_from_slice(&n.to_le_bytes());
    out.extend_from_slice(data);
    Ok(Encoded(Bytes::from(out)))
}

/// Read a service sample in place: the header (when `with_header`) and the data, moved to the
/// start of `msg.body` (which is truncated to it). None: too short or an inconsistent length.
pub fn decode_service(msg: &mut RawMsg, with_header: bool) -> Option<Option<CycloneHeader>> {
    let b = &msg.body;
    let word = |o: usize| -> Option<[u8; 8]> { b.get(o..o + 8)?.try_into().ok() };
    let (header, at) = if with_header {
        let (g, s) = (word(0)?, word(8)?);
        let h = if msg.little {
            (u64::from_le_bytes(g), i64::from_le_bytes(s))
        } else {
            (u64::from_be_bytes(g), i64::from_be_bytes(s))
        };
        (Some(h), 16)
    } else {
        (None, 0)
    };
    let len: [u8; 4] = b.get(at..at + 4)?.try_into().ok()?;
    let n = if msg.little {
        u32::from_le_bytes(len)
    } else {
        u32::from_be_bytes(len)
    } as usize;
    let start = at + 4;
    let end = start.checked_add(n)?;
    if end > b.len() {
        return None;
    }
    msg.body.copy_within(start..end, 0);
    msg.body.truncate(n);
    Some(header)
}

/// The RustDDS adapter of the service types: serializes [`Encoded`], deserializes [`RawMsg`].
pub struct RawCdr;

impl SerializerAdapter<Encoded> for RawCdr {
    type Error = CdrError;

    fn output_encoding() -> RepresentationIdentifier {
        RepresentationIdentifier::CDR_LE
    }

    fn to_bytes(value: &Encoded) -> Result<Bytes, CdrError> {
        Ok(value.0.clone())
    }
}

impl DeserializerAdapter<RawMsg> for RawCdr {
    type Error = CdrError;
    type Decoded = RawMsg;

    fn supported_encodings() -> &'static [RepresentationIdentifier] {
        &ENCODINGS
    }

    fn transform_decoded(decoded: RawMsg) -> RawMsg {
        decoded
    }
}

/// The decoder RustDDS calls for every received service sample.
#[derive(Clone, Copy)]
pub struct RawDecoder;

impl<'de> Decode<'de, RawMsg> for RawDecoder {
    type Error = CdrError;

    fn decode_bytes(
        self,
        input: &'de [u8],
        encoding: RepresentationIdentifier,
    ) -> Result<RawMsg, CdrError> {
        let (little, _) = layout(encoding)?;
        Ok(RawMsg {
            body: input.to_vec(),
            little,
        })
    }
}

impl DefaultDecoder<RawMsg> for RawCdr {
    type Decoder = RawDecoder;
    const DECODER: RawDecoder = RawDecoder;
}

#[cfg(test)]
mod tests {
    use super::*;

    const LE: RepresentationIdentifier = RepresentationIdentifier::CDR_LE;

    #[test]
    fn layout_matches_hand_computed_bytes() {
        // 3 data bytes: length, data, pad 7 -> 8, time, id.
        let e = encode(&[0xaa, 0xbb, 0xcc], -2, 0x0102_0304_0506_0708).unwrap();
        #[rustfmt::skip]
        let want: &[u8] = &[
            3, 0, 0, 0,  0xaa, 0xbb, 0xcc,  0,
            0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
            8, 7, 6, 5, 4, 3, 2, 1,
        ];
        assert_eq!(&e.0[..], want);
        // 4 data bytes end exactly on 8: no padding.
        let e = encode(&[1, 2, 3, 4], 5, 6).unwrap();
        assert_eq!(
            &e.0[..],
            &[4, 0, 0, 0, 1, 2, 3, 4, 5, 0, 0, 0, 0, 0, 0, 0, 6, 0, 0, 0, 0, 0, 0, 0]
        );
        // Empty data: length, pad 4, time, id.
        let e = encode(&[], 0, 1).unwrap();
        assert_eq!(e.0.len(), 24);
        assert_eq!(&e.0[0..8], &[0; 8]);
        assert_eq!(e.0[16], 1);
    }

    #[test]
    fn service_samples_roundtrip_and_refuse_truncation() {
        let raw = |e: Encoded| RawMsg {
            body: e.0.to_vec(),
            little: true,
        };
        let e = encode_service(None, &[7, 8, 9]).unwrap();
        assert_eq!(&e.0[..], &[3, 0, 0, 0, 7, 8, 9]);
        let mut m = raw(e);
        assert_eq!(decode_service(&mut m, false), Some(None));
        assert_eq!(m.body, vec![7, 8, 9]);
        // rmw_cyclonedds's header: guid at 0, seq at 8, the length at 16
        let e = encode_service(Some((0x0102, -3)), &[5]).unwrap();
        #[rustfmt::skip]
        assert_eq!(&e.0[..], &[2, 1, 0, 0, 0, 0, 0, 0,  0xfd, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,  1, 0, 0, 0, 5]);
        let mut m = raw(e);
        assert_eq!(decode_service(&mut m, true), Some(Some((0x0102, -3))));
        assert_eq!(m.body, vec![5]);
        // padding after the data is ignored
        let mut m = raw(Encoded(Bytes::from_static(&[1, 0, 0, 0, 5, 0, 0, 0])));
        assert_eq!(decode_service(&mut m, false), Some(None));
        assert_eq!(m.body, vec![5]);
        for bad in [
            &[][..],
            &[1, 0],
            &[5, 0, 0, 0, 1],
            &[0xff, 0xff, 0xff, 0xff],
        ] {
            let mut m = raw(Encoded(Bytes::copy_from_slice(bad)));
            assert_eq!(decode_service(&mut m, false), None, "{bad:?}");
            let mut m = raw(Encoded(Bytes::copy_from_slice(bad)));
            assert_eq!(decode_service(&mut m, true), None, "{bad:?}");
        }
    }

    #[test]
    fn roundtrip_all_small_sizes() {
        for n in 0..40usize {
            let data: Vec<u8> = (0..n as u8).collect();
            let e = encode(&data, n as i64 * 1000, n as u64).unwrap();
            assert_eq!(e.0.len(), encoded_len(n));
            assert_eq!(e.0.len() % 8, 0);
            assert_eq!(
                decode(&e.0, LE).unwrap(),
                BytesMsg {
                    data,
                    time: n as i64 * 1000,
                    id: n as u64
                }
            );
        }
    }

    #[test]
    fn big_endian_and_xcdr2_are_read() {
        #[rustfmt::skip]
        let be: &[u8] = &[0, 0, 0, 1, 0x42, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0, 7];
        assert_eq!(
            decode(be, RepresentationIdentifier::CDR_BE).unwrap(),
            BytesMsg {
                data: vec![0x42],
                time: 9,
                id: 7
            }
        );
        // XCDR2: 8-byte members align to 4, so time follows at offset 8 for 1 data byte.
        #[rustfmt::skip]
        let x2: &[u8] = &[1, 0, 0, 0, 0x42, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0];
        assert_eq!(
            decode(x2, RepresentationIdentifier::XCDR2_LE).unwrap(),
            BytesMsg {
                data: vec![0x42],
                time: 9,
                id: 7
            }
        );
        #[rustfmt::skip]
        let x2: &[u8] = &[4, 0, 0, 0, 1, 2, 3, 4, 9, 0, 0, 0, 0, 0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0];
        assert_eq!(
            decode(x2, RepresentationIdentifier::XCDR2_LE).unwrap().time,
            9
        );
    }

    #[test]
    fn trailing_padding_is_ignored() {
        let mut v = encode(b"abc", 1, 2).unwrap().0.to_vec();
        v.extend_from_slice(&[0, 0, 0]);
        assert_eq!(
            decode(&v, LE).unwrap(),
            BytesMsg {
                data: b"abc".to_vec(),
                time: 1,
                id: 2
            }
        );
    }

    #[test]
    fn truncated_and_malformed_input_is_an_error_not_a_panic() {
        let good = encode(b"hello", 1, 2).unwrap().0.to_vec();
        for cut in 0..good.len() {
            assert!(
                matches!(decode(&good[..cut], LE), Err(CdrError::Truncated { .. })),
                "cut at {cut}"
            );
        }
        // A length pointing beyond the buffer, including ones that would overflow. (Length 6
        // still fits "hello"'s padded layout, so it is a valid, different sample.)
        for n in [13u32, 1000, u32::MAX - 3, u32::MAX] {
            let mut bad = good.clone();
            bad[0..4].copy_from_slice(&n.to_le_bytes());
            assert!(decode(&bad, LE).is_err(), "length {n}");
        }
        assert!(matches!(
            decode(&good, RepresentationIdentifier::PL_CDR_LE),
            Err(CdrError::Encoding(_))
        ));
        assert!(decode(&[], LE).is_err());
        // Every short garbage buffer: never a panic.
        for len in 0..64usize {
            let junk: Vec<u8> = (0..len).map(|i| (i * 37 + len) as u8).collect();
            for enc in ENCODINGS {
                let _ = decode(&junk, enc);
            }
        }
    }

    #[test]
    fn adapters_hand_over_the_same_bytes() {
        let e = encode(b"xyz", 3, 4).unwrap();
        assert_eq!(
            <BytesCdr as SerializerAdapter<Encoded>>::to_bytes(&e).unwrap(),
            e.0
        );
        assert_eq!(
            <BytesCdr as SerializerAdapter<Encoded>>::output_encoding(),
            LE
        );
        let got = BytesDecoder.decode_bytes(&e.0, LE).unwrap();
        assert_eq!(
            got,
            BytesMsg {
                data: b"xyz".to_vec(),
                time: 3,
                id: 4
            }
        );
    }
}
