//! `ros_discovery_info` samples (rmw_dds_common/msg/ParticipantEntitiesInfo) read from their CDR:
//! which ROS 2 nodes a participant hosts and the GIDs of each node's readers and writers.
//!
//! ```text
//! ParticipantEntitiesInfo { Gid gid; sequence<NodeEntitiesInfo> node_entities_info_seq; }
//! NodeEntitiesInfo { string node_namespace; string node_name;
//!                    sequence<Gid> reader_gid_seq; sequence<Gid> writer_gid_seq; }
//! Gid { uint8 data[24] }   (Humble; Iron and later: uint8 data[16])
//! ```
//! Both Gid sizes are tried; the one that reads the sample exactly (up to CDR's final padding)
//! wins. A GID's first 16 bytes are the entity's DDS GUID.

use crate::ros2probe::{Guid, Node};

/// A parsed sample: the participant's GUID and its nodes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParticipantNodes {
    pub participant: Guid,
    pub nodes: Vec<Node>,
}

/// Parse a serialized sample (with its 4-byte encapsulation header); None when it is not one.
pub fn parse(bytes: &[u8]) -> Option<ParticipantNodes> {
    if bytes.len() < 4 || bytes[0] != 0 || bytes[1] > 1 {
        return None;
    }
    let little = bytes[1] == 1;
    [24usize, 16]
        .iter()
        .find_map(|&gid| Cursor::new(&bytes[4..], little).participant(gid))
}

/// Reads XCDR1: primitives aligned to their size from the start of the payload.
struct Cursor<'a> {
    data: &'a [u8],
    at: usize,
    little: bool,
}

/// Longest string or sequence believed (a sample is a few kB).
const MAX_LEN: u32 = 1 << 20;

impl<'a> Cursor<'a> {
    fn new(data: &'a [u8], little: bool) -> Self {
        Cursor {
            data,
            at: 0,
            little,
        }
    }

    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.at.checked_add(n)?;
        let out = self.data.get(self.at..end)?;
        self.at = end;
        Some(out)
    }

    fn u32(&mut self) -> Option<u32> {
        self.at = self.at.checked_add(3)? & !3;
        let b: [u8; 4] = self.take(4)?.try_into().ok()?;
        let v = if self.little {
            u32::from_le_bytes(b)
        } else {
            u32::from_be_bytes(b)
        };
        (v <= MAX_LEN).then_some(v)
    }

    fn string(&mut self) -> Option<String> {
        let n = self.u32()? as usize;
        let raw = self.take(n)?;
        let (last, text) = raw.split_last()?;
        (*last == 0).then(|| String::from_utf8_lossy(text).into_owned())
    }

    fn gid(&mut self, size: usize) -> Option<Guid> {
        self.take(size)?[..16].try_into().ok()
    }

    fn gids(&mut self, size: usize) -> Option<Vec<Guid>> {
        let n = self.u32()?;
        (0..n).map(|_| self.gid(size)).collect()
    }

    fn participant(mut self, gid: usize) -> Option<ParticipantNodes> {
        let participant = self.gid(gid)?;
        let n = self.u32()?;
        let mut nodes = Vec::new();
        for _ in 0..n {
            let namespace = self.string()?;
            let name = self.string()?;
            let readers = self.gids(gid)?;
            let writers = self.gids(gid)?;
            nodes.push(Node {
                namespace,
                name,
                readers,
                writers,
            });
        }
        // the whole sample read (a serializer may pad the end to 4 bytes)
        (self.data.len() - self.at < 4).then_some(ParticipantNodes { participant, nodes })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sample as rmw_dds_common's serializer writes it (little-endian).
    fn sample(gid: usize, nodes: &[(&str, &str, usize, usize)]) -> Vec<u8> {
        let mut b = vec![0u8, 1, 0, 0];
        let align = |b: &mut Vec<u8>| {
            while !(b.len() - 4).is_multiple_of(4) {
                b.push(0);
            }
        };
        let gid_bytes = |k: u8| {
            let mut g = vec![k; 16];
            g.resize(gid, 0);
            g
        };
        b.extend(gid_bytes(0xaa));
        align(&mut b);
        b.extend((nodes.len() as u32).to_le_bytes());
        for (i, (ns, name, r, w)) in nodes.iter().enumerate() {
            for s in [ns, name] {
                align(&mut b);
                b.extend((s.len() as u32 + 1).to_le_bytes());
                b.extend(s.as_bytes());
                b.push(0);
            }
            for (count, base) in [(*r, 0x10u8), (*w, 0x20)] {
                align(&mut b);
                b.extend((count as u32).to_le_bytes());
                for k in 0..count {
                    b.extend(gid_bytes(base + (i * 8 + k) as u8));
                }
            }
        }
        b
    }

    #[test]
    fn reads_humble_and_jazzy_gids() {
        for gid in [24, 16] {
            let bytes = sample(
                gid,
                &[("/", "talker", 1, 2), ("/robot", "camera_node", 0, 1)],
            );
            let p = parse(&bytes).expect("parses");
            assert_eq!(p.participant, [0xaa; 16], "gid {gid}");
            assert_eq!(p.nodes.len(), 2);
            assert_eq!(p.nodes[0].name, "talker");
            assert_eq!(p.nodes[0].readers, vec![[0x10; 16]]);
            assert_eq!(p.nodes[0].writers, vec![[0x20; 16], [0x21; 16]]);
            assert_eq!(p.nodes[1].namespace, "/robot");
            assert_eq!(p.nodes[1].writers, vec![[0x28; 16]]);
        }
    }

    #[test]
    fn no_nodes_and_garbage() {
        let p = parse(&sample(24, &[])).expect("parses");
        assert!(p.nodes.is_empty());
        assert_eq!(parse(&[0, 1, 0, 0, 1, 2, 3]), None);
        assert_eq!(parse(&[]), None);
        let mut cut = sample(24, &[("/", "talker", 1, 1)]);
        cut.truncate(cut.len() - 5);
        assert_eq!(parse(&cut), None);
    }
}
