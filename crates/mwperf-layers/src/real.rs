//! The real functions behind the hooks: `dlsym(RTLD_NEXT, name)` (the next definition after this
//! library, normally glibc's), resolved once by the constructor. A hook that runs before the
//! constructor (another library's constructor writing, say) resolves its own function then:
//! dlsym is safe to call there, and two threads racing to resolve store the same address.

use core::ffi::CStr;
use core::sync::atomic::{AtomicUsize, Ordering::Relaxed};

/// One real function's address (0 until resolved).
pub struct Real {
    name: &'static CStr,
    addr: AtomicUsize,
}

impl Real {
    const fn new(name: &'static CStr) -> Self {
        Real {
            name,
            addr: AtomicUsize::new(0),
        }
    }

    /// The address, resolved now if the constructor has not run yet; 0 if there is none.
    #[inline(always)]
    pub fn addr(&self) -> usize {
        let a = self.addr.load(Relaxed);
        if a != 0 {
            a
        } else {
            self.resolve()
        }
    }

    #[cold]
    fn resolve(&self) -> usize {
        // SAFETY: a NUL-terminated name; RTLD_NEXT from within this library
        let a = unsafe { libc::dlsym(libc::RTLD_NEXT, self.name.as_ptr()) } as usize;
        self.addr.store(a, Relaxed);
        a
    }
}

pub static SEND: Real = Real::new(c"send");
pub static SENDTO: Real = Real::new(c"sendto");
pub static SENDMSG: Real = Real::new(c"sendmsg");
pub static SENDMMSG: Real = Real::new(c"sendmmsg");
pub static WRITE: Real = Real::new(c"write");
pub static WRITEV: Real = Real::new(c"writev");
pub static RECV: Real = Real::new(c"recv");
pub static RECVFROM: Real = Real::new(c"recvfrom");
pub static RECVMSG: Real = Real::new(c"recvmsg");
pub static RECVMMSG: Real = Real::new(c"recvmmsg");
pub static READ: Real = Real::new(c"read");
pub static READV: Real = Real::new(c"readv");
pub static RECV_CHK: Real = Real::new(c"__recv_chk");
pub static RECVFROM_CHK: Real = Real::new(c"__recvfrom_chk");
pub static READ_CHK: Real = Real::new(c"__read_chk");
pub static CLOSE: Real = Real::new(c"close");

/// Resolve them all (the constructor: before the process's own code runs).
pub fn resolve_all() {
    for r in [
        &SEND,
        &SENDTO,
        &SENDMSG,
        &SENDMMSG,
        &WRITE,
        &WRITEV,
        &RECV,
        &RECVFROM,
        &RECVMSG,
        &RECVMMSG,
        &READ,
        &READV,
        &RECV_CHK,
        &RECVFROM_CHK,
        &READ_CHK,
        &CLOSE,
    ] {
        r.addr();
    }
}
