//! WebSocket frames (RFC 6455) as the Foxglove client reads them from a server, and the Foxglove
//! WebSocket protocol's messages in them (binary message data, JSON control messages).
//!
//! Invariants: a parsed frame lies within the input; a frame header written for the parsed
//! frame is the input's header when the input used the shortest length form, and parses back to
//! the same frame; messages assembled from frames are never longer than the frames' payloads;
//! masking twice is the identity; message data's payload is the message's tail.
use mwperf_transports::fuzzing::foxglove::{
    apply_mask, assemble, frame_header, message_data, parse_frame, Control, BINARY,
};

fn main() {
    afl::fuzz!(|data: &[u8]| {
        let mut at = 0;
        let (mut msg, mut msg_op) = (Vec::new(), 0u8);
        let mut payload_bytes = 0usize;
        while let Ok(Some(f)) = parse_frame(&data[at..], msg.len()) {
            let b = &data[at..];
            assert!(f.body.start >= 2 && f.body.start <= f.body.end && f.body.end <= b.len());
            // write the header again: shortest form = the same bytes; any form parses the same
            let mut head = Vec::new();
            let len = f.body.len();
            frame_header(&mut head, f.fin, f.op, len, f.mask);
            let shortest = match b[1] & 0x7f {
                126 => len >= 126,
                127 => len > u16::MAX as usize,
                _ => true,
            };
            if b[0] & 0x70 == 0 && shortest {
                assert_eq!(head[..], b[..f.body.start]);
            }
            head.extend_from_slice(&b[f.body.clone()]);
            assert_eq!(
                parse_frame(&head, 0),
                Ok(Some(mwperf_transports::fuzzing::foxglove::Frame {
                    body: head.len() - len..head.len(),
                    ..f.clone()
                }))
            );
            let payload = &b[f.body.clone()];
            if let Some(m) = f.mask {
                let mut twice = payload.to_vec();
                apply_mask(&mut twice, m);
                apply_mask(&mut twice, m);
                assert_eq!(twice, payload);
            }
            at += f.body.end;
            if f.op >= 0x8 {
                continue; // control frames: answered or ending, never assembled
            }
            if f.op != 0 {
                payload_bytes = 0;
            }
            payload_bytes += payload.len();
            if let Some(op) = assemble(&mut msg, &mut msg_op, &f, payload) {
                assert_eq!(msg.len(), payload_bytes);
                message(op, &msg);
                msg.clear();
                payload_bytes = 0;
            }
        }
        // the input as one whole message, too
        message(BINARY, data);
        message(1, data);
    });
}

fn message(op: u8, data: &[u8]) {
    if op == BINARY {
        if let Some((_, payload)) = message_data(data) {
            assert_eq!(payload.len() + 13, data.len());
            assert!(data.ends_with(payload));
        }
    } else if let Ok(v) = serde_json::from_slice::<serde_json::Value>(data) {
        match Control::parse(&v) {
            Control::Advertise(channels) => assert!(channels.len() <= data.len()),
            Control::Unadvertise(ids) => assert!(ids.len() <= data.len()),
            _ => {}
        }
    }
}
