//! `mwperf-agent supervise` and `supervise-clean` through the built binary: the line protocol,
//! a file's round trip, the control channel (signal, EOF), and the clean-up of what a SIGKILLed
//! supervisor left behind.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

const AGENT: &str = env!("CARGO_BIN_EXE_mwperf-agent");

/// A fresh folder under the system's temp dir, removed when dropped.
struct Tmp(PathBuf);

impl Tmp {
    fn new(tag: &str) -> Tmp {
        let p = std::env::temp_dir().join(format!("mwperf-supervise-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        Tmp(p)
    }
}

impl Drop for Tmp {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A running supervisor, killed when dropped (a failing assertion leaves nothing behind).
struct Sup {
    child: Child,
    stdin: Option<ChildStdin>,
    out: BufReader<ChildStdout>,
}

impl Drop for Sup {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Sup {
    fn start(args: &[&str]) -> Sup {
        Sup::start_with(Command::new(AGENT).args(args))
    }

    fn start_with(cmd: &mut Command) -> Sup {
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let out = BufReader::new(child.stdout.take().unwrap());
        Sup { child, stdin, out }
    }

    fn line(&mut self) -> String {
        let mut l = String::new();
        self.out.read_line(&mut l).unwrap();
        l.trim_end_matches('\n').to_string()
    }

    /// Lines until (and with) the first one starting with `prefix`.
    fn until(&mut self, prefix: &str) -> Vec<String> {
        let mut lines = Vec::new();
        loop {
            let l = self.line();
            assert!(!l.is_empty(), "end of output before '{prefix}': {lines:?}");
            let done = l.starts_with(prefix);
            lines.push(l);
            if done {
                return lines;
            }
        }
    }

    fn send(&mut self, cmd: &str) {
        writeln!(self.stdin.as_mut().unwrap(), "{cmd}").unwrap();
    }

    fn started_pid(&mut self) -> i32 {
        let l = self.line();
        l.strip_prefix("started ")
            .unwrap_or_else(|| panic!("first line {l:?}"))
            .parse()
            .unwrap()
    }
}

fn b64_decode(s: &str) -> Vec<u8> {
    let val = |c: u8| {
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
            .bytes()
            .position(|x| x == c)
            .unwrap() as u32
    };
    let mut out = Vec::new();
    for q in s.as_bytes().chunks(4) {
        let n = q
            .iter()
            .take_while(|&&c| c != b'=')
            .fold(0u32, |n, &c| n << 6 | val(c));
        let pad = q.iter().filter(|&&c| c == b'=').count();
        let n = n << (6 * pad);
        out.extend_from_slice(&[(n >> 16) as u8, (n >> 8) as u8, n as u8][..3 - pad]);
    }
    out
}

/// Field `n` (1-based) of /proc/<pid>/stat, None when the process is gone.
fn stat_field(pid: i32, n: usize) -> Option<String> {
    let t = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    t[t.rfind(')')? + 1..]
        .split_whitespace()
        .nth(n - 3)
        .map(String::from)
}

fn running(pid: i32) -> bool {
    stat_field(pid, 3).is_some_and(|s| s != "Z" && s != "X")
}

/// Live processes whose process group is `pgid`.
fn group(pgid: i32) -> Vec<i32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&p| running(p) && stat_field(p, 5).is_some_and(|g| g == pgid.to_string()))
        .collect()
}

fn wait_gone(pids: impl Fn() -> bool, limit: Duration) -> bool {
    let end = Instant::now() + limit;
    while Instant::now() < end {
        if !pids() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    !pids()
}

#[test]
fn supervise_forwards_lines_sends_files_and_removes_the_folder() {
    let tmp = Tmp::new("roundtrip");
    let dir = tmp.0.join("deep/run");
    let d = dir.to_str().unwrap();
    let mut s = Sup::start(&[
        "supervise",
        "--scratch",
        d,
        "--send",
        "x.json",
        "--send",
        "missing.csv",
        "--",
        "sh",
        "-c",
        "echo hi; echo oops >&2; echo data > x.json; printf 'no newline \\377'",
    ]);
    let pid = s.started_pid();
    assert!(pid > 0);
    let lines = s.until("exit ");
    assert!(s.line().is_empty(), "nothing after the exit line");
    assert!(s.child.wait().unwrap().success());
    assert!(lines.contains(&"out hi".to_string()), "{lines:?}");
    assert!(lines.contains(&"err oops".to_string()), "{lines:?}");
    assert!(
        lines.contains(&"out no newline \u{fffd}".to_string()),
        "{lines:?}"
    );
    // Files after every child line, then the exit line.
    let first_file = lines.iter().position(|l| l.starts_with("file")).unwrap();
    assert!(
        lines[first_file..]
            .iter()
            .all(|l| !l.starts_with("out ") && !l.starts_with("err ")),
        "{lines:?}"
    );
    let data: Vec<u8> = lines
        .iter()
        .filter_map(|l| l.strip_prefix("file x.json "))
        .flat_map(b64_decode)
        .collect();
    assert_eq!(data, b"data\n");
    let end = lines
        .iter()
        .find_map(|l| l.strip_prefix("fileend x.json "))
        .unwrap();
    assert_eq!(
        end, "5 6667b2d1aab6a00caa5aee5af8ad9f1465e567abf1c209d15727d57b3e8f6e5f",
        "sha256 of 'data\\n'"
    );
    assert!(
        lines.contains(&"nofile missing.csv".to_string()),
        "{lines:?}"
    );
    assert_eq!(lines.last().unwrap(), "exit 0");
    assert!(!dir.exists(), "the scratch folder is removed");
    assert!(
        dir.parent().unwrap().exists(),
        "only the scratch folder itself"
    );
}

#[test]
fn supervise_large_file_in_chunks_and_exit_code() {
    let tmp = Tmp::new("large");
    let d = tmp.0.join("run");
    let mut s = Sup::start(&[
        "supervise",
        "--scratch",
        d.to_str().unwrap(),
        "--send",
        "big.bin",
        "--",
        "sh",
        "-c",
        "head -c 200000 /dev/urandom > big.bin; cp big.bin ../copy.bin; exit 3",
    ]);
    s.started_pid();
    let lines = s.until("exit ");
    let chunks: Vec<&str> = lines
        .iter()
        .filter_map(|l| l.strip_prefix("file big.bin "))
        .collect();
    assert_eq!(chunks.len(), 5, "200000 bytes in 48 KiB chunks");
    assert!(chunks.iter().all(|c| c.len() <= 65536));
    let data: Vec<u8> = chunks.iter().flat_map(|c| b64_decode(c)).collect();
    assert_eq!(data, std::fs::read(tmp.0.join("copy.bin")).unwrap());
    let end = lines
        .iter()
        .find_map(|l| l.strip_prefix("fileend big.bin "))
        .unwrap();
    assert!(end.starts_with("200000 "), "{end}");
    if let Ok(o) = Command::new("sha256sum")
        .arg(tmp.0.join("copy.bin"))
        .output()
    {
        let want = String::from_utf8_lossy(&o.stdout)
            .split_whitespace()
            .next()
            .unwrap_or("")
            .to_string();
        assert_eq!(end.split(' ').nth(1).unwrap(), want);
    }
    assert_eq!(lines.last().unwrap(), "exit 3");
}

#[test]
fn supervise_eof_on_stdin_ends_the_child_within_grace() {
    let tmp = Tmp::new("eof");
    let d = tmp.0.join("run");
    // The second child ignores SIGTERM: it takes the SIGKILL after the grace period.
    for program in [
        &["sleep", "100"][..],
        &["sh", "-c", "trap '' TERM; sleep 100; sleep 100"][..],
    ] {
        let mut args = vec![
            "supervise",
            "--scratch",
            d.to_str().unwrap(),
            "--grace",
            "1s",
            "--",
        ];
        args.extend_from_slice(program);
        let mut s = Sup::start(&args);
        let pid = s.started_pid();
        let lease: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(d.join("lease.json")).unwrap()).unwrap();
        assert_eq!(lease["child_pid"], pid);
        assert_eq!(lease["supervisor_pid"], s.child.id());
        assert_eq!(
            lease["child_start"].as_u64().unwrap().to_string(),
            stat_field(pid, 22).unwrap()
        );
        assert!(lease["started_unix_s"].as_u64().unwrap() > 1_600_000_000);
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            std::fs::metadata(&d).unwrap().permissions().mode() & 0o777,
            0o700
        );
        std::thread::sleep(Duration::from_millis(100)); // the shell has started its sleep
        assert!(!group(pid).is_empty());
        let t0 = Instant::now();
        drop(s.stdin.take());
        let lines = s.until("exit ");
        s.child.wait().unwrap();
        let took = t0.elapsed();
        assert!(
            took < Duration::from_secs(2),
            "{program:?}: ended after {took:?} (grace 1 s)"
        );
        assert!(
            group(pid).is_empty(),
            "{program:?}: processes left in the child's group"
        );
        assert!(!running(pid));
        assert!(!d.exists());
        let want = if program[0] == "sleep" {
            "exit -15"
        } else {
            "exit -9"
        };
        assert_eq!(lines.last().unwrap(), want, "{lines:?}");
    }
}

#[test]
fn supervise_signal_int_reaches_the_child_even_when_started_with_it_ignored() {
    let tmp = Tmp::new("int");
    let d = tmp.0.join("run");
    let script = "trap 'echo got-int; exit 7' INT; echo ready; while :; do sleep 0.05; done";
    let mut s = Sup::start(&[
        "supervise",
        "--scratch",
        d.to_str().unwrap(),
        "--",
        "sh",
        "-c",
        script,
    ]);
    s.started_pid();
    s.until("out ready");
    s.send("signal KILLALL");
    s.send("sample");
    let l = s.until("usage ");
    assert!(
        l.contains(
            &"err mwperf-agent supervise: ignored control line 'signal KILLALL'".to_string()
        ),
        "{l:?}"
    );
    let usage: serde_json::Value =
        serde_json::from_str(l.last().unwrap().strip_prefix("usage ").unwrap()).unwrap();
    assert!(
        usage["cpu_user_s"].as_f64().is_some() && usage["peak_rss_kib"].as_u64().unwrap() > 0,
        "{usage}"
    );
    assert!(
        usage.get("rss_anon_kib").is_some()
            && usage.get("rss_shmem_kib").is_some()
            && usage.get("cpu_sys_s").is_some()
    );
    s.send("signal INT");
    let lines = s.until("exit ");
    assert!(lines.contains(&"out got-int".to_string()), "{lines:?}");
    assert_eq!(lines.last().unwrap(), "exit 7");
    assert!(s.child.wait().unwrap().success());

    // A supervisor started with SIGINT ignored (as a non-interactive ssh session may) still
    // gives its child the default disposition: the signal ends a plain `sleep`.
    let mut s = Sup::start_with(Command::new("sh").args([
        "-c",
        "trap '' INT; exec \"$0\" supervise --scratch \"$1\" -- sleep 100",
        AGENT,
        d.to_str().unwrap(),
    ]));
    s.started_pid();
    s.send("signal INT");
    assert_eq!(s.until("exit ").last().unwrap(), "exit -2");
}

#[test]
fn supervise_sigterm_to_the_supervisor_acts_like_eof() {
    let tmp = Tmp::new("term");
    let d = tmp.0.join("run");
    let mut s = Sup::start(&[
        "supervise",
        "--scratch",
        d.to_str().unwrap(),
        "--send",
        "x",
        "--",
        "sleep",
        "100",
    ]);
    let pid = s.started_pid();
    // SAFETY: signalling the supervisor we started.
    unsafe { libc::kill(s.child.id() as i32, libc::SIGTERM) };
    let lines = s.until("exit ");
    assert_eq!(lines.last().unwrap(), "exit -15", "{lines:?}");
    assert!(
        !lines
            .iter()
            .any(|l| l.starts_with("file") || l.starts_with("nofile")),
        "no files after a stop: {lines:?}"
    );
    s.child.wait().unwrap();
    assert!(!running(pid) && !d.exists());
}

#[test]
fn supervise_program_that_cannot_start_and_usage_errors() {
    let tmp = Tmp::new("nostart");
    let d = tmp.0.join("run");
    let mut s = Sup::start(&[
        "supervise",
        "--scratch",
        d.to_str().unwrap(),
        "--",
        "/nonexistent/program",
    ]);
    let lines = s.until("exit ");
    assert!(
        lines[0].starts_with("err mwperf-agent supervise: cannot start /nonexistent/program: "),
        "{lines:?}"
    );
    assert_eq!(lines, [lines[0].clone(), "exit 127".to_string()]);
    assert!(s.child.wait().unwrap().success());
    assert!(!d.exists(), "removed before the supervisor exits");
    for (args, flag) in [
        (&["--send", "../etc/passwd", "--", "true"][..], "--send"),
        (&["--grace", "soon", "--", "true"][..], "--grace"),
        (&["--send", "a b", "--", "true"][..], "--send"),
    ] {
        let o = Command::new(AGENT)
            .args(["supervise", "--scratch", d.to_str().unwrap()])
            .args(args)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(flag), "{err}");
    }
    std::fs::create_dir_all(d.join("keep")).unwrap();
    let o = Command::new(AGENT)
        .args(["supervise", "--scratch", d.to_str().unwrap(), "--", "true"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--scratch"));
    assert!(
        d.join("keep").exists(),
        "a folder that is not empty is not taken (nor removed)"
    );
}

fn write_lease(dir: &Path, lease: serde_json::Value) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("lease.json"), lease.to_string()).unwrap();
}

