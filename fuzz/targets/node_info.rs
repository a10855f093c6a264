//! The ROS 2 probe's `ros_discovery_info` parser (rmw_dds_common ParticipantEntitiesInfo in
//! XCDR1), on samples from anyone in the DDS domain.
//!
//! Invariants: a parsed sample, serialized again (same byte order, the GID size that parsed),
//! parses to the same participant and nodes.
use mwperf_transports::fuzzing::node_info::{parse, ParticipantNodes};

/// XCDR1 writer: primitives aligned to their size from the start of the payload.
struct Out {
    b: Vec<u8>,
    little: bool,
}

impl Out {
    fn u32(&mut self, v: u32) {
        while self.b.len() % 4 != 0 {
            self.b.push(0);
        }
        self.b.extend_from_slice(&if self.little {
            v.to_le_bytes()
        } else {
            v.to_be_bytes()
        });
    }
    fn string(&mut self, s: &str) {
        self.u32(s.len() as u32 + 1);
        self.b.extend_from_slice(s.as_bytes());
        self.b.push(0);
    }
    fn gid(&mut self, g: &[u8; 16], size: usize) {
        self.b.extend_from_slice(g);
        self.b.resize(self.b.len() + size - 16, 0);
    }
}

fn serialize(p: &ParticipantNodes, little: bool, size: usize) -> Vec<u8> {
    let mut o = Out {
        b: Vec::new(),
        little,
    };
    o.gid(&p.participant, size);
    o.u32(p.nodes.len() as u32);
    for n in &p.nodes {
        o.string(&n.namespace);
        o.string(&n.name);
        for gids in [&n.readers, &n.writers] {
            o.u32(gids.len() as u32);
            for g in gids {
                o.gid(g, size);
            }
        }
    }
    [&[0u8, little as u8, 0, 0][..], &o.b].concat()
}

fn main() {
    afl::fuzz!(|data: &[u8]| {
        let Some(p) = parse(data) else {
            return;
        };
        let little = data[1] == 1;
        // strings came through a lossy UTF-8 conversion: compare with what they became
        let ok = [24, 16]
            .iter()
            .any(|&size| parse(&serialize(&p, little, size)).as_ref() == Some(&p));
        assert!(ok, "{p:?} does not survive serialization");
    });
}
