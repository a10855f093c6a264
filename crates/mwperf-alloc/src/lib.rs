//! `libmwperf_alloc.so`: an `LD_PRELOAD` interposer that counts every heap allocation of the
//! process it is loaded into — Rust code, libddsc, libstdc++, glibc's own internal callers.
//!
//! `mwperf-agent --count-allocs` finds the counters with `dlsym(RTLD_DEFAULT,
//! "mwperf_alloc_counters")` and snapshots them at its phase boundaries.
//!
//! How: the hooks forward to glibc's exported `__libc_malloc`, `__libc_calloc`, `__libc_realloc`,
//! `__libc_free`, `__libc_memalign`, `__libc_valloc`, `__libc_pvalloc` (public ABI since glibc
//! 2.2.5, the way Fast DDS's allocation tests do it), so no `dlsym(RTLD_NEXT)` and no bootstrap
//! buffer are needed: nothing allocates before the real allocator is reachable. glibc only (musl
//! has no `__libc_malloc`; the library then fails to load, and the agent says it is missing).
//!
//! The hooks take no lock, allocate nothing and cannot panic (only relaxed atomic arithmetic on
//! a static and calls into glibc): they are as async-signal-safe as the malloc they wrap.
//! Counted: every successful allocation (malloc, calloc, realloc to a non-null block, the
//! aligned variants) adds one to `allocs` and its requested size to `bytes`; every free of a
//! non-null block (free, realloc's old block, realloc(p, 0)) adds one to `frees`. Live and peak
//! live bytes use `malloc_usable_size` on both sides, so they balance exactly.
#![allow(clippy::missing_safety_doc)]

use core::ffi::c_void;
use core::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// The magic the agent checks before trusting the symbol ("MWALLOC1").
pub const MAGIC: u64 = u64::from_le_bytes(*b"MWALLOC1");

/// The counters, one per field, relaxed atomics (totals since the process started).
#[repr(C)]
pub struct Counters {
    pub magic: u64,
    pub allocs: AtomicU64,
    pub bytes: AtomicU64,
    pub frees: AtomicU64,
    pub live: AtomicU64,
    pub peak: AtomicU64,
}

#[no_mangle]
#[used]
pub static mwperf_alloc_counters: Counters = Counters {
    magic: MAGIC,
    allocs: AtomicU64::new(0),
    bytes: AtomicU64::new(0),
    frees: AtomicU64::new(0),
    live: AtomicU64::new(0),
    peak: AtomicU64::new(0),
};

extern "C" {
    fn __libc_malloc(size: usize) -> *mut c_void;
    fn __libc_calloc(n: usize, size: usize) -> *mut c_void;
    fn __libc_realloc(p: *mut c_void, size: usize) -> *mut c_void;
    fn __libc_free(p: *mut c_void);
    fn __libc_memalign(align: usize, size: usize) -> *mut c_void;
    fn __libc_valloc(size: usize) -> *mut c_void;
    fn __libc_pvalloc(size: usize) -> *mut c_void;
    fn malloc_usable_size(p: *mut c_void) -> usize;
}

const EINVAL: i32 = 22;
const ENOMEM: i32 = 12;

#[inline(always)]
unsafe fn counted(p: *mut c_void, requested: usize) -> *mut c_void {
    if !p.is_null() {
        let c = &mwperf_alloc_counters;
        c.allocs.fetch_add(1, Relaxed);
        c.bytes.fetch_add(requested as u64, Relaxed);
        let usable = malloc_usable_size(p) as u64;
        let live = c.live.fetch_add(usable, Relaxed).wrapping_add(usable);
        if live > c.peak.load(Relaxed) {
            c.peak.fetch_max(live, Relaxed);
        }
    }
    p
}

#[inline(always)]
unsafe fn released(p: *mut c_void) {
    if !p.is_null() {
        let c = &mwperf_alloc_counters;
        c.frees.fetch_add(1, Relaxed);
        c.live.fetch_sub(malloc_usable_size(p) as u64, Relaxed);
    }
}

#[no_mangle]
pub unsafe extern "C" fn malloc(size: usize) -> *mut c_void {
    counted(__libc_malloc(size), size)
}

