//! MQTT 3.1.1 packets (OASIS standard, 2014): the subset a publish/subscribe client needs, and
//! the same packets in MQTT 5.0 (OASIS standard, 2019: property lists, reason codes; see
//! [`super::properties`]) for request/response, which needs a PUBLISH's Response Topic and
//! Correlation Data.
//!
//! Encoders append to a `Vec<u8>`; a PUBLISH is encoded as a header only, so the payload can go
//! to the socket straight from the caller's buffer. [`decode`] parses the packets a broker sends
//! to a client without copying: a PUBLISH comes back as offsets into the given buffer. Anything
//! malformed (bad flags, lengths that do not add up, an over-long length field) is a
//! [`Malformed`] error, never a panic, whatever the bytes.

use std::fmt;
use std::ops::Range;

use super::properties::{self, PubProps};

/// Largest remaining length the 4-byte length field can express (§2.2.3).
pub const MAX_REMAINING: usize = 268_435_455;

/// Delivery guarantee of one PUBLISH (§4.3), named as in the standard.
#[allow(clippy::enum_variant_names)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum QoS {
    AtMostOnce = 0,
    AtLeastOnce = 1,
    ExactlyOnce = 2,
}

impl QoS {
    pub fn from_bits(bits: u8) -> Option<QoS> {
        match bits {
            0 => Some(QoS::AtMostOnce),
            1 => Some(QoS::AtLeastOnce),
            2 => Some(QoS::ExactlyOnce),
            _ => None,
        }
    }
}

/// The protocol a connection speaks (chosen by CONNECT; every packet after it follows it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Version {
    /// 3.1.1, protocol level 4.
    V311,
    /// 5.0, protocol level 5.
    V5,
}

/// Packet types (upper nibble of the first byte, §2.2.1).
const CONNECT: u8 = 1;
const CONNACK: u8 = 2;
const PUBLISH: u8 = 3;
const PUBACK: u8 = 4;
const PUBREC: u8 = 5;
const PUBREL: u8 = 6;
const PUBCOMP: u8 = 7;
const SUBSCRIBE: u8 = 8;
const SUBACK: u8 = 9;
const UNSUBACK: u8 = 11;
const PINGRESP: u8 = 13;
const DISCONNECT: u8 = 14;

/// A packet received from a broker. PUBLISH topic and payload are offsets into the buffer given
/// to [`decode`], so nothing is copied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Packet {
    /// `receive_maximum`: MQTT 5's limit on our unacknowledged QoS 1/2 PUBLISHes (None: 3.1.1,
    /// or not given = 65535).
    ConnAck {
        session_present: bool,
        code: u8,
        receive_maximum: Option<u16>,
    },
    Publish(Publish),
    PubAck(u16),
    PubRec(u16),
    PubRel(u16),
    PubComp(u16),
    /// `codes`: one return code per requested topic (0x00–0x02 granted QoS, 0x80 failure).
    SubAck {
        pkid: u16,
        codes: Range<usize>,
    },
    UnsubAck(u16),
    PingResp,
    /// MQTT 5: the broker closes the connection, with this reason code.
    Disconnect(u8),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Publish {
    pub dup: bool,
    pub qos: QoS,
    pub retain: bool,
    /// 0 for QoS 0.
    pub pkid: u16,
    pub topic: Range<usize>,
    pub payload: Range<usize>,
    /// MQTT 5 Response Topic and Correlation Data (values without their length fields).
    pub response_topic: Option<Range<usize>>,
    pub correlation: Option<Range<usize>>,
}

/// Why bytes from the broker could not be parsed (the connection cannot be resynchronised).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Malformed(pub &'static str);

impl fmt::Display for Malformed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "malformed MQTT packet: {}", self.0)
    }
}

/// The fixed header's result: total packet length, if enough bytes are there to know it.
/// `Ok(None)` = need more bytes.
pub fn frame_len(buf: &[u8]) -> Result<Option<usize>, Malformed> {
    let mut remaining = 0usize;
    for i in 0..4 {
        let Some(&b) = buf.get(1 + i) else {
            return Ok(None);
        };
        remaining |= ((b & 0x7f) as usize) << (7 * i);
        if b & 0x80 == 0 {
            return Ok(Some(1 + i + 1 + remaining));
        }
    }
    Err(Malformed("remaining length longer than 4 bytes"))
}

