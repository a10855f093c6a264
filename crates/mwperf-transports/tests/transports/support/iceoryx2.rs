//! iceoryx2: no daemon; every test gets its own service base name. Reliable keep-last 1000 (the
//! deepest queue the suite runs): deep enough for the 200 pipelined messages, and it exercises
//! the shared-memory cap for the 4 MiB messages (1000 × 4 MiB would otherwise be preallocated).
//!
//! iceoryx2 keeps a node counter in /dev/shm for good. The tests run in a domain of this test
//! process's own (`--opt domain=`, as mwperf gives each run one) and remove its files when the
//! process exits, so a test run leaves nothing in /dev/shm either.

use std::sync::Once;

use mwperf_transports::{History, Kind, Qos};

use super::{unique, Fixture};

static CLEANUP: Once = Once::new();

fn domain() -> String {
    format!("mwperftest{}", std::process::id())
}

extern "C" fn remove_domain_files() {
    let prefix = format!("{}_", domain());
    for entry in std::fs::read_dir("/dev/shm")
        .into_iter()
        .flatten()
        .flatten()
    {
        if entry.file_name().to_string_lossy().starts_with(&prefix) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

pub fn fixture() -> Fixture {
    // SAFETY: registers a plain function that only touches files, once per process.
    CLEANUP.call_once(|| unsafe {
        libc::atexit(remove_domain_files);
    });
    let mut fx = Fixture::simple(Kind::Iceoryx2, unique, &unique("nobody"));
    fx.qos = Qos {
        history: History::KeepLast(1000),
        ..Qos::default()
    };
    fx.options = vec![("domain".into(), domain())];
    fx
}
