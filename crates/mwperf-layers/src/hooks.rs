//! The hooks: glibc's send and receive entry points, interposed by LD_PRELOAD.
//!
//! Each forwards to the real function ([`crate::real`]). A call that moves fewer than
//! [`HEADER_LEN`] bytes costs a length compare and two relaxed loads, unless its fd is a byte
//! stream already seen (then its few bytes are scanned too: they may start a header the next
//! call completes); a bigger one a scan for the magic ([`crate::scan`]). Only a call that carries a header
//! reads the clock and logs into the ring. A send is stamped just before the real call (its
//! bytes are scanned first) and logged after it if it moved the message's bytes; a receive is
//! stamped right after the real call returned bytes, then scanned. errno is what the real call
//! left (saved and restored around the bookkeeping, which may touch it: getsockopt).
//!
//! Nothing here allocates, locks, waits or panics: slices come from the caller's buffers,
//! state from static tables, and a missing real function fails the call with ENOSYS.
//!
//! The ABI is `C-unwind`: these are cancellation points, and `pthread_cancel` of a thread
//! blocked in one unwinds (forced) through the hook's frame, which holds nothing to drop
//! while the real call runs (with plain `C` that unwind would be undefined behaviour).
#![allow(clippy::missing_safety_doc)]

use core::ffi::c_void;
use core::mem::transmute;

use libc::{c_int, c_uint, iovec, mmsghdr, msghdr, size_t, sockaddr, socklen_t, ssize_t, timespec};
use mwperf_core::wire::HEADER_LEN;

use crate::fds::{self, errno, set_errno, RECV, SEND};
use crate::gather::Gather;
use crate::real;
use crate::ring::{self, Event, BIT_FIRST, BIT_LAST, BIT_SEND};
use crate::scan::{self, Ev, Hint};

/// glibc's IOV_MAX: a longer iovec array is refused by the kernel, so not worth scanning.
const IOV_MAX: usize = 1024;

