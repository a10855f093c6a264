//! The CDR of `std_msgs/msg/UInt8MultiArray` (what rmw_fastrtps_cpp and rclpy serialize), written
//! and read here so mwperf's bytes go through rcl's serialized publish/take as they are:
//!
//! ```text
//! encapsulation  00 01 00 00            CDR, little-endian (XCDR1), options 0
//! layout.dim     u32 count, then count × { string label (u32 length incl. NUL, bytes),
//!                                          u32 size, u32 stride }   (4-aligned)
//! layout.data_offset  u32
//! data           u32 length, then the bytes
//! ```
//!
//! Offsets align from the end of the encapsulation header. What we write has no dimensions;
//! what we read may come from any ROS 2 publisher of the type (rclpy fills `dim`), big- or
//! little-endian, XCDR1 or XCDR2 (a final type: the same layout here), and is bound-checked:
//! foreign or malformed bytes give an error, never a panic.

/// Bytes before the data in what [`encode`] writes.
pub const PREFIX_LEN: usize = 16;

/// Encapsulation identifiers read (RTPS 9.4.2.12 / XTypes 7.6.3.1.2).
const CDR_BE: u16 = 0x0000;
const CDR_LE: u16 = 0x0001;
const PLAIN_CDR2_BE: u16 = 0x0006;
const PLAIN_CDR2_LE: u16 = 0x0007;

/// Write the message carrying `data` into `out` (replacing what it held).
pub fn encode(out: &mut Vec<u8>, data: &[u8]) -> Result<(), String> {
    let len = u32::try_from(data.len()).map_err(|_| {
        format!(
            "{} bytes do not fit a ROS 2 uint8[] (at most {})",
            data.len(),
            u32::MAX
        )
    })?;
    out.clear();
    out.reserve(PREFIX_LEN + data.len());
    out.extend_from_slice(&[0x00, 0x01, 0x00, 0x00]); // CDR_LE
    out.extend_from_slice(&0u32.to_le_bytes()); // layout.dim: none
    out.extend_from_slice(&0u32.to_le_bytes()); // layout.data_offset
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(data);
    Ok(())
}

/// The `data` bytes of a serialized UInt8MultiArray.
pub fn decode(cdr: &[u8]) -> Result<&[u8], String> {
    if cdr.len() < 4 {
        return Err(format!(
            "{} bytes: shorter than the encapsulation header",
            cdr.len()
        ));
    }
    let id = u16::from_be_bytes([cdr[0], cdr[1]]);
    let little = match id {
        CDR_LE | PLAIN_CDR2_LE => true,
        CDR_BE | PLAIN_CDR2_BE => false,
        other => return Err(format!("encapsulation {other:#06x} is not plain CDR")),
    };
    let mut r = Reader {
        body: &cdr[4..],
        pos: 0,
        little,
    };
    let dims = r.u32("layout.dim length")?;
    for i in 0..dims {
        // every dimension takes at least 12 bytes, so a huge count ends at the buffer's end
        let label = r.u32("a dimension's label length")? as usize;
        r.bytes(label, &format!("layout.dim[{i}].label"))?;
        r.u32("a dimension's size")?;
        r.u32("a dimension's stride")?;
    }
    r.u32("layout.data_offset")?;
    let len = r.u32("data length")? as usize;
    r.bytes(len, "data")
}

struct Reader<'a> {
    body: &'a [u8],
    pos: usize,
    little: bool,
}

impl<'a> Reader<'a> {
    fn u32(&mut self, what: &str) -> Result<u32, String> {
        self.pos = self.pos.div_ceil(4) * 4;
        let b = self.bytes(4, what)?;
        let b = [b[0], b[1], b[2], b[3]];
        Ok(if self.little {
            u32::from_le_bytes(b)
        } else {
            u32::from_be_bytes(b)
        })
    }

    fn bytes(&mut self, n: usize, what: &str) -> Result<&'a [u8], String> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.body.len())
            .ok_or_else(|| {
                format!(
                    "{what}: {n} bytes at offset {} run past the message's {} bytes",
                    self.pos + 4,
                    self.body.len() + 4
                )
            })?;
        let b = &self.body[self.pos..end];
        self.pos = end;
        Ok(b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_we_write_reads_back() {
        let mut out = Vec::new();
        encode(&mut out, b"hello").unwrap();
        assert_eq!(out.len(), PREFIX_LEN + 5);
        assert_eq!(&out[..4], &[0, 1, 0, 0]);
        assert_eq!(decode(&out).unwrap(), b"hello");
        encode(&mut out, b"").unwrap();
        assert_eq!(decode(&out).unwrap(), b"");
    }

    /// As rclpy serializes `UInt8MultiArray(layout=MultiArrayLayout(dim=[MultiArrayDimension(
    /// label="x", size=3, stride=3)]), data=[1, 2, 3])`, big-endian.
    #[test]
    fn dimensions_and_big_endian_are_read() {
        let mut m = vec![0, 0, 0, 0];
        m.extend_from_slice(&1u32.to_be_bytes());
        m.extend_from_slice(&2u32.to_be_bytes());
        m.extend_from_slice(b"x\0\0\0"); // label + padding to 4
        m.extend_from_slice(&3u32.to_be_bytes());
        m.extend_from_slice(&3u32.to_be_bytes());
        m.extend_from_slice(&0u32.to_be_bytes());
        m.extend_from_slice(&3u32.to_be_bytes());
        m.extend_from_slice(&[1, 2, 3]);
        assert_eq!(decode(&m).unwrap(), &[1, 2, 3]);
    }

    #[test]
    fn malformed_bytes_are_errors() {
        let mut good = Vec::new();
        encode(&mut good, b"abc").unwrap();
        for cut in 0..good.len() {
            assert!(decode(&good[..cut]).is_err(), "cut at {cut}");
        }
        let mut huge = good.clone();
        huge[4..8].copy_from_slice(&u32::MAX.to_le_bytes()); // dims
        assert!(decode(&huge).is_err());
        let mut long = good.clone();
        long[12..16].copy_from_slice(&u32::MAX.to_le_bytes()); // data length
        assert!(decode(&long).is_err());
        let mut foreign = good;
        foreign[1] = 0x03; // PL_CDR_LE
        assert!(decode(&foreign).unwrap_err().contains("0x0003"));
    }
}
