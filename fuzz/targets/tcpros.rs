//! TCPROS (ROS 1): connection headers and the frames of a publisher's stream.
//!
//! Input: byte 0 chooses what the rest is. Invariants: a decoded header re-encodes and decodes
//! to the same fields; a cut frame lies within the input and its message within the frame; a
//! framed message cuts back to itself.
use mwperf_transports::fuzzing::ros1::tcpros::{self, Cut};

fn main() {
    afl::fuzz!(|data: &[u8]| {
        let Some((&first, rest)) = data.split_first() else {
            return;
        };
        match first % 3 {
            0 => {
                if let Ok(fields) = tcpros::decode_header(rest) {
                    let pairs: Vec<(&str, &str)> = fields
                        .iter()
                        .map(|(k, v)| (k.as_str(), v.as_str()))
                        .collect();
                    let bytes = tcpros::encode_header(&pairs);
                    let total = u32::from_le_bytes(bytes[..4].try_into().unwrap()) as usize;
                    assert_eq!(total, bytes.len() - 4);
                    assert_eq!(tcpros::decode_header(&bytes[4..]).as_ref(), Ok(&fields));
                    let mut reader = &bytes[..];
                    assert_eq!(tcpros::read_header(&mut reader).as_ref(), Ok(&fields));
                    for (k, _) in &fields {
                        assert!(tcpros::field(&fields, k).is_some());
                    }
                }
                let mut reader = rest;
                let _ = tcpros::read_header(&mut reader);
            }
            1 => {
                // a stream of frames, as `Inbound::take` cuts it
                let mut at = rest;
                loop {
                    match tcpros::cut_frame(at) {
                        Cut::Need | Cut::Garbage => break,
                        Cut::Frame { message, consumed } => {
                            assert!(consumed >= 4 && consumed <= at.len());
                            let inside = at[4..consumed].as_ptr_range();
                            let m = message.as_ptr_range();
                            assert!(inside.start <= m.start && m.end <= inside.end);
                            at = &at[consumed..];
                        }
                    }
                }
            }
            _ => {
                if let Some(msg) = tcpros::decode_body(rest) {
                    assert_eq!(msg.len() + 20, rest.len());
                }
                let (prefix, suffix) = tcpros::frame_parts(rest);
                let frame = [&prefix[..], rest, &suffix[..]].concat();
                assert_eq!(
                    tcpros::cut_frame(&frame),
                    Cut::Frame {
                        message: rest,
                        consumed: frame.len()
                    }
                );
            }
        }
    });
}