/// Raw CLOCK_MONOTONIC in ns (vDSO, no system call).
#[inline(always)]
pub(crate) fn now() -> u64 {
    let mut ts = timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: valid out pointer
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// The real function's address as `F`, or fail the call with ENOSYS.
macro_rules! real_or_enosys {
    ($real:expr, $ty:ty, $fail:expr) => {{
        let a = $real.addr();
        if a == 0 {
            set_errno(libc::ENOSYS);
            return $fail;
        }
        // SAFETY: the address of the glibc function of that name, whose C type is $ty
        unsafe { transmute::<usize, $ty>(a) }
    }};
}

/// The iovecs of a msghdr (none when absent or implausible).
unsafe fn msg_iov<'a>(msg: *const msghdr) -> &'a [iovec] {
    if msg.is_null() {
        return &[];
    }
    let m = &*msg;
    if m.msg_iov.is_null() || m.msg_iovlen > IOV_MAX {
        return &[];
    }
    core::slice::from_raw_parts(m.msg_iov, m.msg_iovlen)
}

/// Log the events of a call that moved `n` bytes of `g` at `t`.
#[inline(never)]
fn log(fd: c_int, dir: usize, g: &Gather, n: usize, t: u64, hint: Hint) {
    let (shared, slots) = ring::global();
    let mut headers = false;
    let dir_bit = if dir == SEND { BIT_SEND } else { 0 };
    let mut emit = |e: Ev| {
        headers |= e.first;
        ring::push(
            shared,
            slots,
            Event {
                t_ns: t,
                seq: e.ident.seq,
                run_id: e.ident.run_id,
                bytes: e.bytes,
                fd,
                topic: e.ident.topic,
                flags: e.ident.flags,
                source: e.ident.source,
                bits: dir_bit
                    | if e.first { BIT_FIRST } else { 0 }
                    | if e.last { BIT_LAST } else { 0 },
            },
        );
    };
    let held = if fds::is_stream(fd) {
        fds::hold(fd, dir)
    } else {
        None
    };
    match held {
        Some(mut h) => scan::account(g, n, Some(h.state()), hint, &mut emit),
        None => scan::account(g, n, None, hint, &mut emit),
    }
    if headers {
        shared
            .header_calls
            .fetch_add(1, core::sync::atomic::Ordering::Relaxed);
    }
}

/// Whether a send of `g` on `fd` is to be stamped.
#[inline(always)]
fn send_matters(fd: c_int, g: &Gather) -> Option<Hint> {
    matters(fd, SEND, g)
}

/// Whether a call on `fd` moving `g` is to be stamped (and the first header, if found).
#[inline(always)]
fn matters(fd: c_int, dir: usize, g: &Gather) -> Option<Hint> {
    if fds::pending(fd, dir) {
        return Some(None);
    }
    let stream = fds::known_stream(fd);
    if g.len() < HEADER_LEN && !stream {
        return None;
    }
    scan::worth_stamping(g, stream)
}

/// Whether what a receive returned is to be stamped. The scan stops at the first header, so
/// the stamp comes after a search over the bytes before it (a few ns: headers sit near the
/// start), and a call without one reads no clock at all.
#[inline(always)]
fn recv_matters(fd: c_int, g: &Gather) -> Option<Hint> {
    matters(fd, RECV, g)
}

/// A send-like call of `iov`: stamp, call, log.
#[inline(always)]
unsafe fn sent(fd: c_int, iov: &[iovec], call: impl FnOnce() -> ssize_t) -> ssize_t {
    let g = Gather::new(iov, usize::MAX);
    let Some(hint) = send_matters(fd, &g) else {
        return call();
    };
    let t = now();
    let r = call();
    if r > 0 {
        let e = errno();
        log(fd, SEND, &g, r as usize, t, hint);
        set_errno(e);
    }
    r
}

/// After a receive-like call that returned `r` into `iov`: stamp, scan, log.
#[inline(always)]
unsafe fn received(fd: c_int, iov: &[iovec], r: ssize_t, flags: c_int) -> ssize_t {
    if r <= 0 || flags & libc::MSG_PEEK != 0 {
        return r; // nothing, an error, or a peek (the same bytes come again)
    }
    let g = Gather::new(iov, r as usize);
    let Some(hint) = recv_matters(fd, &g) else {
        return r;
    };
    let t = now();
    let e = errno();
    log(fd, RECV, &g, r as usize, t, hint);
    set_errno(e);
    r
}

type SendF = unsafe extern "C-unwind" fn(c_int, *const c_void, size_t, c_int) -> ssize_t;
type SendtoF = unsafe extern "C-unwind" fn(
    c_int,
    *const c_void,
    size_t,
    c_int,
    *const sockaddr,
    socklen_t,
) -> ssize_t;
type SendmsgF = unsafe extern "C-unwind" fn(c_int, *const msghdr, c_int) -> ssize_t;
type SendmmsgF = unsafe extern "C-unwind" fn(c_int, *mut mmsghdr, c_uint, c_int) -> c_int;
type WriteF = unsafe extern "C-unwind" fn(c_int, *const c_void, size_t) -> ssize_t;
type WritevF = unsafe extern "C-unwind" fn(c_int, *const iovec, c_int) -> ssize_t;
type RecvF = unsafe extern "C-unwind" fn(c_int, *mut c_void, size_t, c_int) -> ssize_t;
type RecvfromF = unsafe extern "C-unwind" fn(
    c_int,
    *mut c_void,
    size_t,
    c_int,
    *mut sockaddr,
    *mut socklen_t,
) -> ssize_t;
type RecvmsgF = unsafe extern "C-unwind" fn(c_int, *mut msghdr, c_int) -> ssize_t;
type RecvmmsgF =
    unsafe extern "C-unwind" fn(c_int, *mut mmsghdr, c_uint, c_int, *mut timespec) -> c_int;
type ReadF = unsafe extern "C-unwind" fn(c_int, *mut c_void, size_t) -> ssize_t;
type ReadvF = unsafe extern "C-unwind" fn(c_int, *const iovec, c_int) -> ssize_t;
type RecvChkF = unsafe extern "C-unwind" fn(c_int, *mut c_void, size_t, size_t, c_int) -> ssize_t;
type RecvfromChkF = unsafe extern "C-unwind" fn(
    c_int,
    *mut c_void,
    size_t,
    size_t,
    c_int,
    *mut sockaddr,
    *mut socklen_t,
) -> ssize_t;
type ReadChkF = unsafe extern "C-unwind" fn(c_int, *mut c_void, size_t, size_t) -> ssize_t;
type CloseF = unsafe extern "C-unwind" fn(c_int) -> c_int;

fn buf_iov(buf: *const c_void, len: size_t) -> [iovec; 1] {
    [iovec {
        iov_base: buf as *mut c_void,
        iov_len: if buf.is_null() { 0 } else { len },
    }]
}

/// An iovec array from its C pointer and count (none when implausible).
unsafe fn iov_slice<'a>(iov: *const iovec, n: c_int) -> &'a [iovec] {
    if iov.is_null() || n <= 0 || n as usize > IOV_MAX {
        return &[];
    }
    core::slice::from_raw_parts(iov, n as usize)
}

#[no_mangle]
pub unsafe extern "C-unwind" fn send(
    fd: c_int,
    buf: *const c_void,
    len: size_t,
    flags: c_int,
) -> ssize_t {
    let f = real_or_enosys!(real::SEND, SendF, -1);
    sent(fd, &buf_iov(buf, len), || f(fd, buf, len, flags))
}

#[no_mangle]
pub unsafe extern "C-unwind" fn sendto(
    fd: c_int,
    buf: *const c_void,
    len: size_t,
    flags: c_int,
    addr: *const sockaddr,
    addrlen: socklen_t,
) -> ssize_t {
    let f = real_or_enosys!(real::SENDTO, SendtoF, -1);
    sent(fd, &buf_iov(buf, len), || {
        f(fd, buf, len, flags, addr, addrlen)
    })
}

#[no_mangle]
pub unsafe extern "C-unwind" fn sendmsg(fd: c_int, msg: *const msghdr, flags: c_int) -> ssize_t {
    let f = real_or_enosys!(real::SENDMSG, SendmsgF, -1);
    sent(fd, msg_iov(msg), || f(fd, msg, flags))
}

#[no_mangle]
pub unsafe extern "C-unwind" fn sendmmsg(
    fd: c_int,
    msgs: *mut mmsghdr,
    vlen: c_uint,
    flags: c_int,
) -> c_int {
    let f = real_or_enosys!(real::SENDMMSG, SendmmsgF, -1);
    let all: &[mmsghdr] = if msgs.is_null() || vlen as usize > IOV_MAX {
        &[]
    } else {
        core::slice::from_raw_parts(msgs, vlen as usize)
    };
    let stamp = all
        .iter()
        .any(|m| send_matters(fd, &Gather::new(msg_iov(&m.msg_hdr), usize::MAX)).is_some());
    if !stamp {
        return f(fd, msgs, vlen, flags);
    }
    let t = now();
    let r = f(fd, msgs, vlen, flags);
    if r > 0 {
        let e = errno();
        // each datagram as the kernel took it (msg_len: its bytes sent)
        for m in &all[..(r as usize).min(all.len())] {
            let g = Gather::new(msg_iov(&m.msg_hdr), usize::MAX);
            if m.msg_len > 0 {
                log(fd, SEND, &g, m.msg_len as usize, t, None);
            }
        }
        set_errno(e);
    }
    r
}

#[no_mangle]
pub unsafe extern "C-unwind" fn write(fd: c_int, buf: *const c_void, len: size_t) -> ssize_t {
    let f = real_or_enosys!(real::WRITE, WriteF, -1);
    sent(fd, &buf_iov(buf, len), || f(fd, buf, len))
}

#[no_mangle]
pub unsafe extern "C-unwind" fn writev(fd: c_int, iov: *const iovec, n: c_int) -> ssize_t {
    let f = real_or_enosys!(real::WRITEV, WritevF, -1);
    sent(fd, iov_slice(iov, n), || f(fd, iov, n))
}

#[no_mangle]
pub unsafe extern "C-unwind" fn recv(
    fd: c_int,
    buf: *mut c_void,
    len: size_t,
    flags: c_int,
) -> ssize_t {
    let f = real_or_enosys!(real::RECV, RecvF, -1);
    let r = f(fd, buf, len, flags);
    received(fd, &buf_iov(buf, len), r, flags)
}

#[no_mangle]
pub unsafe extern "C-unwind" fn recvfrom(
    fd: c_int,
    buf: *mut c_void,
    len: size_t,
    flags: c_int,
    addr: *mut sockaddr,
    addrlen: *mut socklen_t,
) -> ssize_t {
    let f = real_or_enosys!(real::RECVFROM, RecvfromF, -1);
    let r = f(fd, buf, len, flags, addr, addrlen);
    received(fd, &buf_iov(buf, len), r, flags)
}

#[no_mangle]
pub unsafe extern "C-unwind" fn recvmsg(fd: c_int, msg: *mut msghdr, flags: c_int) -> ssize_t {
    let f = real_or_enosys!(real::RECVMSG, RecvmsgF, -1);
    let r = f(fd, msg, flags);
    received(fd, msg_iov(msg), r, flags)
}

#[no_mangle]
pub unsafe extern "C-unwind" fn recvmmsg(
    fd: c_int,
    msgs: *mut mmsghdr,
    vlen: c_uint,
    flags: c_int,
    timeout: *mut timespec,
) -> c_int {
    let f = real_or_enosys!(real::RECVMMSG, RecvmmsgF, -1);
    let r = f(fd, msgs, vlen, flags, timeout);
    if r <= 0 || msgs.is_null() || flags & libc::MSG_PEEK != 0 {
        return r;
    }
    let got = core::slice::from_raw_parts(msgs, (r as usize).min(vlen as usize));
    let stamp = got
        .iter()
        .any(|m| recv_matters(fd, &Gather::new(msg_iov(&m.msg_hdr), m.msg_len as usize)).is_some());
    if !stamp {
        return r;
    }
    let t = now();
    let e = errno();
    for m in got {
        let n = m.msg_len as usize;
        if n > 0 {
            log(fd, RECV, &Gather::new(msg_iov(&m.msg_hdr), n), n, t, None);
        }
    }
    set_errno(e);
    r
}

#[no_mangle]
pub unsafe extern "C-unwind" fn read(fd: c_int, buf: *mut c_void, len: size_t) -> ssize_t {
    let f = real_or_enosys!(real::READ, ReadF, -1);
    let r = f(fd, buf, len);
    received(fd, &buf_iov(buf, len), r, 0)
}

#[no_mangle]
pub unsafe extern "C-unwind" fn readv(fd: c_int, iov: *const iovec, n: c_int) -> ssize_t {
    let f = real_or_enosys!(real::READV, ReadvF, -1);
    let r = f(fd, iov, n);
    received(fd, iov_slice(iov, n), r, 0)
}

#[no_mangle]
pub unsafe extern "C-unwind" fn __recv_chk(
    fd: c_int,
    buf: *mut c_void,
    len: size_t,
    buflen: size_t,
    flags: c_int,
) -> ssize_t {
    let f = real_or_enosys!(real::RECV_CHK, RecvChkF, -1);
    let r = f(fd, buf, len, buflen, flags);
    received(fd, &buf_iov(buf, len), r, flags)
}

#[no_mangle]
pub unsafe extern "C-unwind" fn __recvfrom_chk(
    fd: c_int,
    buf: *mut c_void,
    len: size_t,
    buflen: size_t,
    flags: c_int,
    addr: *mut sockaddr,
    addrlen: *mut socklen_t,
) -> ssize_t {
    let f = real_or_enosys!(real::RECVFROM_CHK, RecvfromChkF, -1);
    let r = f(fd, buf, len, buflen, flags, addr, addrlen);
    received(fd, &buf_iov(buf, len), r, flags)
}

#[no_mangle]
pub unsafe extern "C-unwind" fn __read_chk(
    fd: c_int,
    buf: *mut c_void,
    len: size_t,
    buflen: size_t,
) -> ssize_t {
    let f = real_or_enosys!(real::READ_CHK, ReadChkF, -1);
    let r = f(fd, buf, len, buflen);
    received(fd, &buf_iov(buf, len), r, 0)
}

#[no_mangle]
pub unsafe extern "C-unwind" fn close(fd: c_int) -> c_int {
    let f = real_or_enosys!(real::CLOSE, CloseF, -1);
    fds::forget(fd);
    f(fd)
}
