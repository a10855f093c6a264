//! `MWPERF_LAYERS_DUMP=PATH`: at exit, the events still in the ring as CSV, for programs that
//! do not drain the ring themselves (foreign programs, the tests):
//!
//! ```text
//! t_ns,dir,first,last,run_id,topic,seq,flags,bytes,fd
//! 81234567890,send,1,1,7,0,42,0,120,5
//! # events=N dropped=M
//! ```
//! `t_ns` is raw CLOCK_MONOTONIC; `dir` is `send` or `recv`, or for a ROS 2 tracepoint's
//! moment (ros2.rs) `rcl_publish`, `rmw_publish`, `rmw_take` or `rcl_take` (fd -1); `events` counts every event logged
//! by the process (drained or not), `dropped` those a full ring refused.
//!
//! `%p` in PATH stands for the pid: every process of a tree that inherits LD_PRELOAD and the
//! variable (a test harness and the brokers it starts) then writes a file of its own.
//!
//! Written with raw system calls from a stack buffer (nothing allocated during exit), only by
//! the process that loaded the library (a forked child inherits the ring, not the file).

use core::sync::atomic::{AtomicI32, Ordering::Relaxed};

use crate::real;
use crate::ring::{self, Event, BIT_FIRST, BIT_LAST, BIT_SEND, BIT_TRACE, TRACE_SHIFT};

/// The pid of the process that ran the constructor.
pub static OWNER: AtomicI32 = AtomicI32::new(0);

const COLUMNS: &[u8] = b"t_ns,dir,first,last,run_id,topic,seq,flags,bytes,fd\n";

/// A stack buffer that writes itself out when full.
struct Out {
    fd: i32,
    buf: [u8; 16384],
    len: usize,
    failed: bool,
}

impl Out {
    fn put(&mut self, b: &[u8]) {
        if self.len + b.len() > self.buf.len() {
            self.flush();
        }
        let n = b.len().min(self.buf.len());
        self.buf[self.len..self.len + n].copy_from_slice(&b[..n]);
        self.len += n;
    }

    fn num(&mut self, v: u64) {
        let mut d = [0u8; 20];
        let mut i = d.len();
        let mut v = v;
        loop {
            i -= 1;
            d[i] = b'0' + (v % 10) as u8;
            v /= 10;
            if v == 0 {
                break;
            }
        }
        self.put(&d[i..]);
    }

    fn int(&mut self, v: i64) {
        if v < 0 {
            self.put(b"-");
        }
        self.num(v.unsigned_abs());
    }

    fn flush(&mut self) {
        let a = real::WRITE.addr();
        let mut off = 0;
        while off < self.len && a != 0 && !self.failed {
            // SAFETY: glibc's write; the buffer is valid for the length given
            let w: unsafe extern "C" fn(i32, *const libc::c_void, usize) -> isize =
                unsafe { core::mem::transmute(a) };
            let r = unsafe {
                w(
                    self.fd,
                    self.buf[off..].as_ptr() as *const _,
                    self.len - off,
                )
            };
            if r > 0 {
                off += r as usize;
            } else if !(r < 0 && crate::fds::errno() == libc::EINTR) {
                self.failed = true;
            }
        }
        self.len = 0;
    }

    fn event(&mut self, e: &Event) {
        self.num(e.t_ns);
        self.put(if e.bits & BIT_TRACE != 0 {
            [
                &b",rcl_publish,"[..],
                b",rmw_publish,",
                b",rmw_take,",
                b",rcl_take,",
            ][((e.bits >> TRACE_SHIFT) & 3) as usize]
        } else if e.bits & BIT_SEND != 0 {
            b",send,"
        } else {
            b",recv,"
        });
        self.put(if e.bits & BIT_FIRST != 0 {
            b"1,"
        } else {
            b"0,"
        });
        self.put(if e.bits & BIT_LAST != 0 { b"1," } else { b"0," });
        self.num(e.run_id as u64);
        self.put(b",");
        self.num(e.topic as u64);
        self.put(b",");
        self.num(e.seq);
        self.put(b",");
        self.num(e.flags as u64);
        self.put(b",");
        self.num(e.bytes as u64);
        self.put(b",");
        self.int(e.fd as i64);
        self.put(b"\n");
    }
}

/// `given` with every `%p` replaced by `pid`, into `out` (leaving room for a NUL); its length.
fn expand_pid(given: &[u8], pid: u64, out: &mut [u8]) -> Option<usize> {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    let mut v = pid;
    loop {
        i -= 1;
        digits[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    let pid = &digits[i..];
    let mut len = 0;
    let mut k = 0;
    while k < given.len() {
        let piece: &[u8] = if given[k..].starts_with(b"%p") {
            k += 2;
            pid
        } else {
            k += 1;
            &given[k - 1..k]
        };
        if len + piece.len() >= out.len() {
            return None;
        }
        out[len..len + piece.len()].copy_from_slice(piece);
        len += piece.len();
    }
    Some(len)
}

/// Write the dump if MWPERF_LAYERS_DUMP names a file (the destructor).
pub fn write_if_asked() {
    // SAFETY: getpid cannot fail
    if unsafe { libc::getpid() } != OWNER.load(Relaxed) {
        return;
    }
    // SAFETY: a NUL-terminated name; the environment is still there during exit
    let path = unsafe { libc::getenv(c"MWPERF_LAYERS_DUMP".as_ptr()) };
    // SAFETY: getenv's result is NUL-terminated when not null
    if path.is_null() || unsafe { *path } == 0 {
        return;
    }
    let saved = crate::fds::errno();
    // SAFETY: getenv's result is NUL-terminated
    let given = unsafe { core::ffi::CStr::from_ptr(path) }.to_bytes();
    let mut name = [0u8; 4096];
    // SAFETY: getpid cannot fail
    let pid = unsafe { libc::getpid() } as u64;
    let Some(len) = expand_pid(given, pid, &mut name) else {
        return; // longer than PATH_MAX: open would refuse it anyway
    };
    name[len] = 0;
    let path = name.as_ptr() as *const libc::c_char;
    // SAFETY: NUL-terminated path
    let fd = unsafe {
        libc::open(
            path,
            libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC | libc::O_CLOEXEC,
            0o644,
        )
    };
    if fd < 0 {
        let mut o = Out {
            fd: 2,
            buf: [0; 16384],
            len: 0,
            failed: false,
        };
        o.put(b"libmwperf_layers.so: cannot write MWPERF_LAYERS_DUMP=");
        // SAFETY: NUL-terminated
        o.put(unsafe { core::ffi::CStr::from_ptr(path) }.to_bytes());
        o.put(b" (errno ");
        o.int(crate::fds::errno() as i64);
        o.put(b")\n");
        o.flush();
        crate::fds::set_errno(saved);
        return;
    }
    let mut o = Out {
        fd,
        buf: [0; 16384],
        len: 0,
        failed: false,
    };
    o.put(COLUMNS);
    let (shared, slots) = ring::global();
    while let Some(e) = ring::pop(shared, slots) {
        o.event(&e);
    }
    o.put(b"# events=");
    o.num(shared.head.load(Relaxed));
    o.put(b" dropped=");
    o.num(shared.dropped.load(Relaxed));
    o.put(b"\n");
    o.flush();
    let c = real::CLOSE.addr();
    if c != 0 {
        // SAFETY: glibc's close on the fd opened above
        let close: unsafe extern "C" fn(i32) -> i32 = unsafe { core::mem::transmute(c) };
        unsafe { close(fd) };
    }
    crate::fds::set_errno(saved);
}
