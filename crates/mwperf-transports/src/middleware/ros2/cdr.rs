//! Plain CDR as ROS 2's RMWs serialize a message (XCDR1, or XCDR2 for these final types: the
//! same layout, nothing here is 8-byte aligned), written and read here so mwperf's bytes go
//! through rcl's serialized publish/take as they are: a 4-byte encapsulation header
//! (`00 01 00 00`, little-endian, when we write), then the fields, each aligned to its size from
//! the end of that header. The message types (which fields, where the bytes go) are
//! [`super::message`]'s. Reading is bound-checked: foreign or malformed bytes give an error,
//! never a panic.

/// Encapsulation identifiers read (RTPS 9.4.2.12 / XTypes 7.6.3.1.2).
const CDR_BE: u16 = 0x0000;
const CDR_LE: u16 = 0x0001;
const PLAIN_CDR2_BE: u16 = 0x0006;
const PLAIN_CDR2_LE: u16 = 0x0007;

/// Writes a little-endian CDR message into a buffer it clears first.
pub struct Writer<'a> {
    out: &'a mut Vec<u8>,
}

impl<'a> Writer<'a> {
    /// Start a message in `out` (replacing what it held) with `body` bytes expected.
    pub fn new(out: &'a mut Vec<u8>, body: usize) -> Writer<'a> {
        out.clear();
        out.reserve(4 + body);
        out.extend_from_slice(&[0x00, 0x01, 0x00, 0x00]); // CDR_LE, options 0
        Writer { out }
    }

    fn align(&mut self, n: usize) {
        while !(self.out.len() - 4).is_multiple_of(n) {
            self.out.push(0);
        }
    }

    pub fn u8(&mut self, v: u8) {
        self.out.push(v);
    }

    pub fn u32(&mut self, v: u32) {
        self.align(4);
        self.out.extend_from_slice(&v.to_le_bytes());
    }

    /// A string: its length with the NUL, its bytes, the NUL.
    pub fn string(&mut self, s: &str) {
        self.u32(s.len() as u32 + 1);
        self.out.extend_from_slice(s.as_bytes());
        self.out.push(0);
    }

    /// A `uint8[]` sequence: its length, then the bytes.
    pub fn bytes(&mut self, data: &[u8]) -> Result<(), String> {
        let len = u32::try_from(data.len()).map_err(|_| {
            format!(
                "{} bytes do not fit a ROS 2 uint8[] (at most {})",
                data.len(),
                u32::MAX
            )
        })?;
        self.u32(len);
        self.out.extend_from_slice(data);
        Ok(())
    }
}

/// Reads a CDR message's fields in order, every access bound-checked.
pub struct Reader<'a> {
    body: &'a [u8],
    pos: usize,
    little: bool,
}

impl<'a> Reader<'a> {
    /// A reader of `cdr` after its encapsulation header (plain CDR, XCDR1 or XCDR2).
    pub fn new(cdr: &'a [u8]) -> Result<Reader<'a>, String> {
        if cdr.len() < 4 {
            return Err(format!(
                "{} bytes: shorter than the encapsulation header",
                cdr.len()
            ));
        }
        let little = match u16::from_be_bytes([cdr[0], cdr[1]]) {
            CDR_LE | PLAIN_CDR2_LE => true,
            CDR_BE | PLAIN_CDR2_BE => false,
            other => return Err(format!("encapsulation {other:#06x} is not plain CDR")),
        };
        Ok(Reader {
            body: &cdr[4..],
            pos: 0,
            little,
        })
    }

    pub fn u8(&mut self, what: &str) -> Result<u8, String> {
        Ok(self.take(1, what)?[0])
    }

    pub fn u32(&mut self, what: &str) -> Result<u32, String> {
        self.pos = self.pos.div_ceil(4) * 4;
        let b = self.take(4, what)?;
        let b = [b[0], b[1], b[2], b[3]];
        Ok(if self.little {
            u32::from_le_bytes(b)
        } else {
            u32::from_be_bytes(b)
        })
    }

    /// Skip a string (length with the NUL, bytes).
    pub fn skip_string(&mut self, what: &str) -> Result<(), String> {
        let len = self.u32(what)? as usize;
        self.take(len, what).map(|_| ())
    }

    /// A `uint8[]` sequence's bytes.
    pub fn bytes(&mut self, what: &str) -> Result<&'a [u8], String> {
        let len = self.u32(what)? as usize;
        self.take(len, what)
    }

    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], String> {
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
    fn fields_align_from_the_end_of_the_header() {
        let mut out = Vec::new();
        let mut w = Writer::new(&mut out, 16);
        w.u8(7);
        w.u32(0x0102_0304);
        w.string("ab");
        w.bytes(b"xyz").unwrap();
        assert_eq!(
            out,
            [
                &[0, 1, 0, 0, 7, 0, 0, 0][..],
                &[4, 3, 2, 1],
                &[3, 0, 0, 0, b'a', b'b', 0, 0],
                &[3, 0, 0, 0, b'x', b'y', b'z'],
            ]
            .concat()
        );
        let mut r = Reader::new(&out).unwrap();
        assert_eq!(r.u8("a").unwrap(), 7);
        assert_eq!(r.u32("b").unwrap(), 0x0102_0304);
        r.skip_string("c").unwrap();
        assert_eq!(r.bytes("d").unwrap(), b"xyz");
        assert!(r.u8("past the end").is_err());
    }

    #[test]
    fn big_endian_and_foreign_encapsulations() {
        let be = [0, 0, 0, 0, 1, 2, 3, 4];
        assert_eq!(Reader::new(&be).unwrap().u32("x").unwrap(), 0x0102_0304);
        let e = Reader::new(&[0, 3, 0, 0]).err().unwrap();
        assert!(e.contains("0x0003"), "{e}");
        assert!(Reader::new(&[0, 1]).is_err());
    }
}