/// Parse one packet of protocol `v` from the front of `buf`. `Ok(None)` = incomplete (read
/// more); `Ok(Some((p, n)))` = packet `p` takes the first `n` bytes.
pub fn decode(buf: &[u8], v: Version) -> Result<Option<(Packet, usize)>, Malformed> {
    let Some(total) = frame_len(buf)? else {
        return Ok(None);
    };
    if buf.len() < total {
        return Ok(None);
    }
    let first = buf[0];
    let (kind, flags) = (first >> 4, first & 0x0f);
    let body_start = total - remaining_of(buf, total);
    let body = body_start..total;
    if v == Version::V5 {
        if let Some(p) = decode_v5(buf, kind, flags, body.clone())? {
            return Ok(Some((p, total)));
        }
    }
    let packet = match kind {
        PUBLISH => Packet::Publish(publish(buf, flags, body, v)?),
        CONNACK => {
            let b = exact(buf, flags, 0, body, 2, "CONNACK")?;
            if b[0] & 0xfe != 0 {
                return Err(Malformed("CONNACK reserved flags set"));
            }
            Packet::ConnAck {
                session_present: b[0] & 1 == 1,
                code: b[1],
                receive_maximum: None,
            }
        }
        PUBACK => Packet::PubAck(pkid_only(buf, flags, 0, body, "PUBACK")?),
        PUBREC => Packet::PubRec(pkid_only(buf, flags, 0, body, "PUBREC")?),
        PUBREL => Packet::PubRel(pkid_only(buf, flags, 2, body, "PUBREL")?),
        PUBCOMP => Packet::PubComp(pkid_only(buf, flags, 0, body, "PUBCOMP")?),
        UNSUBACK => Packet::UnsubAck(pkid_only(buf, flags, 0, body, "UNSUBACK")?),
        SUBACK => {
            if flags != 0 || body.len() < 3 {
                return Err(Malformed(
                    "SUBACK needs a packet id and at least one return code",
                ));
            }
            let pkid = u16::from_be_bytes([buf[body.start], buf[body.start + 1]]);
            Packet::SubAck {
                pkid,
                codes: body.start + 2..body.end,
            }
        }
        PINGRESP => {
            exact(buf, flags, 0, body, 0, "PINGRESP")?;
            Packet::PingResp
        }
        0 | 15 => return Err(Malformed("reserved packet type")),
        _ => return Err(Malformed("a packet type brokers never send to clients")),
    };
    Ok(Some((packet, total)))
}

/// The MQTT 5 forms of the packets whose body differs from 3.1.1 (None: decode as 3.1.1).
fn decode_v5(
    buf: &[u8],
    kind: u8,
    flags: u8,
    body: Range<usize>,
) -> Result<Option<Packet>, Malformed> {
    let b = &buf[body.clone()];
    let packet = match kind {
        CONNACK => {
            if flags != 0 || b.len() < 3 {
                return Err(Malformed(
                    "CONNACK needs flags, a reason code and properties",
                ));
            }
            if b[0] & 0xfe != 0 {
                return Err(Malformed("CONNACK reserved flags set"));
            }
            let (props, end) = properties::list(b, 2)?;
            if end != b.len() {
                return Err(Malformed("bytes after the CONNACK properties"));
            }
            let mut receive_maximum = None;
            properties::walk(&b[props.clone()], |id, v| {
                if id == properties::RECEIVE_MAXIMUM {
                    let v = &b[props.start..][v];
                    receive_maximum = Some(u16::from_be_bytes([v[0], v[1]]));
                }
            })?;
            Packet::ConnAck {
                session_present: b[0] & 1 == 1,
                code: b[1],
                receive_maximum,
            }
        }
        // acknowledgements: packet id, then optionally a reason code and properties
        PUBACK | PUBREC | PUBREL | PUBCOMP if b.len() > 2 => {
            if flags != if kind == PUBREL { 0b0010 } else { 0 } {
                return Err(Malformed("reserved fixed-header flags set"));
            }
            if b.len() > 3 {
                let (_, end) = properties::list(b, 3)?;
                if end != b.len() {
                    return Err(Malformed("bytes after an acknowledgement's properties"));
                }
            }
            let id = u16::from_be_bytes([b[0], b[1]]);
            match kind {
                PUBACK => Packet::PubAck(id),
                PUBREC => Packet::PubRec(id),
                PUBREL => Packet::PubRel(id),
                _ => Packet::PubComp(id),
            }
        }
        SUBACK | UNSUBACK => {
            if flags != 0 || b.len() < 4 {
                return Err(Malformed(
                    "SUBACK/UNSUBACK needs a packet id, properties and a reason code",
                ));
            }
            let pkid = u16::from_be_bytes([b[0], b[1]]);
            let (_, end) = properties::list(b, 2)?;
            if end >= b.len() {
                return Err(Malformed("SUBACK/UNSUBACK without reason codes"));
            }
            if kind == UNSUBACK {
                Packet::UnsubAck(pkid)
            } else {
                Packet::SubAck {
                    pkid,
                    codes: body.start + end..body.end,
                }
            }
        }
        DISCONNECT => {
            if flags != 0 {
                return Err(Malformed("reserved fixed-header flags set"));
            }
            Packet::Disconnect(b.first().copied().unwrap_or(0))
        }
        _ => return Ok(None),
    };
    Ok(Some(packet))
}

