//! The supervisor's control protocol (mwperf-supervise): control lines on its stdin, the child
//! output lines it forwards, and what it reads back from the system (lease files, /proc stat
//! lines, cgroup files, --cpu-pin lists).
//!
//! Invariants: every line the supervisor writes is one line (exactly one '\n', at its end) that
//! starts with its kind; an ignored control line is quoted in at most 200 characters; a CPU list
//! is sorted, without duplicates, within CPU_SETSIZE.
use mwperf_supervise::{cgroup, lease, protocol};

fn one_line(line: &[u8], kind: &str) {
    assert!(line.starts_with(kind.as_bytes()));
    assert_eq!(line.iter().filter(|&&b| b == b'\n').count(), 1);
    assert_eq!(line.last(), Some(&b'\n'));
    assert!(!line.contains(&b'\r'));
}

fn main() {
    afl::fuzz!(|data: &[u8]| {
        // stdin: control lines
        for raw in data.split_inclusive(|&b| b == b'\n') {
            let text = String::from_utf8_lossy(raw);
            match protocol::parse_control(&text) {
                protocol::Control::Invalid(shown) => {
                    assert!(shown.chars().count() <= 200);
                    one_line(
                        &protocol::notice(&format!("ignored control line {shown:?}")),
                        "err",
                    );
                }
                protocol::Control::Signal(sig) => {
                    assert!([libc::SIGINT, libc::SIGTERM, libc::SIGKILL].contains(&sig))
                }
                protocol::Control::Sample => {}
            }
            // a child's output line, forwarded
            one_line(&protocol::child_line("out", raw), "out ");
        }
        let text = String::from_utf8_lossy(data);
        one_line(&protocol::line("err", &text), "err ");
        let mut sha = protocol::Sha256::default();
        sha.update(data);
        assert_eq!(sha.hex().len(), 64);
        // files and arguments
        let _ = lease::Lease::parse(&text);
        let _ = lease::Stat::parse(&text);
        let _ = cgroup::parse_cpu_stat(&text);
        let mut words = text.splitn(3, '\n');
        let (a, b) = (words.next().unwrap_or(""), words.next());
        let _ = cgroup::parse_quota_pct(1, a, b);
        let _ = cgroup::parse_quota_pct(2, a, b);
        if let Ok(cpus) = cgroup::cpus_arg(&text) {
            assert!(cpus.windows(2).all(|w| w[0] < w[1]));
            assert!(cpus.iter().all(|&c| c < libc::CPU_SETSIZE as usize));
        }
        let _ = mwperf_supervise::send_name(&text);
    });
}
