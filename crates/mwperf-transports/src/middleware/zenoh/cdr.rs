//! `--opt cdr=true`: each message travels as the CDR sample of the DDS transports' type
//! (`mwperf_msgs::msg::dds_::Bytes_`: `sequence<octet> data; int64 time; uint64 id`, XCDR1
//! little endian with its 4-byte encapsulation header), as zenoh-plugin-ros2dds forwards a ROS 2
//! message between DDS and zenoh. So a zenoh agent can be the far end of a DDS agent through
//! that bridge (`--bridge zenoh-ros2dds --transport zenoh`).

/// CDR little endian, XCDR1 (PLAIN_CDR): what Cyclone DDS writes for a final type.
const ENCAPSULATION: [u8; 4] = [0x00, 0x01, 0x00, 0x00];

/// Append the CDR sample carrying `msg` (the header's seq and sent time as `id` and `time`, as
/// the DDS transports write them; zero when `msg` has no mwperf header) to `out`.
pub fn wrap(msg: &[u8], out: &mut Vec<u8>) {
    out.clear();
    out.extend_from_slice(&ENCAPSULATION);
    out.extend_from_slice(&(msg.len() as u32).to_le_bytes());
    out.extend_from_slice(msg);
    // int64 aligned to 8 from the start of the CDR body (after the encapsulation header)
    let body = out.len() - ENCAPSULATION.len();
    out.resize(out.len() + (8 - body % 8) % 8, 0);
    let (time, id) = mwperf_core::wire::Header::decode(msg)
        .map(|h| (h.sent_ns as i64, h.seq))
        .unwrap_or((0, 0));
    out.extend_from_slice(&time.to_le_bytes());
    out.extend_from_slice(&id.to_le_bytes());
}

/// Replace the CDR sample in `buf` by the message it carries; false (buf untouched) when it is
/// not such a sample (the caller then classifies the bytes as foreign).
pub fn unwrap(buf: &mut Vec<u8>) -> bool {
    if buf.len() < 8 || buf[..2] != ENCAPSULATION[..2] || buf[1] != 0x01 {
        return false; // not little-endian PLAIN_CDR
    }
    let len = u32::from_le_bytes(buf[4..8].try_into().expect("4 bytes")) as usize;
    if buf.len() < 8 + len {
        return false;
    }
    buf.copy_within(8..8 + len, 0);
    buf.truncate(len);
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wrapped_message_matches_cyclones_layout_and_unwraps() {
        // 3 bytes: encapsulation, length 3, data, pad to 8 from the body start, time, id
        let mut out = Vec::new();
        wrap(b"abc", &mut out);
        assert_eq!(out.len(), 4 + 4 + 3 + 1 + 8 + 8);
        assert_eq!(&out[..11], &[0, 1, 0, 0, 3, 0, 0, 0, b'a', b'b', b'c']);
        let mut back = out.clone();
        assert!(unwrap(&mut back));
        assert_eq!(back, b"abc");
        for n in [0usize, 4, 8, 1080] {
            let msg: Vec<u8> = (0..n).map(|i| i as u8).collect();
            wrap(&msg, &mut out);
            assert_eq!((out.len() - 4) % 8, 0, "{n}");
            assert!(unwrap(&mut out));
            assert_eq!(out, msg);
        }
    }

    #[test]
    fn what_is_not_a_sample_is_left_alone() {
        for junk in [
            &b""[..],
            b"MWPF",
            &[0, 1, 0, 0, 200, 0, 0, 0, 1],
            &[0, 0, 0, 0, 0, 0, 0, 0],
        ] {
            let mut b = junk.to_vec();
            assert!(!unwrap(&mut b));
            assert_eq!(b, junk);
        }
    }
}
