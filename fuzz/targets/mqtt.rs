//! The MQTT codec (3.1.1 and 5) and MQTT 5 property lists, on bytes from a broker.
//!
//! Input: byte 0 picks the protocol version, the rest is the stream. Invariants: a decoded packet
//! lies within the bytes it claims (`n` <= input, every range inside it, frame_len agrees), a
//! PUBLISH re-encoded from what was decoded decodes to the same fields and payload, and property
//! values lie within their list.
use mwperf_transports::fuzzing::mqtt::properties::{self, PubProps};
use mwperf_transports::fuzzing::mqtt::{self, Packet, QoS, Version};

fn main() {
    afl::fuzz!(|data: &[u8]| {
        let Some((&first, stream)) = data.split_first() else {
            return;
        };
        let v = if first & 1 == 0 {
            Version::V311
        } else {
            Version::V5
        };
        // walk the stream packet by packet, as a session's reader does
        let mut rest = stream;
        while let Ok(Some((packet, n))) = mqtt::decode(rest, v) {
            assert!(n >= 2 && n <= rest.len());
            assert_eq!(mqtt::frame_len(rest), Ok(Some(n)));
            check(&packet, &rest[..n], v);
            rest = &rest[n..];
        }
        // a property list on its own
        let _ = properties::list(stream, 0).map(|(r, end)| {
            assert!(r.start <= r.end && r.end == end && end <= stream.len());
            let list = &stream[r];
            let _ = properties::walk(list, |_, value| assert!(value.end <= list.len()));
        });
        if let Ok(Some((x, len))) = properties::varint(stream) {
            let mut out = Vec::new();
            properties::put_varint(&mut out, x);
            assert!(out.len() <= len && out.len() == properties::varint_len(x));
            assert_eq!(properties::varint(&out), Ok(Some((x, out.len()))));
        }
    });
}

fn check(packet: &Packet, buf: &[u8], v: Version) {
    let within = |r: &std::ops::Range<usize>| assert!(r.start <= r.end && r.end <= buf.len());
    match packet {
        Packet::SubAck { codes, .. } => within(codes),
        Packet::Publish(p) => {
            within(&p.topic);
            within(&p.payload);
            p.response_topic.iter().for_each(within);
            p.correlation.iter().for_each(within);
            assert_eq!(p.payload.end, buf.len());
            assert!(p.qos == QoS::AtMostOnce || p.pkid != 0);
            // encode what was decoded; it must decode to the same
            let Ok(topic) = std::str::from_utf8(&buf[p.topic.clone()]) else {
                return;
            };
            let props = (v == Version::V5).then(|| PubProps {
                response_topic: p.response_topic.clone().map(|r| &buf[r]),
                correlation: p.correlation.clone().map(|r| &buf[r]),
            });
            let payload = &buf[p.payload.clone()];
            let mut out = Vec::new();
            mqtt::publish_header(
                &mut out,
                topic,
                p.qos,
                p.retain,
                p.dup,
                p.pkid,
                props.as_ref(),
                payload.len(),
            );
            out.extend_from_slice(payload);
            let Ok(Some((Packet::Publish(q), n))) = mqtt::decode(&out, v) else {
                panic!(
                    "a re-encoded PUBLISH does not decode: {:?}",
                    mqtt::decode(&out, v)
                );
            };
            assert_eq!(n, out.len());
            assert_eq!(
                (q.qos, q.retain, q.dup, q.pkid),
                (p.qos, p.retain, p.dup, p.pkid)
            );
            assert_eq!(&out[q.topic], topic.as_bytes());
            assert_eq!(&out[q.payload], payload);
            assert_eq!(
                q.response_topic.map(|r| &out[r]),
                props.and_then(|p| p.response_topic)
            );
            assert_eq!(
                q.correlation.map(|r| &out[r]),
                props.and_then(|p| p.correlation)
            );
        }
        _ => {}
    }
}