/// Length of the body of a packet whose fixed header was accepted by [`frame_len`].
fn remaining_of(buf: &[u8], total: usize) -> usize {
    let len_bytes = buf[1..].iter().take_while(|b| *b & 0x80 != 0).count() + 1;
    total - 1 - len_bytes
}

fn exact<'a>(
    buf: &'a [u8],
    flags: u8,
    want_flags: u8,
    body: Range<usize>,
    len: usize,
    what: &'static str,
) -> Result<&'a [u8], Malformed> {
    if flags != want_flags {
        return Err(Malformed(match what {
            "PUBREL" => "PUBREL flags must be 0010",
            _ => "reserved fixed-header flags set",
        }));
    }
    if body.len() != len {
        return Err(Malformed(match what {
            "CONNACK" => "CONNACK must be 2 bytes long",
            "PINGRESP" => "PINGRESP must be empty",
            _ => "acknowledgement must be 2 bytes long",
        }));
    }
    Ok(&buf[body])
}

fn pkid_only(
    buf: &[u8],
    flags: u8,
    want_flags: u8,
    body: Range<usize>,
    what: &'static str,
) -> Result<u16, Malformed> {
    let b = exact(buf, flags, want_flags, body, 2, what)?;
    Ok(u16::from_be_bytes([b[0], b[1]]))
}

fn publish(buf: &[u8], flags: u8, body: Range<usize>, v: Version) -> Result<Publish, Malformed> {
    let qos = QoS::from_bits((flags >> 1) & 3).ok_or(Malformed("PUBLISH with QoS 3"))?;
    let (dup, retain) = (flags & 8 != 0, flags & 1 != 0);
    if dup && qos == QoS::AtMostOnce {
        return Err(Malformed("PUBLISH QoS 0 with DUP set"));
    }
    let b = &buf[body.clone()];
    if b.len() < 2 {
        return Err(Malformed("PUBLISH too short for its topic length"));
    }
    let topic_len = u16::from_be_bytes([b[0], b[1]]) as usize;
    let mut at = 2 + topic_len;
    if b.len() < at {
        return Err(Malformed("PUBLISH topic longer than the packet"));
    }
    let topic = body.start + 2..body.start + at;
    let mut pkid = 0;
    if qos != QoS::AtMostOnce {
        if b.len() < at + 2 {
            return Err(Malformed("PUBLISH too short for its packet id"));
        }
        pkid = u16::from_be_bytes([b[at], b[at + 1]]);
        if pkid == 0 {
            return Err(Malformed("PUBLISH QoS > 0 with packet id 0"));
        }
        at += 2;
    }
    let (mut response_topic, mut correlation) = (None, None);
    if v == Version::V5 {
        let (props, end) = properties::list(b, at)?;
        let base = body.start + props.start;
        properties::walk(&b[props], |id, r| match id {
            properties::RESPONSE_TOPIC => response_topic = Some(base + r.start..base + r.end),
            properties::CORRELATION_DATA => correlation = Some(base + r.start..base + r.end),
            _ => {}
        })?;
        at = end;
    }
    Ok(Publish {
        dup,
        qos,
        retain,
        pkid,
        topic,
        payload: body.start + at..body.end,
        response_topic,
        correlation,
    })
}