fn clean(root: &Path) -> serde_json::Value {
    let o = Command::new(AGENT)
        .args(["supervise-clean", "--root", root.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{o:?}");
    let text = String::from_utf8(o.stdout).unwrap();
    assert_eq!(text.lines().count(), 1, "{text}");
    serde_json::from_str(&text).unwrap()
}

#[test]
fn supervise_clean_kills_and_removes_what_a_sigkilled_supervisor_left() {
    let tmp = Tmp::new("clean");
    let root = tmp.0.join("runs");
    // A real supervisor, SIGKILLed: its child (sh) dies of PR_SET_PDEATHSIG, the `sleep 100` the
    // child started lives on in the child's process group.
    let mut s = Sup::start(&[
        "supervise",
        "--scratch",
        root.join("killed").to_str().unwrap(),
        "--",
        "sh",
        "-c",
        "sleep 100 & echo $!; wait",
    ]);
    let pid = s.started_pid();
    let sleeper: i32 = s.line().strip_prefix("out ").unwrap().parse().unwrap();
    s.child.kill().unwrap();
    s.child.wait().unwrap();
    assert!(
        wait_gone(|| running(pid), Duration::from_secs(2)),
        "the child died with its supervisor"
    );
    assert!(running(sleeper), "the grandchild outlived the supervisor");

    // A leftover whose child itself (`sleep 100`, its own group) still runs, its supervisor gone.
    let mut orphan = Command::new("sleep")
        .arg("100")
        .process_group(0)
        .spawn()
        .unwrap();
    let gone = Command::new("true").spawn().unwrap().id() as i32; // exits at once
    let opid = orphan.id() as i32;
    let ostart: u64 = stat_field(opid, 22).unwrap().parse().unwrap();
    write_lease(
        &root.join("orphan"),
        serde_json::json!({"supervisor_pid": gone, "supervisor_start": 1, "child_pid": opid, "child_start": ostart, "started_unix_s": 1}),
    );
    // A live supervisor (this test process): kept. A pid reused by another process (start time
    // differs): gone; its child fields name nothing alive, so nothing is killed.
    let own: u64 = stat_field(std::process::id() as i32, 22)
        .unwrap()
        .parse()
        .unwrap();
    write_lease(
        &root.join("live"),
        serde_json::json!({"supervisor_pid": std::process::id(), "supervisor_start": own, "started_unix_s": 1}),
    );
    write_lease(
        &root.join("reused"),
        serde_json::json!({"supervisor_pid": std::process::id(), "supervisor_start": own + 1, "child_pid": opid, "child_start": ostart + 1, "started_unix_s": 1}),
    );
    // Not ours (no lease), and a symlink to a folder outside the root with a dead lease.
    std::fs::create_dir_all(root.join("other")).unwrap();
    let outside = tmp.0.join("outside");
    write_lease(
        &outside,
        serde_json::json!({"supervisor_pid": gone, "supervisor_start": 1, "started_unix_s": 1}),
    );
    std::os::unix::fs::symlink(&outside, root.join("link")).unwrap();

    let v = clean(&root);
    let mut removed: Vec<&str> = v["removed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap())
        .collect();
    removed.sort();
    assert_eq!(removed, ["killed", "orphan", "reused"], "{v}");
    let mut killed: Vec<i64> = v["killed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_i64().unwrap())
        .collect();
    killed.sort();
    let mut want = vec![pid as i64, opid as i64];
    want.sort();
    assert_eq!(killed, want, "{v}");
    assert_eq!(v["kept"], 1, "{v}");
    assert!(
        wait_gone(|| running(sleeper), Duration::from_secs(2)),
        "the grandchild is killed"
    );
    let status = orphan.wait().unwrap();
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&status),
        Some(libc::SIGKILL)
    );
    assert!(
        root.join("live").exists()
            && root.join("other").exists()
            && outside.join("lease.json").exists()
    );
    assert!(!root.join("killed").exists() && !root.join("orphan").exists());

    // A missing root is not an error.
    let v = clean(&tmp.0.join("absent"));
    assert_eq!(
        v,
        serde_json::json!({"removed": [], "killed": [], "kept": 0, "cgroups": []})
    );
}

/// A cgroup a test names: whatever is left in it is killed and it is removed when dropped (a
/// failing assertion leaves nothing behind).
struct CgGuard(PathBuf);

impl Drop for CgGuard {
    fn drop(&mut self) {
        for _ in 0..100 {
            let procs = std::fs::read_to_string(self.0.join("cgroup.procs")).unwrap_or_default();
            for pid in procs.lines().filter_map(|l| l.trim().parse::<i32>().ok()) {
                // SAFETY: a process in the test's own cgroup.
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
            if std::fs::remove_dir(&self.0).is_ok() || !self.0.exists() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// The cpu hierarchy's mount and version, from /proc/self/mountinfo (v2 when it offers cpu).
fn cpu_mount() -> Option<(PathBuf, u8)> {
    let info = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let mut v1 = None;
    for l in info.lines() {
        let (before, after) = l.split_once(" - ")?;
        let (mount, rest): (&str, Vec<&str>) = (
            before.split_whitespace().nth(4)?,
            after.split_whitespace().collect(),
        );
        if rest[0] == "cgroup2"
            && std::fs::read_to_string(Path::new(mount).join("cgroup.controllers"))
                .is_ok_and(|c| c.split_whitespace().any(|x| x == "cpu"))
        {
            return Some((mount.into(), 2));
        }
        if rest[0] == "cgroup"
            && rest
                .get(2)
                .is_some_and(|o| o.split(',').any(|x| x == "cpu"))
        {
            v1 = Some((mount.into(), 1));
        }
    }
    v1
}

#[test]
fn supervise_cgroup_holds_the_child_and_is_gone_afterwards() {
    if !is_root() || cpu_mount().is_none() {
        eprintln!("skipped: --cgroup needs root and a cpu cgroup hierarchy");
        return;
    }
    let (mount, version) = cpu_mount().unwrap();
    let tmp = Tmp::new("cgroup");
    let name = format!("t-{}", std::process::id());
    let dir = tmp.0.join("w");
    let _guard = CgGuard(mount.join("mwperf").join(&name));
    let mut s = Sup::start(&[
        "supervise",
        "--scratch",
        dir.to_str().unwrap(),
        "--cgroup",
        &name,
        "--cpu-quota",
        "20",
        "--",
        "sh",
        "-c",
        "cat /proc/self/cgroup",
    ]);
    let _pid = s.started_pid();
    let l = s.line();
    let report: serde_json::Value =
        serde_json::from_str(l.strip_prefix("cgroup ").unwrap_or_else(|| panic!("{l}"))).unwrap();
    let path = mount.join("mwperf").join(&name);
    assert_eq!(report["path"], path.to_str().unwrap(), "{report}");
    assert_eq!(
        (
            report["quota_pct"].as_f64(),
            report["version"].as_u64(),
            report["period_us"].as_u64()
        ),
        (Some(20.0), Some(version as u64), Some(100_000))
    );
    assert!(!report["cpus"].as_array().unwrap().is_empty());
    let lines = s.until("exit ");
    let want = if version == 2 {
        format!("0::/mwperf/{name}")
    } else {
        format!("/mwperf/{name}")
    };
    assert!(
        lines.iter().any(|l| l.starts_with("out ")
            && l.ends_with(&want)
            && (version == 2 || l.contains("cpu"))),
        "{lines:?}"
    );
    let end: serde_json::Value = serde_json::from_str(
        lines
            .iter()
            .find_map(|l| l.strip_prefix("cgroupend "))
            .unwrap(),
    )
    .unwrap();
    assert_eq!(end["removed"], true, "{end}");
    assert_eq!(lines.last().unwrap(), "exit 0");
    assert!(!path.exists(), "the cgroup is removed");
    assert!(s.child.wait().unwrap().success());
    assert!(!dir.exists());
}

#[test]
fn supervise_cpu_limit_errors() {
    let tmp = Tmp::new("cgroup-err");
    let dir = tmp.0.join("w");
    // --cgroup and --cpu-quota need each other: a usage error.
    let o = Command::new(AGENT)
        .args([
            "supervise",
            "--scratch",
            dir.to_str().unwrap(),
            "--cgroup",
            "x",
            "--",
            "true",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    assert!(String::from_utf8_lossy(&o.stderr).contains("--cpu-quota"));
    // A CPU this host does not have: one line saying so, `exit 126`, the program never runs.
    let o = Command::new(AGENT)
        .args([
            "supervise",
            "--scratch",
            dir.to_str().unwrap(),
            "--cpu-pin",
            "1000",
            "--",
            "touch",
            "ran",
        ])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let out = String::from_utf8(o.stdout).unwrap();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert!(
        lines[0].starts_with("err mwperf-agent supervise: --cpu-pin: CPU 1000 is not available"),
        "{out}"
    );
    assert_eq!(lines[1], "exit 126");
    assert!(!dir.exists());
}

#[test]
fn supervise_clean_removes_a_dead_supervisors_cgroup() {
    if !is_root() || cpu_mount().is_none() {
        eprintln!("skipped: --cgroup needs root and a cpu cgroup hierarchy");
        return;
    }
    let (mount, _) = cpu_mount().unwrap();
    let tmp = Tmp::new("cgroup-clean");
    let root = tmp.0.join("runs");
    let name = format!("c-{}", std::process::id());
    let path = mount.join("mwperf").join(&name);
    let _guard = CgGuard(path.clone());
    // The child starts a process in a session of its own: it outlives the SIGKILLed supervisor
    // and its process group, but not its cgroup.
    let mut s = Sup::start(&[
        "supervise",
        "--scratch",
        root.join("k").to_str().unwrap(),
        "--cgroup",
        &name,
        "--cpu-quota",
        "50",
        "--",
        "sh",
        "-c",
        "setsid sleep 100 & echo $!; wait",
    ]);
    s.started_pid();
    s.until("cgroup ");
    let sleeper: i32 = s.line().strip_prefix("out ").unwrap().parse().unwrap();
    s.child.kill().unwrap();
    s.child.wait().unwrap();
    std::thread::sleep(Duration::from_millis(200));
    assert!(running(sleeper) && path.exists());
    let v = clean(&root);
    assert_eq!(
        v["cgroups"],
        serde_json::json!([path.to_str().unwrap()]),
        "{v}"
    );
    assert!(wait_gone(|| running(sleeper), Duration::from_secs(2)));
    assert!(!path.exists() && !root.join("k").exists());
}

#[test]
fn version_line_lists_transports() {
    let o = Command::new(AGENT).arg("--version").output().unwrap();
    let v = String::from_utf8(o.stdout).unwrap();
    assert_eq!(v.lines().count(), 1, "{v}");
    assert!(
        v.starts_with("mwperf-agent ")
            && v.contains(" (git ")
            && v.contains(") transports: udp,tcp,uds"),
        "{v}"
    );
}

#[test]
fn facts_prints_one_json_object() {
    let o = Command::new(AGENT).arg("facts").output().unwrap();
    assert!(o.status.success());
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    for k in [
        "hostname",
        "kernel",
        "cpu_model",
        "cores",
        "governor",
        "clocksource",
        "cpuidle_driver",
        "machine",
    ] {
        assert!(v.get(k).is_some(), "{k} in {v}");
    }
    let ts = &v["time_sync"];
    assert!(
        ts.get("chrony").is_some()
            && ts.get("ptp").is_some()
            && ts["ntp_synchronized"].is_boolean(),
        "{v}"
    );
}
