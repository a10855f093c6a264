//! Per-fd state: whether an fd is a byte stream (asked once, then cached until `close`), and
//! for each direction of a stream what the calls before left unfinished ([`Stream`]).
//!
//! A fixed table of [`MAX_FDS`] entries in .bss (no allocation; pages appear as fds are used);
//! an fd beyond it is treated like a datagram socket: scanned, never carried over. A direction's
//! state is taken with a try-lock: a second thread calling on the same fd in the same direction
//! at the same moment (which no stream protocol does) is scanned without carry-over instead of
//! waiting.

use core::cell::UnsafeCell;
use core::sync::atomic::{AtomicBool, AtomicU8, Ordering::*};

use crate::scan::Stream;

/// fds below this have a table entry.
pub const MAX_FDS: usize = 65536;

pub const SEND: usize = 0;
pub const RECV: usize = 1;

const UNKNOWN: u8 = 0;
const STREAM: u8 = 1;
const DATAGRAM: u8 = 2;

struct Dir {
    busy: AtomicBool,
    /// The state is not idle (the only thing a call without a header looks at).
    pending: AtomicBool,
    state: UnsafeCell<Stream>,
}

struct Fd {
    kind: AtomicU8,
    dirs: [Dir; 2],
}

struct Table([Fd; MAX_FDS]);
// SAFETY: `state` is only touched by the holder of `busy`
unsafe impl Sync for Table {}

static TABLE: Table = Table(
    [const {
        Fd {
            kind: AtomicU8::new(UNKNOWN),
            dirs: [const {
                Dir {
                    busy: AtomicBool::new(false),
                    pending: AtomicBool::new(false),
                    state: UnsafeCell::new(Stream::new()),
                }
            }; 2],
        }
    }; MAX_FDS],
);

fn entry(fd: i32) -> Option<&'static Fd> {
    TABLE.0.get(usize::try_from(fd).ok()?)
}

/// Something of this fd's direction is still to come (one relaxed load).
#[inline]
pub fn pending(fd: i32, dir: usize) -> bool {
    entry(fd).is_some_and(|e| e.dirs[dir].pending.load(Relaxed))
}

/// Whether `fd` is already known to be a byte stream (the cache only: one relaxed load). A
/// call shorter than a header is looked at only on such an fd (it may hold the start of a
/// header cut by the call's end); on any other it costs nothing.
#[inline]
pub fn known_stream(fd: i32) -> bool {
    entry(fd).is_some_and(|e| e.kind.load(Relaxed) == STREAM)
}

/// Whether `fd` is a byte stream: SOCK_STREAM, or not a socket at all (pipe, file, tty).
/// The first call asks the kernel (getsockopt, may change errno: the hooks restore it).
pub fn is_stream(fd: i32) -> bool {
    let Some(e) = entry(fd) else {
        return false;
    };
    match e.kind.load(Relaxed) {
        STREAM => return true,
        DATAGRAM => return false,
        _ => {}
    }
    let mut ty: libc::c_int = 0;
    let mut len = core::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: valid out pointers of the right size
    let r = unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_TYPE,
            &mut ty as *mut libc::c_int as *mut libc::c_void,
            &mut len,
        )
    };
    let kind = if r == 0 {
        if ty == libc::SOCK_STREAM {
            STREAM
        } else {
            DATAGRAM
        }
    } else if errno() == libc::ENOTSOCK {
        STREAM
    } else {
        return false; // EBADF and the like: ask again next time
    };
    e.kind.store(kind, Relaxed);
    kind == STREAM
}

/// Exclusive use of one direction's stream state, released on drop.
pub struct Held(&'static Dir);

impl Held {
    pub fn state(&mut self) -> &mut Stream {
        // SAFETY: we hold `busy`
        unsafe { &mut *self.0.state.get() }
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        let idle = self.state().idle();
        self.0.pending.store(!idle, Relaxed);
        self.0.busy.store(false, Release);
    }
}

/// Take one direction's state, or None (fd beyond the table, or busy in another thread).
pub fn hold(fd: i32, dir: usize) -> Option<Held> {
    let d = &entry(fd)?.dirs[dir];
    d.busy
        .compare_exchange(false, true, Acquire, Relaxed)
        .is_ok()
        .then_some(Held(d))
}

/// `close(fd)`: the next file under this number starts from nothing.
pub fn forget(fd: i32) {
    let Some(e) = entry(fd) else {
        return;
    };
    e.kind.store(UNKNOWN, Relaxed);
    for dir in [SEND, RECV] {
        if let Some(mut h) = hold(fd, dir) {
            *h.state() = Stream::new();
        }
    }
}

pub fn errno() -> i32 {
    // SAFETY: glibc's thread-local errno
    unsafe { *libc::__errno_location() }
}

pub fn set_errno(v: i32) {
    // SAFETY: as above
    unsafe { *libc::__errno_location() = v }
}
