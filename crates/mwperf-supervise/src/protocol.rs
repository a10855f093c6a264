//! The supervisor's line protocol (docs/agent-contract.md, "supervise"): every stdout line is
//! `<kind> <rest>\n`; stdin carries control lines. Pure functions, unit-tested here.

/// Raw bytes per `file` line (48 KiB: a multiple of 3, so only the last chunk has padding).
pub const CHUNK: usize = 48 * 1024;

/// One protocol line: `kind rest\n`. A newline or carriage return inside `rest` would split the
/// line on the reader's side, so they are replaced by spaces (child lines never hold a '\n': they
/// are split on it).
pub fn line(kind: &str, rest: &str) -> Vec<u8> {
    let mut v = Vec::with_capacity(kind.len() + rest.len() + 2);
    v.extend_from_slice(kind.as_bytes());
    v.push(b' ');
    v.extend(
        rest.bytes()
            .map(|b| if b == b'\n' || b == b'\r' { b' ' } else { b }),
    );
    v.push(b'\n');
    v
}

/// A child's output line (`out` or `err`) from raw bytes: the trailing "\n" (and a "\r" before
/// it) removed, invalid UTF-8 replaced lossily.
pub fn child_line(kind: &str, raw: &[u8]) -> Vec<u8> {
    let raw = raw.strip_suffix(b"\n").unwrap_or(raw);
    let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
    line(kind, &String::from_utf8_lossy(raw))
}

/// A notice of the supervisor itself, sent as an `err` line.
pub fn notice(msg: &str) -> Vec<u8> {
    line("err", &format!("mwperf-agent supervise: {msg}"))
}

/// A command on the control channel (stdin).
#[derive(Debug, PartialEq, Eq)]
pub enum Control {
    /// `signal INT|TERM|KILL`: the signal number to send to the child's process group.
    Signal(i32),
    /// `sample`: reply with a `usage` line.
    Sample,
    /// Anything else (answered with an "ignored control line" notice); the line, shortened.
    Invalid(String),
}

pub fn parse_control(raw: &str) -> Control {
    let words: Vec<&str> = raw.split_whitespace().collect();
    match words.as_slice() {
        ["sample"] => Control::Sample,
        ["signal", "INT"] => Control::Signal(libc::SIGINT),
        ["signal", "TERM"] => Control::Signal(libc::SIGTERM),
        ["signal", "KILL"] => Control::Signal(libc::SIGKILL),
        _ => Control::Invalid(
            raw.trim_end_matches(['\r', '\n'])
                .chars()
                .take(200)
                .collect(),
        ),
    }
}

/// The `exit` line's value: the exit code, or minus the signal number that killed the child.
pub fn exit_value(si_code: i32, si_status: i32) -> i32 {
    match si_code {
        libc::CLD_EXITED => si_status,
        _ => -si_status, // CLD_KILLED, CLD_DUMPED
    }
}

/// Incremental SHA-256 (FIPS 180-4), for the `fileend` line (same hex as `sha256sum`).
pub struct Sha256 {
    h: [u32; 8],
    buf: [u8; 64],
    used: usize,
    len: u64,
}

const K: [u32; 64] = [
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
];

impl Default for Sha256 {
    fn default() -> Self {
        Sha256 {
            h: [
                0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab,
                0x5be0cd19,
            ],
            buf: [0; 64],
            used: 0,
            len: 0,
        }
    }
}

