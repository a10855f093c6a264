//! `mwperf-agent facts`: the host's facts for a result measured on a remote machine, as one JSON
//! object: HostFacts plus `machine` (uname -m) and `time_sync` (chrony, PTP daemons, the
//! kernel's NTP synchronisation flag).
//!
//! Why `machine` and `time_sync` stay here and are not HostFacts fields (so not in every agent
//! report): `time_sync` runs `chronyc` (a process start and a round trip to chronyd, up to its
//! 1 s timeout) and reads every /proc/<pid>/comm, which is neither cheap nor quiet at the end of
//! every measurement, and the figures belong to the host, not to one agent run: the control plane
//! asks once per host and run. `machine` is cheap but answers the same once-per-host question
//! (does the local binary fit the remote host), and a new HostFacts field changes the result
//! schema every report is validated against.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::Duration;

use mwperf_core::host::HostFacts;

pub fn run() -> std::process::ExitCode {
    let mut v = serde_json::to_value(HostFacts::collect()).unwrap_or_default();
    if let Some(o) = v.as_object_mut() {
        o.insert("machine".into(), machine().into());
        o.insert("time_sync".into(), time_sync());
    }
    println!("{v}");
    std::process::ExitCode::SUCCESS
}

/// uname -m, e.g. x86_64 or aarch64.
pub fn machine() -> String {
    // SAFETY: zeroed utsname is a valid out-parameter; the fields are NUL-terminated.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    if unsafe { libc::uname(&mut u) } != 0 {
        return std::env::consts::ARCH.to_string();
    }
    let bytes: Vec<u8> = u
        .machine
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8)
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

fn time_sync() -> serde_json::Value {
    let ptp: Vec<String> = ptp_daemons()
        .into_iter()
        .map(|d| format!("{d} running"))
        .collect();
    serde_json::json!({
        "chrony": chronyc_tracking().as_deref().and_then(parse_tracking),
        "ptp": if ptp.is_empty() { serde_json::Value::Null } else { ptp.into() },
        "ntp_synchronized": ntp_synchronized(),
    })
}

/// The kernel's view (adjtimex): synchronised when STA_UNSYNC is clear; None if the call fails.
fn ntp_synchronized() -> Option<bool> {
    // SAFETY: modes = 0 only reads; zeroed timex is a valid argument.
    let mut t: libc::timex = unsafe { std::mem::zeroed() };
    let state = unsafe { libc::ntp_adjtime(&mut t) };
    (state != -1).then_some(t.status & libc::STA_UNSYNC == 0)
}

/// ptp4l and phc2sys among the running processes' names.
fn ptp_daemons() -> Vec<&'static str> {
    let mut found = Vec::new();
    if let Ok(dir) = std::fs::read_dir("/proc") {
        for e in dir.flatten() {
            if !e
                .file_name()
                .to_str()
                .is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit()))
            {
                continue;
            }
            let comm = std::fs::read_to_string(e.path().join("comm")).unwrap_or_default();
            for d in ["ptp4l", "phc2sys"] {
                if comm.trim() == d && !found.contains(&d) {
                    found.push(d);
                }
            }
        }
    }
    found.sort_by_key(|d| if *d == "ptp4l" { 0 } else { 1 });
    found
}

/// `chronyc -n -c tracking`, given at most 1 s; None when chronyc is absent, fails or hangs.
fn chronyc_tracking() -> Option<String> {
    let mut child = Command::new("chronyc")
        .args(["-n", "-c", "tracking"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let mut stdout = child.stdout.take()?;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stdout.read_to_string(&mut s);
        let _ = tx.send(s);
    });
    let out = rx.recv_timeout(Duration::from_secs(1)).ok();
    if out.is_none() {
        let _ = child.kill();
    }
    let status = child.wait().ok()?;
    out.filter(|_| status.success())
}

/// The CSV line of `chronyc -c tracking`: reference id, reference address, stratum, reference
/// time, system time offset (s), last offset (s), RMS offset (s), frequency (ppm), residual
/// frequency (ppm), skew (ppm), root delay (s), root dispersion (s), update interval (s), leap
/// status. Signs as chronyc prints them in CSV mode.
pub fn parse_tracking(text: &str) -> Option<serde_json::Value> {
    let f: Vec<&str> = text.lines().next()?.trim().split(',').collect();
    if f.len() < 14 {
        return None;
    }
    let num = |i: usize| f[i].trim().parse::<f64>().ok();
    Some(serde_json::json!({
        "reference_id": f[0],
        "reference": f[1],
        "stratum": f[2].trim().parse::<u32>().ok(),
        "system_time_offset_s": num(4),
        "last_offset_s": num(5),
        "rms_offset_s": num(6),
        "frequency_ppm": num(7),
        "leap_status": f[13].trim(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_chronyc_csv_tracking() {
        let line = "C0A80001,192.168.0.1,3,1700000000.123456789,-0.000012345,0.000001234,0.000020000,-12.345,0.001,0.020,0.012345,0.000456,64.5,Normal\n";
        let v = parse_tracking(line).unwrap();
        assert_eq!(v["reference"], "192.168.0.1");
        assert_eq!(v["stratum"], 3);
        assert_eq!(v["system_time_offset_s"], -0.000012345);
        assert_eq!(v["rms_offset_s"], 0.00002);
        assert_eq!(v["frequency_ppm"], -12.345);
        assert_eq!(v["leap_status"], "Normal");
        assert_eq!(parse_tracking(""), None);
        assert_eq!(parse_tracking("506 Cannot talk to daemon"), None);
    }

    #[test]
    fn machine_is_unames() {
        assert!(!machine().is_empty());
        #[cfg(target_arch = "x86_64")]
        assert_eq!(machine(), "x86_64");
    }
}
