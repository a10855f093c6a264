//! Fast DDS's /dev/shm leftovers: opening the first shared-memory endpoint of a process removes
//! a crashed run's (unmapped, older than STALE_AFTER) and spares a fresh one nobody mapped yet.
//! The clean-up happens once per process, and the other tests of this binary open Fast DDS
//! endpoints too: the test runs itself again in a process of its own.
#![cfg(feature = "fastdds")]

use std::path::Path;
use std::process::Command;
use std::time::{Duration, SystemTime};

use mwperf_transports::{open, Kind, Side, Spec};

#[test]
fn stale_leftovers_go_fresh_ones_stay() {
    const ALONE: &str = "MWPERF_TEST_FASTDDS_SHM_ALONE";
    if !Kind::FastDds.built() {
        return;
    }
    if std::env::var_os(ALONE).is_none() {
        let me = std::env::current_exe().expect("the test binary's path");
        let status = Command::new(me)
            .args([
                "--exact",
                "fastdds_shm::stale_leftovers_go_fresh_ones_stay",
                "--test-threads=1",
                "--nocapture",
            ])
            .env(ALONE, "1")
            .status()
            .expect("run the test binary again");
        assert!(status.success(), "in a process of its own: {status}");
        return;
    }
    let pid = std::process::id();
    let stale = Path::new("/dev/shm").join(format!("fastrtps_mwperftest_stale_{pid}"));
    let fresh = Path::new("/dev/shm").join(format!("fastrtps_mwperftest_fresh_{pid}"));
    let f = std::fs::File::create(&stale).unwrap();
    f.set_modified(SystemTime::now() - Duration::from_secs(3600))
        .unwrap();
    drop(f);
    std::fs::File::create(&fresh).unwrap();
    let domain = 1 + (pid + 50) % 200;
    let ep = open(
        Kind::FastDds,
        Side::Pong,
        &Spec::new(format!("{domain}/auto")),
    );
    let ep = match ep {
        Ok(ep) => ep,
        Err(e) if std::env::var_os("CI").is_none() && e.to_string().contains("not found") => {
            let _ = std::fs::remove_file(&fresh);
            let _ = std::fs::remove_file(&stale);
            eprintln!("skipped: {e}");
            return;
        }
        Err(e) => panic!("{e}"),
    };
    let stale_left = stale.exists();
    let fresh_left = fresh.exists();
    drop(ep);
    let _ = std::fs::remove_file(&fresh);
    let _ = std::fs::remove_file(&stale);
    assert!(
        !stale_left,
        "a stale, unmapped leftover survived the first open"
    );
    assert!(
        fresh_left,
        "a fresh entry (maybe another process's, not mapped yet) was removed"
    );
}