impl Sha256 {
    fn block(&mut self, b: &[u8; 64]) {
        let mut w = [0u32; 64];
        for (i, c) in b.chunks_exact(4).enumerate() {
            w[i] = u32::from_be_bytes([c[0], c[1], c[2], c[3]]);
        }
        for i in 16..64 {
            let s0 = w[i - 15].rotate_right(7) ^ w[i - 15].rotate_right(18) ^ (w[i - 15] >> 3);
            let s1 = w[i - 2].rotate_right(17) ^ w[i - 2].rotate_right(19) ^ (w[i - 2] >> 10);
            w[i] = w[i - 16]
                .wrapping_add(s0)
                .wrapping_add(w[i - 7])
                .wrapping_add(s1);
        }
        let [mut a, mut b_, mut c, mut d, mut e, mut f, mut g, mut h] = self.h;
        for i in 0..64 {
            let s1 = e.rotate_right(6) ^ e.rotate_right(11) ^ e.rotate_right(25);
            let ch = (e & f) ^ (!e & g);
            let t1 = h
                .wrapping_add(s1)
                .wrapping_add(ch)
                .wrapping_add(K[i])
                .wrapping_add(w[i]);
            let s0 = a.rotate_right(2) ^ a.rotate_right(13) ^ a.rotate_right(22);
            let maj = (a & b_) ^ (a & c) ^ (b_ & c);
            let t2 = s0.wrapping_add(maj);
            (h, g, f, e, d, c, b_, a) =
                (g, f, e, d.wrapping_add(t1), c, b_, a, t1.wrapping_add(t2));
        }
        for (s, v) in self.h.iter_mut().zip([a, b_, c, d, e, f, g, h]) {
            *s = s.wrapping_add(v);
        }
    }

    pub fn update(&mut self, mut data: &[u8]) {
        self.len += data.len() as u64;
        while !data.is_empty() {
            let n = (64 - self.used).min(data.len());
            self.buf[self.used..self.used + n].copy_from_slice(&data[..n]);
            self.used += n;
            data = &data[n..];
            if self.used == 64 {
                let b = self.buf;
                self.block(&b);
                self.used = 0;
            }
        }
    }

    pub fn hex(mut self) -> String {
        let bits = self.len.wrapping_mul(8);
        self.update(&[0x80]);
        while self.used != 56 {
            self.update(&[0]);
        }
        self.update(&bits.to_be_bytes());
        self.h.iter().map(|v| format!("{v:08x}")).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_kind_space_rest_newline() {
        assert_eq!(line("started", "42"), b"started 42\n");
        assert_eq!(line("out", "a\nb\rc"), b"out a b c\n");
        assert_eq!(child_line("out", b"hi\n"), b"out hi\n");
        assert_eq!(child_line("err", b"dos line\r\n"), b"err dos line\n");
        assert_eq!(child_line("out", b"no newline"), b"out no newline\n");
        assert_eq!(child_line("out", b"\n"), b"out \n");
        assert_eq!(
            child_line("out", b"bad \xff utf8\n"),
            "out bad \u{fffd} utf8\n".as_bytes()
        );
        assert_eq!(notice("x"), b"err mwperf-agent supervise: x\n");
    }

    #[test]
    fn control_lines() {
        assert_eq!(parse_control("sample\n"), Control::Sample);
        assert_eq!(parse_control("signal INT"), Control::Signal(libc::SIGINT));
        assert_eq!(
            parse_control(" signal  TERM \r\n"),
            Control::Signal(libc::SIGTERM)
        );
        assert_eq!(parse_control("signal KILL"), Control::Signal(libc::SIGKILL));
        assert_eq!(
            parse_control("signal STOP"),
            Control::Invalid("signal STOP".into())
        );
        assert_eq!(
            parse_control("signal int"),
            Control::Invalid("signal int".into())
        );
        assert_eq!(parse_control(""), Control::Invalid("".into()));
        assert_eq!(
            parse_control(&"x".repeat(1000)),
            Control::Invalid("x".repeat(200))
        );
    }

    #[test]
    fn exit_values() {
        assert_eq!(exit_value(libc::CLD_EXITED, 3), 3);
        assert_eq!(exit_value(libc::CLD_KILLED, 9), -9);
        assert_eq!(exit_value(libc::CLD_DUMPED, 11), -11);
    }

    #[test]
    fn file_chunks_encode_without_padding_between_them() {
        assert_eq!(CHUNK % 3, 0); // base64 of each chunk concatenates to that of the file
    }

    fn sha(data: &[u8]) -> String {
        let mut s = Sha256::default();
        s.update(data);
        s.hex()
    }

    #[test]
    fn sha256_known_vectors() {
        assert_eq!(
            sha(b""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert_eq!(
            sha(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(
            sha(b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        );
        let million = vec![b'a'; 1_000_000];
        assert_eq!(
            sha(&million),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"
        );
        // Fed in uneven pieces, the same digest.
        let mut s = Sha256::default();
        for c in million.chunks(777) {
            s.update(c);
        }
        assert_eq!(
            s.hex(),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"
        );
    }
}