/// Append the fixed header: type/flags byte and the remaining-length varint.
fn fixed_header(out: &mut Vec<u8>, kind: u8, flags: u8, remaining: usize) {
    debug_assert!(remaining <= MAX_REMAINING);
    out.push(kind << 4 | flags);
    let mut x = remaining;
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

fn string(out: &mut Vec<u8>, s: &[u8]) {
    out.extend_from_slice(&(s.len() as u16).to_be_bytes());
    out.extend_from_slice(s);
}

/// The last-will message the broker publishes when the connection breaks without DISCONNECT.
pub struct Will<'a> {
    pub topic: &'a str,
    pub payload: &'a [u8],
    pub qos: QoS,
    pub retain: bool,
}

/// CONNECT (§3.1) with protocol level 4 (3.1.1) or 5 (5.0, empty property lists), no user name
/// or password. Callers keep `client_id` and will topic/payload below 64 KiB.
pub fn connect(
    out: &mut Vec<u8>,
    v: Version,
    client_id: &str,
    keep_alive_s: u16,
    clean_session: bool,
    will: Option<&Will>,
) {
    let mut flags = if clean_session { 0x02 } else { 0 };
    let v5 = v == Version::V5;
    let mut remaining = 10 + 2 + client_id.len() + usize::from(v5);
    if let Some(w) = will {
        flags |= 0x04 | (w.qos as u8) << 3 | if w.retain { 0x20 } else { 0 };
        remaining += 2 + w.topic.len() + 2 + w.payload.len() + usize::from(v5);
    }
    fixed_header(out, CONNECT, 0, remaining);
    string(out, b"MQTT");
    out.push(if v5 { 5 } else { 4 });
    out.push(flags);
    out.extend_from_slice(&keep_alive_s.to_be_bytes());
    if v5 {
        out.push(0); // no properties
    }
    string(out, client_id.as_bytes());
    if let Some(w) = will {
        if v5 {
            out.push(0); // no will properties
        }
        string(out, w.topic.as_bytes());
        string(out, w.payload);
    }
}

/// SUBSCRIBE (§3.8) for `topics` with their maximum QoS (MQTT 5: no properties, the options
/// byte carries only the QoS).
pub fn subscribe(out: &mut Vec<u8>, v: Version, pkid: u16, topics: &[(&str, QoS)]) {
    let v5 = v == Version::V5;
    let remaining =
        2 + usize::from(v5) + topics.iter().map(|(t, _)| 2 + t.len() + 1).sum::<usize>();
    fixed_header(out, SUBSCRIBE, 0b0010, remaining);
    out.extend_from_slice(&pkid.to_be_bytes());
    if v5 {
        out.push(0);
    }
    for (t, q) in topics {
        string(out, t.as_bytes());
        out.push(*q as u8);
    }
}

/// The largest payload one PUBLISH on `topic` at `qos` can carry (`props`: MQTT 5's list).
pub fn max_payload(topic: &str, qos: QoS, props: Option<&PubProps>) -> usize {
    MAX_REMAINING
        - 2
        - topic.len()
        - if qos == QoS::AtMostOnce { 0 } else { 2 }
        - props.map_or(0, PubProps::encoded_len)
}

/// Everything of a PUBLISH (§3.3) but its payload, which follows it on the wire. `props`: None
/// for 3.1.1, the property list (perhaps empty) for MQTT 5. The caller checks
/// `payload_len <= max_payload(topic, qos, props)`.
#[allow(clippy::too_many_arguments)]
pub fn publish_header(
    out: &mut Vec<u8>,
    topic: &str,
    qos: QoS,
    retain: bool,
    dup: bool,
    pkid: u16,
    props: Option<&PubProps>,
    payload_len: usize,
) {
    let id_len = if qos == QoS::AtMostOnce { 0 } else { 2 };
    let flags = (dup as u8) << 3 | (qos as u8) << 1 | retain as u8;
    let props_len = props.map_or(0, PubProps::encoded_len);
    fixed_header(
        out,
        PUBLISH,
        flags,
        2 + topic.len() + id_len + props_len + payload_len,
    );
    string(out, topic.as_bytes());
    if id_len > 0 {
        out.extend_from_slice(&pkid.to_be_bytes());
    }
    if let Some(p) = props {
        p.encode(out);
    }
}

