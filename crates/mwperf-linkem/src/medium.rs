//! A transmission medium shared by several emulators (`--medium FILE`): the WiFi cell or the
//! shared bus of a segment, where one station's frame occupies the air for everyone.
//!
//! Every rate-limited direction of every mwperf-linkem process given the same FILE serializes
//! its packets on one timeline: a packet starts when the medium is free (CLOCK_MONOTONIC, which
//! all processes share) and keeps it busy for its transmission time, so N senders together get
//! the link's rate, not N times it. The timeline is one `u64` ("free at", absolute ns) in the
//! file, mapped shared and advanced with compare-and-swap: no lock, no process to coordinate.
//! Not modelled: collisions and their retries (CSMA back-off is in the busy time when the spec
//! has `backoff`), capture effects, rate adaptation.

use std::fs::OpenOptions;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicU64, Ordering::AcqRel, Ordering::Acquire};

#[derive(Debug)]
pub struct Medium {
    free_at: *const AtomicU64,
}

// SAFETY: the pointer is to a shared mapping that lives as long as the process (never unmapped)
// and is only accessed atomically.
unsafe impl Send for Medium {}
unsafe impl Sync for Medium {}

impl Medium {
    /// Map the medium's timeline in `path` (created, 8 bytes of zero, when absent).
    pub fn open(path: &str) -> Result<Medium, String> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(|e| format!("--medium {path}: {e}"))?;
        file.set_len(8)
            .map_err(|e| format!("--medium {path}: {e}"))?;
        // SAFETY: an 8-byte shared mapping of a file we just sized; checked for MAP_FAILED.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                8,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                file.as_raw_fd(),
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(format!(
                "--medium {path}: mmap: {}",
                std::io::Error::last_os_error()
            ));
        }
        // The mapping outlives the file descriptor; it is released when the process ends.
        Ok(Medium {
            free_at: ptr as *const AtomicU64,
        })
    }

    fn cell(&self) -> &AtomicU64 {
        // SAFETY: a page-aligned (so 8-byte aligned) mapping of 8 bytes, valid for the process.
        unsafe { &*self.free_at }
    }

    /// Occupy the medium for `busy_ns` from `now_ns` (absolute CLOCK_MONOTONIC) or when it is
    /// next free: the end of the transmission, or None when the wait before it would exceed
    /// `max_wait_ns` (the sender's queue is full; nothing is reserved).
    pub fn reserve(&self, now_ns: u64, busy_ns: u64, max_wait_ns: Option<u64>) -> Option<u64> {
        let cell = self.cell();
        let mut seen = cell.load(Acquire);
        loop {
            let start = now_ns.max(seen);
            if max_wait_ns.is_some_and(|most| start - now_ns > most) {
                return None;
            }
            let end = start.saturating_add(busy_ns);
            match cell.compare_exchange_weak(seen, end, AcqRel, Acquire) {
                Ok(_) => return Some(end),
                Err(current) => seen = current,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> String {
        let path =
            std::env::temp_dir().join(format!("mwperf-medium-{}-{name}", std::process::id()));
        let _ = std::fs::remove_file(&path);
        path.to_string_lossy().into_owned()
    }

    #[test]
    fn two_users_of_one_file_serialize_on_one_timeline() {
        let path = scratch("two");
        let (a, b) = (Medium::open(&path).unwrap(), Medium::open(&path).unwrap());
        assert_eq!(a.reserve(1_000, 100, None), Some(1_100));
        assert_eq!(b.reserve(1_050, 100, None), Some(1_200)); // waits for a's frame
        assert_eq!(a.reserve(5_000, 10, None), Some(5_010)); // idle medium: at once
        assert_eq!(b.reserve(5_000, 10, Some(5)), None); // would wait 10 > 5: queue full
        assert_eq!(a.reserve(5_000, 10, Some(10)), Some(5_020)); // nothing was reserved by b
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn concurrent_reservations_never_overlap() {
        let path = scratch("threads");
        let medium = std::sync::Arc::new(Medium::open(&path).unwrap());
        let ends: Vec<u64> = (0..4)
            .map(|_| {
                let m = medium.clone();
                std::thread::spawn(move || {
                    (0..1000)
                        .map(|_| m.reserve(0, 7, None).unwrap())
                        .collect::<Vec<_>>()
                })
            })
            .flat_map(|t| t.join().unwrap())
            .collect();
        let mut sorted = ends.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), 4000); // every frame its own slot
        assert_eq!(*sorted.last().unwrap(), 4000 * 7);
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn a_bad_path_is_an_error_naming_it() {
        let e = Medium::open("/nonexistent/dir/medium").err().unwrap();
        assert!(e.starts_with("--medium /nonexistent/dir/medium:"), "{e}");
    }
}
