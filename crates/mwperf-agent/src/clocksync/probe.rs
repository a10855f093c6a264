//! The probe datagram (40 bytes, little endian):
//! `magic "MWCK" | version 1 | kind (1 request, 2 answer) | 2 reserved | run_id u32 | seq u32 |
//! t1 u64 | t2 u64 | t3 u64`. A request carries t1 (client clock); the answer echoes it and adds
//! t2 (server receive) and t3 (server send), on the server's clock. Run id 0 in a request means
//! "any run" (a sub not told its run id); an answer always carries the server's run id.

pub const LEN: usize = 40;
const MAGIC: &[u8; 4] = b"MWCK";
const VERSION: u8 = 1;
pub const REQUEST: u8 = 1;
pub const ANSWER: u8 = 2;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Datagram {
    pub kind: u8,
    pub run_id: u32,
    pub seq: u32,
    pub t1: u64,
    pub t2: u64,
    pub t3: u64,
}

/// Why a datagram is not a probe: another program's (foreign) or a broken one (malformed).
#[derive(Debug, PartialEq, Eq)]
pub enum Bad {
    Foreign,
    Malformed,
}

impl Datagram {
    pub fn encode(&self) -> [u8; LEN] {
        let mut b = [0u8; LEN];
        b[0..4].copy_from_slice(MAGIC);
        b[4] = VERSION;
        b[5] = self.kind;
        b[8..12].copy_from_slice(&self.run_id.to_le_bytes());
        b[12..16].copy_from_slice(&self.seq.to_le_bytes());
        b[16..24].copy_from_slice(&self.t1.to_le_bytes());
        b[24..32].copy_from_slice(&self.t2.to_le_bytes());
        b[32..40].copy_from_slice(&self.t3.to_le_bytes());
        b
    }

    /// Any byte string in, never a panic: not ours → Foreign, ours but wrong → Malformed.
    pub fn decode(b: &[u8]) -> Result<Datagram, Bad> {
        if b.len() < 4 || &b[0..4] != MAGIC {
            return Err(Bad::Foreign);
        }
        if b.len() != LEN || b[4] != VERSION || !(b[5] == REQUEST || b[5] == ANSWER) {
            return Err(Bad::Malformed);
        }
        let u32_at = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().expect("4 bytes"));
        let u64_at = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"));
        Ok(Datagram {
            kind: b[5],
            run_id: u32_at(8),
            seq: u32_at(12),
            t1: u64_at(16),
            t2: u64_at(24),
            t3: u64_at(32),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_rejects() {
        let d = Datagram {
            kind: ANSWER,
            run_id: 7,
            seq: 9,
            t1: 1,
            t2: u64::MAX,
            t3: 3,
        };
        assert_eq!(Datagram::decode(&d.encode()), Ok(d));
        assert_eq!(Datagram::decode(b"hello world"), Err(Bad::Foreign));
        assert_eq!(Datagram::decode(b""), Err(Bad::Foreign));
        let mut short = d.encode().to_vec();
        short.pop();
        assert_eq!(Datagram::decode(&short), Err(Bad::Malformed));
        let mut kind = d.encode();
        kind[5] = 9;
        assert_eq!(Datagram::decode(&kind), Err(Bad::Malformed));
    }
}