#[no_mangle]
pub unsafe extern "C" fn calloc(n: usize, size: usize) -> *mut c_void {
    counted(__libc_calloc(n, size), n.wrapping_mul(size))
}

#[no_mangle]
pub unsafe extern "C" fn free(p: *mut c_void) {
    released(p);
    __libc_free(p)
}

#[no_mangle]
pub unsafe extern "C" fn realloc(p: *mut c_void, size: usize) -> *mut c_void {
    if p.is_null() {
        return malloc(size);
    }
    // the old block's size is read before the real realloc may free it
    let old = malloc_usable_size(p) as u64;
    let q = __libc_realloc(p, size);
    if q.is_null() && size != 0 {
        return q; // failed: the old block is untouched
    }
    let c = &mwperf_alloc_counters;
    c.frees.fetch_add(1, Relaxed);
    c.live.fetch_sub(old, Relaxed);
    counted(q, size)
}

#[no_mangle]
pub unsafe extern "C" fn reallocarray(p: *mut c_void, n: usize, size: usize) -> *mut c_void {
    match n.checked_mul(size) {
        Some(total) => realloc(p, total),
        None => {
            *libc_errno() = ENOMEM;
            core::ptr::null_mut()
        }
    }
}

#[no_mangle]
pub unsafe extern "C" fn memalign(align: usize, size: usize) -> *mut c_void {
    counted(__libc_memalign(align, size), size)
}

#[no_mangle]
pub unsafe extern "C" fn aligned_alloc(align: usize, size: usize) -> *mut c_void {
    counted(__libc_memalign(align, size), size)
}

#[no_mangle]
pub unsafe extern "C" fn posix_memalign(out: *mut *mut c_void, align: usize, size: usize) -> i32 {
    if align < core::mem::size_of::<usize>() || !align.is_power_of_two() {
        return EINVAL;
    }
    let p = counted(__libc_memalign(align, size), size);
    if p.is_null() {
        return ENOMEM;
    }
    *out = p;
    0
}

#[no_mangle]
pub unsafe extern "C" fn valloc(size: usize) -> *mut c_void {
    counted(__libc_valloc(size), size)
}

#[no_mangle]
pub unsafe extern "C" fn pvalloc(size: usize) -> *mut c_void {
    counted(__libc_pvalloc(size), size)
}

extern "C" {
    #[link_name = "__errno_location"]
    fn libc_errno() -> *mut i32;
}

#[cfg(test)]
mod tests {
    use super::*;

    // In the test binary these hooks interpose malloc for the whole process (they are defined
    // in the executable); the harness thread only waits meanwhile, so the deltas are exact.
    #[test]
    fn every_hook_counts_and_balances() {
        let c = &mwperf_alloc_counters;
        let (a0, f0, l0) = (
            c.allocs.load(Relaxed),
            c.frees.load(Relaxed),
            c.live.load(Relaxed),
        );
        // black_box: LLVM knows malloc/free by name and would elide unused pairs
        use core::hint::black_box as bb;
        unsafe {
            let p = bb(malloc(bb(100)));
            let q = bb(calloc(bb(3), 10));
            let r = bb(realloc(p, bb(1000)));
            let mut s = core::ptr::null_mut();
            assert_eq!(posix_memalign(&mut s, 64, 50), 0);
            assert_eq!(s as usize % 64, 0);
            let t = bb(aligned_alloc(32, bb(64)));
            let u = bb(reallocarray(core::ptr::null_mut(), 4, bb(8)));
            assert_eq!(posix_memalign(&mut core::ptr::null_mut(), 3, 8), EINVAL);
            free(q);
            free(r);
            free(s);
            free(t);
            free(u);
            free(core::ptr::null_mut());
        }
        // other test threads may allocate through the real malloc, never through these hooks
        assert_eq!(c.allocs.load(Relaxed) - a0, 6); // malloc, calloc, realloc, posix_memalign, aligned_alloc, reallocarray
        assert_eq!(c.frees.load(Relaxed) - f0, 6); // realloc's old block + five frees
        assert_eq!(c.live.load(Relaxed), l0);
        assert!(c.peak.load(Relaxed) >= 1000);
        assert_eq!(c.magic, MAGIC);
    }
}