/// The acknowledgements a client sends: PUBACK, PUBREC, PUBREL, PUBCOMP (§3.4–3.7).
#[allow(clippy::enum_variant_names)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ack {
    PubAck,
    PubRec,
    PubRel,
    PubComp,
}

pub fn ack(out: &mut Vec<u8>, kind: Ack, pkid: u16) {
    let (k, flags) = match kind {
        Ack::PubAck => (PUBACK, 0),
        Ack::PubRec => (PUBREC, 0),
        Ack::PubRel => (PUBREL, 0b0010),
        Ack::PubComp => (PUBCOMP, 0),
    };
    fixed_header(out, k, flags, 2);
    out.extend_from_slice(&pkid.to_be_bytes());
}

/// DISCONNECT (§3.14): a clean goodbye; the broker discards the will.
pub fn disconnect(out: &mut Vec<u8>) {
    fixed_header(out, DISCONNECT, 0, 0);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(buf: &[u8]) -> Packet {
        parse_as(buf, Version::V311)
    }

    fn parse_as(buf: &[u8], v: Version) -> Packet {
        let (p, n) = decode(buf, v).unwrap().unwrap();
        assert_eq!(n, buf.len());
        p
    }

    #[test]
    fn remaining_length_boundaries() {
        for (len, bytes) in [
            (0usize, 1usize),
            (127, 1),
            (128, 2),
            (16_383, 2),
            (16_384, 3),
            (2_097_151, 3),
            (2_097_152, 4),
            (MAX_REMAINING, 4),
        ] {
            let mut out = Vec::new();
            fixed_header(&mut out, PUBLISH, 0, len);
            assert_eq!(out.len(), 1 + bytes, "{len}");
            assert_eq!(frame_len(&out).unwrap(), Some(1 + bytes + len));
        }
        assert_eq!(
            frame_len(&[0x30, 0xff, 0xff, 0xff, 0xff, 0x01]),
            Err(Malformed("remaining length longer than 4 bytes"))
        );
        assert_eq!(frame_len(&[0x30, 0xff]), Ok(None));
        assert_eq!(frame_len(&[0x30]), Ok(None));
        assert_eq!(frame_len(&[]), Ok(None));
    }

    #[test]
    fn connect_matches_the_spec_example() {
        let mut out = Vec::new();
        connect(&mut out, Version::V311, "", 0, true, None);
        assert_eq!(
            out,
            [0x10, 12, 0, 4, b'M', b'Q', b'T', b'T', 4, 0x02, 0, 0, 0, 0]
        );
        out.clear();
        connect(
            &mut out,
            Version::V311,
            "c",
            60,
            true,
            Some(&Will {
                topic: "w",
                payload: b"",
                qos: QoS::AtLeastOnce,
                retain: true,
            }),
        );
        assert_eq!(
            out,
            [
                0x10, 18, 0, 4, b'M', b'Q', b'T', b'T', 4, 0x2e, 0, 60, 0, 1, b'c', 0, 1, b'w', 0,
                0
            ]
        );
    }

    #[test]
    fn publish_round_trips_at_every_qos() {
        for qos in [QoS::AtMostOnce, QoS::AtLeastOnce, QoS::ExactlyOnce] {
            for size in [0usize, 1, 100, 200, 70_000] {
                let payload: Vec<u8> = (0..size).map(|i| i as u8).collect();
                let mut out = Vec::new();
                publish_header(&mut out, "mwperf/b/ping", qos, true, false, 7, None, size);
                out.extend_from_slice(&payload);
                let Packet::Publish(p) = parse(&out) else {
                    panic!("not a publish")
                };
                assert_eq!((p.qos, p.retain, p.dup), (qos, true, false));
                assert_eq!(p.pkid, if qos == QoS::AtMostOnce { 0 } else { 7 });
                assert_eq!(&out[p.topic], b"mwperf/b/ping");
                assert_eq!(&out[p.payload], &payload[..]);
            }
        }
    }

    #[test]
    fn acks_and_control_packets() {
        for (kind, want) in [
            (Ack::PubAck, Packet::PubAck(300)),
            (Ack::PubRec, Packet::PubRec(300)),
            (Ack::PubRel, Packet::PubRel(300)),
            (Ack::PubComp, Packet::PubComp(300)),
        ] {
            let mut out = Vec::new();
            ack(&mut out, kind, 300);
            assert_eq!(parse(&out), want);
        }
        assert_eq!(
            parse(&[0x20, 2, 0, 0]),
            Packet::ConnAck {
                session_present: false,
                code: 0,
                receive_maximum: None
            }
        );
        assert_eq!(
            parse(&[0x20, 2, 1, 5]),
            Packet::ConnAck {
                session_present: true,
                code: 5,
                receive_maximum: None
            }
        );
        assert_eq!(
            parse(&[0x90, 4, 0, 9, 1, 0x80]),
            Packet::SubAck {
                pkid: 9,
                codes: 4..6
            }
        );
        assert_eq!(parse(&[0xb0, 2, 0, 9]), Packet::UnsubAck(9));
        assert_eq!(parse(&[0xd0, 0]), Packet::PingResp);
        let mut out = Vec::new();
        subscribe(&mut out, Version::V311, 1, &[("a/b", QoS::AtLeastOnce)]);
        assert_eq!(out, [0x82, 8, 0, 1, 0, 3, b'a', b'/', b'b', 1]);
        out.clear();
        disconnect(&mut out);
        assert_eq!(out, [0xe0, 0]);
    }

    #[test]
    fn truncated_packets_ask_for_more() {
        let mut out = Vec::new();
        publish_header(&mut out, "t", QoS::AtLeastOnce, false, false, 1, None, 5);
        out.extend_from_slice(b"hello");
        for cut in 0..out.len() {
            assert_eq!(decode(&out[..cut], Version::V311), Ok(None), "cut at {cut}");
        }
        // Two packets back to back: the first is taken alone.
        let mut two = out.clone();
        two.extend_from_slice(&[0x40, 2, 0, 1]);
        let (_, n) = decode(&two, Version::V311).unwrap().unwrap();
        assert_eq!(n, out.len());
        assert_eq!(
            decode(&two[n..], Version::V311).unwrap().unwrap().0,
            Packet::PubAck(1)
        );
    }

    #[test]
    fn malformed_packets_are_errors_not_panics() {
        let bad: &[&[u8]] = &[
            &[0x00, 0],                      // reserved type 0
            &[0xf0, 0],                      // reserved type 15
            &[0x10, 0],                      // CONNECT from a broker
            &[0x82, 0],                      // SUBSCRIBE from a broker
            &[0x36, 3, 0, 1, b'a'],          // QoS 3
            &[0x38, 3, 0, 1, b'a'],          // QoS 0 with DUP
            &[0x30, 1, 0],                   // too short for the topic length
            &[0x30, 2, 0, 5],                // topic longer than the packet
            &[0x32, 3, 0, 1, b'a'],          // QoS 1 without a packet id
            &[0x32, 5, 0, 1, b'a', 0, 0],    // QoS 1 with packet id 0
            &[0x40, 3, 0, 1, 0],             // PUBACK of 3 bytes
            &[0x40, 1, 0],                   // PUBACK of 1 byte
            &[0x60, 2, 0, 1],                // PUBREL with flags 0000
            &[0x41, 2, 0, 1],                // PUBACK with flags set
            &[0x20, 3, 0, 0, 0],             // CONNACK of 3 bytes
            &[0x20, 2, 2, 0],                // CONNACK reserved flag
            &[0x90, 2, 0, 1],                // SUBACK without return codes
            &[0xd0, 1, 0],                   // PINGRESP with a body
            &[0x30, 0x80, 0x80, 0x80, 0x80], // five-byte length
        ];
        for b in bad {
            assert!(decode(b, Version::V311).is_err(), "{b:?} accepted");
        }
        // Random bytes: whatever happens, no panic and no length beyond the buffer.
        let mut x = 0x1234_5678_9abc_def0u64;
        for _ in 0..20_000 {
            let mut b = [0u8; 12];
            for v in b.iter_mut() {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                *v = x as u8;
            }
            let len = (x >> 60) as usize % 13;
            for v in [Version::V311, Version::V5] {
                if let Ok(Some((p, n))) = decode(&b[..len], v) {
                    assert!(n <= len);
                    if let Packet::Publish(p) = p {
                        assert!(
                            p.topic.end <= n
                                && p.payload.end <= n
                                && p.payload.start <= p.payload.end
                                && p.response_topic.is_none_or(|r| r.end <= n)
                                && p.correlation.is_none_or(|r| r.end <= n)
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn mqtt5_packets() {
        let mut out = Vec::new();
        connect(&mut out, Version::V5, "c", 0, true, None);
        assert_eq!(
            out,
            [0x10, 14, 0, 4, b'M', b'Q', b'T', b'T', 5, 0x02, 0, 0, 0, 0, 1, b'c']
        );
        out.clear();
        subscribe(&mut out, Version::V5, 1, &[("a/b", QoS::AtLeastOnce)]);
        assert_eq!(out, [0x82, 9, 0, 1, 0, 0, 3, b'a', b'/', b'b', 1]);
        // CONNACK with a Receive Maximum of 20 (as mosquitto sends it)
        assert_eq!(
            parse_as(&[0x20, 6, 0, 0, 3, 0x21, 0, 20], Version::V5),
            Packet::ConnAck {
                session_present: false,
                code: 0,
                receive_maximum: Some(20)
            }
        );
        assert_eq!(
            parse_as(&[0x90, 4, 0, 9, 0, 1], Version::V5),
            Packet::SubAck {
                pkid: 9,
                codes: 5..6
            }
        );
        assert_eq!(parse_as(&[0x40, 2, 0, 9], Version::V5), Packet::PubAck(9));
        assert_eq!(
            parse_as(&[0x40, 3, 0, 9, 0x10], Version::V5),
            Packet::PubAck(9)
        );
        assert_eq!(
            parse_as(&[0x62, 4, 0, 9, 0, 0], Version::V5),
            Packet::PubRel(9)
        );
        assert_eq!(
            parse_as(&[0xe0, 1, 0x82], Version::V5),
            Packet::Disconnect(0x82)
        );
        for bad in [
            &[0x20, 2, 0, 0][..],      // CONNACK without properties
            &[0x20, 4, 0, 0, 5, 0],    // properties overrun
            &[0x40, 5, 0, 9, 0, 0, 7], // bytes after the properties
            &[0x90, 3, 0, 9, 0],       // SUBACK without reason codes
            &[0x60, 3, 0, 9, 0],       // PUBREL flags 0000
        ] {
            assert!(decode(bad, Version::V5).is_err(), "{bad:?}");
        }
        let corr = 42u64.to_be_bytes();
        let props = PubProps {
            response_topic: Some(b"r/1"),
            correlation: Some(&corr),
        };
        for qos in [QoS::AtMostOnce, QoS::AtLeastOnce, QoS::ExactlyOnce] {
            out.clear();
            publish_header(&mut out, "q", qos, false, false, 3, Some(&props), 5);
            out.extend_from_slice(b"hello");
            let Packet::Publish(p) = parse_as(&out, Version::V5) else {
                panic!("not a publish")
            };
            assert_eq!(&out[p.topic], b"q");
            assert_eq!(&out[p.payload], b"hello");
            assert_eq!(&out[p.response_topic.unwrap()], b"r/1");
            assert_eq!(&out[p.correlation.unwrap()], &corr);
            out.clear();
            publish_header(
                &mut out,
                "q",
                qos,
                false,
                false,
                3,
                Some(&PubProps::default()),
                2,
            );
            out.extend_from_slice(b"hi");
            let Packet::Publish(p) = parse_as(&out, Version::V5) else {
                panic!("not a publish")
            };
            assert_eq!(
                (&out[p.payload], p.response_topic, p.correlation),
                (&b"hi"[..], None, None)
            );
        }
        assert_eq!(
            max_payload("q", QoS::AtLeastOnce, Some(&props)),
            MAX_REMAINING - 5 - props.encoded_len()
        );
    }
}
