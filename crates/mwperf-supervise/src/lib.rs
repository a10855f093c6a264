//! mwperf-supervise, the agent's `supervise` and `supervise-clean` subcommands (one binary goes to
//! a real host; this crate keeps the supervisor out of the measuring code).
//!
//! `supervise`: run one program as a child and be the only thing the control plane talks to over
//! an SSH channel; `supervise-clean`: remove what a dead supervisor left behind. The line protocol
//! is in docs/agent-contract.md ("supervise / supervise-clean / facts").
//!
//! Threads: one reads the child's stdout, one its stderr (blocking reads; they never write to the
//! child, so the supervisor is never on the measured path); one reads stdin (the control
//! channel); one waits for the child's exit; one waits for SIGINT/SIGTERM/SIGHUP (blocked in
//! every thread, taken with sigwait); one writes stdout. Lines go through an unbounded channel to
//! the writer, so a slow SSH channel never blocks the child's writes (it costs memory instead).
//! The main thread spawned the child and stays alive until the end: PR_SET_PDEATHSIG fires when
//! the *thread* that forked the child exits.
//!
//! The child is observed with waitid(WNOWAIT) and reaped only at the very end, so its pid (which
//! is also its process group id) cannot be handed to another process while signals are sent to
//! the group.

pub mod cgroup;
pub mod clean;
pub mod lease;
pub mod local;
pub mod protocol;
pub mod usage;

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

use clap::Args;
use lease::Lease;
use protocol::{line, notice, Control};

/// `supervise`: the scratch folder, the files to send back, the grace period and the program.
#[derive(Args, Debug)]
pub struct SuperviseArgs {
    /// Scratch folder: created (mode 0700, parents too; must be absent or empty), the child's
    /// working directory, holds lease.json; removed entirely at the end.
    #[arg(long, value_parser = scratch)]
    pub scratch: PathBuf,
    /// File (relative to --scratch) to send back after the child exits (repeatable).
    #[arg(long = "send", value_parser = send_name)]
    pub send: Vec<String>,
    /// After SIGTERM to the child's process group (stdin closed, or the supervisor signalled),
    /// wait this long before SIGKILL.
    #[arg(long, default_value = "3s", value_parser = grace)]
    pub grace: u64,
    /// Run the child in the cgroup `mwperf/NAME` of this host's cpu hierarchy (created, or joined
    /// when another supervisor made it; removed by the last one to end), limited by --cpu-quota.
    #[arg(long, value_parser = cgroup::name_arg, requires = "cpu_quota")]
    pub cgroup: Option<String>,
    /// The cgroup's CPU quota in % of one CPU (50 = half a CPU, 150 = one and a half); with --cgroup.
    #[arg(long = "cpu-quota", value_parser = cgroup::quota_arg, requires = "cgroup")]
    pub cpu_quota: Option<f64>,
    /// Pin the child (and every thread it starts) to these CPUs: 1, 0-1, 0,2-3.
    #[arg(long = "cpu-pin", value_parser = cpus)]
    pub cpu_pin: Option<Cpus>,
    /// The program and its arguments, after `--`.
    #[arg(last = true, required = true, num_args = 1.., value_name = "PROGRAM")]
    pub command: Vec<String>,
}

/// `supervise-clean`: the folder whose leased subfolders to check.
#[derive(Args, Debug)]
pub struct CleanArgs {
    /// Folder holding the supervisors' scratch folders (a missing folder is not an error).
    #[arg(long)]
    pub root: PathBuf,
}

fn scratch(s: &str) -> Result<PathBuf, String> {
    let p = PathBuf::from(s);
    if s.is_empty() || p.parent().is_none() || p.file_name().is_none() {
        return Err(format!(
            "'{s}' is not a folder the supervisor may create and remove"
        ));
    }
    Ok(p)
}

/// A --send name: relative, inside the folder, and one protocol word (no whitespace).
pub fn send_name(s: &str) -> Result<String, String> {
    let p = Path::new(s);
    let inside = p
        .components()
        .all(|c| matches!(c, std::path::Component::Normal(_)));
    if s.is_empty() || !inside || s.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(format!(
            "'{s}' is not a file name relative to --scratch (no '..', no leading '/', no spaces)"
        ));
    }
    Ok(s.to_string())
}

/// A --cpu-pin list (a type of its own: clap would take a Vec as a repeated flag).
#[derive(Debug, Clone)]
pub struct Cpus(pub Vec<usize>);

fn cpus(s: &str) -> Result<Cpus, String> {
    cgroup::cpus_arg(s).map(Cpus)
}

fn grace(s: &str) -> Result<u64, String> {
    let ns = mwperf_core::units::parse_duration_ns(s)?;
    if ns > 3_600_000_000_000 {
        return Err(format!("{s} is longer than an hour"));
    }
    Ok(ns)
}

/// The `exit` line's value when a CPU limit could not be applied (the child never ran).
pub const LIMIT_REFUSED: i32 = 126;

/// The child's command: its own process group, a clean signal state, killed with the supervisor,
/// and (between fork and exec) in the cgroup whose `cgroup.procs` is `procs` and on `pin`'s CPUs.
fn command(
    a: &SuperviseArgs,
    dir: &Path,
    procs: Option<std::os::fd::RawFd>,
    pin: Option<libc::cpu_set_t>,
) -> Command {
    let parent = std::process::id() as libc::pid_t;
    let mut cmd = Command::new(&a.command[0]);
    cmd.args(&a.command[1..])
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    // SAFETY: only async-signal-safe calls between fork and exec (the pid is formatted on the stack).
    unsafe {
        cmd.pre_exec(move || {
            let mut empty: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut empty);
            libc::pthread_sigmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut());
            for s in [
                libc::SIGINT,
                libc::SIGTERM,
                libc::SIGHUP,
                libc::SIGQUIT,
                libc::SIGPIPE,
            ] {
                libc::signal(s, libc::SIG_DFL);
            }
            libc::prctl(
                libc::PR_SET_PDEATHSIG,
                libc::SIGKILL as libc::c_ulong,
                0,
                0,
                0,
            );
            if libc::getppid() != parent {
                libc::_exit(127); // the supervisor died before the death signal was armed
            }
            if let Some(fd) = procs {
                let (mut buf, mut i, mut n) = ([0u8; 12], 12usize, libc::getpid() as u32);
                loop {
                    i -= 1;
                    buf[i] = b'0' + (n % 10) as u8;
                    n /= 10;
                    if n == 0 {
                        break;
                    }
                }
                if libc::write(fd, buf[i..].as_ptr().cast(), 12 - i) < 0 {
                    let errno = std::io::Error::last_os_error()
                        .raw_os_error()
                        .unwrap_or(libc::EIO);
                    return Err(std::io::Error::from_raw_os_error(cgroup::JOIN_ERR + errno));
                }
            }
            if let Some(set) = &pin {
                if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), set) != 0 {
                    let errno = std::io::Error::last_os_error()
                        .raw_os_error()
                        .unwrap_or(libc::EINVAL);
                    return Err(std::io::Error::from_raw_os_error(cgroup::PIN_ERR + errno));
                }
            }
            Ok(())
        });
    }
    cmd
}

enum Ev {
    Control(String),
    StdinEof,
    Signal(i32),
    Exited(i32),
    ReaderDone,
}

/// The stdout writer: every line whole, in the order sent.
enum Msg {
    Line(Vec<u8>),
    Done,
}

fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

fn write_out(out: &mut impl Write, bytes: &[u8]) -> bool {
    out.write_all(bytes).and_then(|_| out.flush()).is_ok()
}

/// Blocks SIGINT/SIGTERM/SIGHUP for sigwait. Their disposition is set to default first: a
/// signal ignored (SIG_IGN, as a non-interactive ssh session or `nohup` may start us) is discarded
/// when sent and would never reach sigwait.
fn block_stop_signals() -> libc::sigset_t {
    // SAFETY: sigset manipulation on a local set; signal() and pthread_sigmask of this thread,
    // before any other thread exists.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for s in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            libc::sigaddset(&mut set, s);
        }
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        // Blocked first, so no window in which the default action would end us.
        for s in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            libc::signal(s, libc::SIG_DFL);
        }
        set
    }
}

pub fn run(a: &SuperviseArgs) -> ExitCode {
    let dir = &a.scratch;
    match std::fs::read_dir(dir).map(|mut entries| entries.next().is_some()) {
        Ok(true) => {
            eprintln!("mwperf-agent: error: --scratch '{}': exists and is not empty (the supervisor removes it at the end)", dir.display());
            return ExitCode::from(2);
        }
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => {
            eprintln!("mwperf-agent: error: --scratch '{}': {e}", dir.display());
            return ExitCode::from(2);
        }
    }
    let made = std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .and_then(|_| std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)));
    let mut lease = Lease {
        supervisor_pid: std::process::id() as i32,
        supervisor_start: lease::own_start(),
        child_pid: None,
        child_start: None,
        started_unix_s: unix_now(),
        cgroup: None,
    };
    if let Err(e) = made.and_then(|_| lease.write(dir)) {
        eprintln!("mwperf-agent: error: --scratch '{}': {e}", dir.display());
        let _ = std::fs::remove_dir_all(dir);
        return ExitCode::from(1);
    }

    // Before any thread exists, so every thread inherits the mask (the child gets a clean one).
    let stop_set = block_stop_signals();
    let (tx, rx) = mpsc::channel::<Ev>();
    let (otx, orx) = mpsc::channel::<Msg>();
    let writer = std::thread::spawn(move || {
        let mut out = std::io::stdout().lock();
        let mut ok = true;
        while let Ok(Msg::Line(l)) = orx.recv() {
            ok = ok && write_out(&mut out, &l); // after a write error: drain and drop
        }
    });
    {
        let tx = tx.clone();
        std::thread::spawn(move || loop {
            let mut sig: libc::c_int = 0;
            // SAFETY: waits for one of the blocked signals of the set built above.
            if unsafe { libc::sigwait(&stop_set, &mut sig) } == 0
                && tx.send(Ev::Signal(sig)).is_err()
            {
                break;
            }
        });
    }

    // The CPU limits: set up before the child exists; one that does not take means no child.
    let refuse = |msg: &str, group: Option<&Path>| {
        let _ = otx.send(Msg::Line(notice(msg)));
        let _ = otx.send(Msg::Line(line("exit", &LIMIT_REFUSED.to_string())));
        let _ = otx.send(Msg::Done);
        if let Some(g) = group {
            cgroup::remove_if_empty(g, Duration::from_secs(1));
        }
        let _ = std::fs::remove_dir_all(dir);
    };
    let hierarchy = match &a.cgroup {
        None => None,
        Some(_) => match cgroup::detect() {
            Some(h) => Some(h),
            None => {
                refuse("--cpu-quota: no cgroup hierarchy with the cpu controller is mounted on this host; mount cgroup2 (or cgroup v1 with -o cpu) there, or drop the CPU limit for this host", None);
                let _ = writer.join();
                return ExitCode::SUCCESS;
            }
        },
    };
    if let (Some(name), Some(h), Some(pct)) = (&a.cgroup, &hierarchy, a.cpu_quota) {
        let most = 100.0 * cgroup::affinity(0).map_or(1, |c| c.len()) as f64;
        if pct > most {
            refuse(&format!("--cpu-quota: {pct}% is more than this host's {most}% ({} CPUs); ask for at most {most}%", most / 100.0), None);
            let _ = writer.join();
            return ExitCode::SUCCESS;
        }
        lease.cgroup = Some(cgroup::group_path(h, name).display().to_string());
        if let Err(e) = lease.write(dir) {
            let _ = otx.send(Msg::Line(notice(&format!(
                "cannot update {}: {e}",
                dir.join(lease::FILE).display()
            ))));
        }
    }
    if let Some(cpus) = &a.cpu_pin {
        let usable = cgroup::affinity(0).unwrap_or_default();
        if let Some(c) = cpus.0.iter().find(|c| !usable.contains(c)) {
            let list: Vec<String> = usable.iter().map(|c| c.to_string()).collect();
            refuse(&format!("--cpu-pin: CPU {c} is not available on this host (available: {}); pin to those", list.join(",")), None);
            let _ = writer.join();
            return ExitCode::SUCCESS;
        }
    }
    let pin = a.cpu_pin.as_ref().map(|c| cgroup::cpu_set(&c.0));
    let mut attempts = 0;
    let (mut child, group) = loop {
        attempts += 1;
        let group = match (&a.cgroup, &hierarchy, a.cpu_quota) {
            (Some(name), Some(h), Some(pct)) => match cgroup::setup(h, name, pct) {
                Ok(g) => Some(g),
                Err(msg) => {
                    let path = lease.cgroup.clone().map(PathBuf::from);
                    refuse(&msg, path.as_deref());
                    let _ = writer.join();
                    return ExitCode::SUCCESS;
                }
            },
            _ => None,
        };
        match command(a, dir, group.as_ref().map(|g| g.procs_fd()), pin).spawn() {
            Ok(c) => break (c, group),
            Err(e) => {
                let code = e.raw_os_error().unwrap_or(0);
                let path = group.as_ref().map(|g| g.path.clone());
                if (cgroup::JOIN_ERR..cgroup::PIN_ERR).contains(&code)
                    && attempts < 3
                    && path.as_ref().is_some_and(|p| !p.exists())
                {
                    continue; // the group's last member of this run removed it meanwhile: make it again
                }
                let msg = if code >= cgroup::PIN_ERR {
                    format!(
                        "--cpu-pin: cannot pin {} to CPUs {:?}: {}; pin to CPUs this host has",
                        a.command[0],
                        a.cpu_pin.as_ref().map(|c| &c.0).unwrap_or(&Vec::new()),
                        std::io::Error::from_raw_os_error(code - cgroup::PIN_ERR)
                    )
                } else if code >= cgroup::JOIN_ERR {
                    format!("--cpu-quota: {} could not join {}: {}; limiting CPU needs root on this host (connect as root) or drop the CPU limit for this host", a.command[0], path.as_ref().map_or(String::new(), |p| p.display().to_string()), std::io::Error::from_raw_os_error(code - cgroup::JOIN_ERR))
                } else {
                    let _ = otx.send(Msg::Line(notice(&format!(
                        "cannot start {}: {e}",
                        a.command[0]
                    ))));
                    let _ = otx.send(Msg::Line(line("exit", "127")));
                    let _ = otx.send(Msg::Done);
                    let _ = writer.join();
                    if let Some(p) = &path {
                        cgroup::remove_if_empty(p, Duration::from_secs(1));
                    }
                    let _ = std::fs::remove_dir_all(dir);
                    return ExitCode::SUCCESS;
                };
                refuse(&msg, path.as_deref());
                let _ = writer.join();
                return ExitCode::SUCCESS;
            }
        }
    };
    let pid = child.id() as i32;
    let child_start = lease::Stat::of(pid).map_or(0, |s| s.start_ticks);
    lease.child_pid = Some(pid);
    lease.child_start = Some(child_start);
    if let Err(e) = lease.write(dir) {
        let _ = otx.send(Msg::Line(notice(&format!(
            "cannot update {}: {e}",
            dir.join(lease::FILE).display()
        ))));
    }
    let _ = otx.send(Msg::Line(line("started", &pid.to_string())));
    if group.is_some() || a.cpu_pin.is_some() {
        let cpus = cgroup::affinity(pid)
            .or_else(|| a.cpu_pin.as_ref().map(|c| c.0.clone()))
            .unwrap_or_default();
        let _ = otx.send(Msg::Line(line(
            "cgroup",
            &cgroup::report(group.as_ref(), &cpus).to_string(),
        )));
    }
    let group_path = group.as_ref().map(|g| g.path.clone());
    drop(group); // closes cgroup.procs

    for (kind, pipe) in [
        (
            "out",
            child
                .stdout
                .take()
                .map(|p| Box::new(p) as Box<dyn Read + Send>),
        ),
        (
            "err",
            child
                .stderr
                .take()
                .map(|p| Box::new(p) as Box<dyn Read + Send>),
        ),
    ] {
        let (tx, otx) = (tx.clone(), otx.clone());
        std::thread::spawn(move || {
            if let Some(p) = pipe {
                forward(kind, p, &otx);
            }
            let _ = tx.send(Ev::ReaderDone);
        });
    }
    {
        let tx = tx.clone();
        std::thread::spawn(move || {
            let _ = tx.send(Ev::Exited(wait_nowait(pid)));
        });
    }
    {
        let tx = tx.clone();
        std::thread::spawn(move || {
            let mut stdin = std::io::stdin().lock();
            let mut buf = Vec::new();
            loop {
                buf.clear();
                match (&mut stdin).take(4096).read_until(b'\n', &mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        if tx
                            .send(Ev::Control(String::from_utf8_lossy(&buf).into_owned()))
                            .is_err()
                        {
                            return;
                        }
                    }
                }
            }
            let _ = tx.send(Ev::StdinEof);
        });
    }
    drop(tx);

    let mut sup = Supervisor {
        pid,
        child_start,
        cgroup: group_path.clone(),
        grace: Duration::from_nanos(a.grace),
        rx,
        otx,
        readers_done: 0,
        exited: None,
        stopping: false,
    };
    sup.main_loop();
    if sup.stopping {
        sup.stop();
    } else {
        sup.end_group();
    }
    sup.wait_readers(Duration::from_secs(1));
    let code = sup.exited.unwrap_or(-libc::SIGKILL);
    let Supervisor { otx, stopping, .. } = sup;
    let _ = otx.send(Msg::Done);
    let _ = writer.join();
    let mut out = std::io::stdout().lock();
    if !stopping {
        for name in &a.send {
            send_file(&mut out, dir, name);
        }
    }
    let _ = child.wait(); // reap: the pid is free again only now
    if let Some(p) = &group_path {
        // The group's figures at the end, then the group removed if this was its last member.
        let throttling = cgroup::throttling(p);
        let removed = cgroup::remove_if_empty(p, Duration::from_secs(1));
        write_out(&mut out, &line("cgroupend", &serde_json::json!({"path": p.display().to_string(), "throttling": throttling, "removed": removed}).to_string()));
    }
    write_out(&mut out, &line("exit", &code.to_string()));
    let _ = std::fs::remove_dir_all(dir);
    ExitCode::SUCCESS
}

/// Blocks until the child has exited, without reaping it; the `exit` line's value.
fn wait_nowait(pid: i32) -> i32 {
    loop {
        // SAFETY: zeroed siginfo is a valid out-parameter; waitid on our own child.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        let r = unsafe {
            libc::waitid(
                libc::P_PID,
                pid as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOWAIT,
            )
        };
        if r == 0 {
            return unsafe { protocol::exit_value(info.si_code, info.si_status()) };
        }
        if std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return -libc::SIGKILL;
        }
    }
}

/// Forwards the child's lines; a line longer than 64 KiB is forwarded in pieces.
fn forward(kind: &str, pipe: Box<dyn Read + Send>, otx: &Sender<Msg>) {
    let mut r = BufReader::with_capacity(64 * 1024, pipe);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        match (&mut r).take(64 * 1024).read_until(b'\n', &mut buf) {
            Ok(0) => return,
            Ok(_) => {
                let _ = otx.send(Msg::Line(protocol::child_line(kind, &buf)));
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return,
        }
    }
}

/// `file NAME <base64>` lines, then `fileend NAME <bytes> <sha256>`; `nofile NAME` when it is not
/// a regular file (a symlink is not followed). A read error mid-file: a notice and `nofile`
/// (the reader drops chunks not followed by `fileend`).
fn send_file(out: &mut impl Write, dir: &Path, name: &str) {
    let path = dir.join(name);
    let regular = std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_file());
    let file = if regular {
        std::fs::File::open(&path).ok()
    } else {
        None
    };
    let Some(mut file) = file else {
        write_out(out, &line("nofile", name));
        return;
    };
    let (mut sha, mut total, mut chunk) = (
        protocol::Sha256::default(),
        0u64,
        vec![0u8; protocol::CHUNK],
    );
    loop {
        let mut n = 0;
        while n < chunk.len() {
            match file.read(&mut chunk[n..]) {
                Ok(0) => break,
                Ok(k) => n += k,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    write_out(out, &notice(&format!("--send {name}: read error: {e}")));
                    write_out(out, &line("nofile", name));
                    return;
                }
            }
        }
        if n == 0 {
            break;
        }
        sha.update(&chunk[..n]);
        total += n as u64;
        write_out(
            out,
            &line(
                "file",
                &format!("{name} {}", mwperf_core::base64::encode(&chunk[..n])),
            ),
        );
        if n < chunk.len() {
            break;
        }
    }
    write_out(
        out,
        &line("fileend", &format!("{name} {total} {}", sha.hex())),
    );
}

struct Supervisor {
    pid: i32,
    /// the cgroup the child runs in (--cgroup): its throttling goes into `usage`
    cgroup: Option<PathBuf>,
    child_start: u64,
    grace: Duration,
    rx: Receiver<Ev>,
    otx: Sender<Msg>,
    readers_done: u32,
    exited: Option<i32>,
    /// stdin closed or the supervisor was signalled: end the child, send no files.
    stopping: bool,
}

impl Supervisor {
    fn send(&self, l: Vec<u8>) {
        let _ = self.otx.send(Msg::Line(l));
    }

    fn signal_group(&self, sig: i32) {
        // SAFETY: the group's leader is our unreaped child, so its id still names that group.
        unsafe { libc::kill(-self.pid, sig) };
    }

    /// Handles one event (control lines are answered at any time, signals only reach a running child).
    fn handle(&mut self, ev: Ev) {
        match ev {
            Ev::Control(text) => match protocol::parse_control(&text) {
                Control::Signal(sig) if self.exited.is_none() => self.signal_group(sig),
                Control::Signal(_) => {}
                Control::Sample => {
                    let mut figures = usage::sample(self.pid);
                    if let Some(p) = &self.cgroup {
                        figures["throttling"] = cgroup::throttling(p);
                    }
                    self.send(line("usage", &figures.to_string()));
                }
                Control::Invalid(l) => self.send(notice(&format!("ignored control line '{l}'"))),
            },
            Ev::StdinEof => self.stopping = true,
            Ev::Signal(sig) => {
                self.send(notice(&format!("got signal {sig}: stopping the child")));
                self.stopping = true;
            }
            Ev::Exited(code) => self.exited = Some(code),
            Ev::ReaderDone => self.readers_done += 1,
        }
    }

    /// Until the child has exited or a stop was asked for.
    fn main_loop(&mut self) {
        while self.exited.is_none() && !self.stopping {
            match self.rx.recv() {
                Ok(ev) => self.handle(ev),
                Err(_) => return,
            }
        }
    }

    /// Waits for events until `done` or `deadline`; false on timeout.
    fn wait_until(&mut self, deadline: Instant, done: impl Fn(&Self) -> bool) -> bool {
        while !done(self) {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.rx.recv_timeout(left) {
                Ok(ev) => self.handle(ev),
                Err(RecvTimeoutError::Timeout) => return false,
                Err(RecvTimeoutError::Disconnected) => return done(self),
            }
        }
        true
    }

    /// SIGTERM the group, wait up to the grace period for the child and the rest of its group,
    /// then SIGKILL the group.
    fn stop(&mut self) {
        let deadline = Instant::now() + self.grace;
        self.signal_group(libc::SIGTERM);
        self.wait_until(deadline, |s| s.exited.is_some());
        while Instant::now() < deadline
            && !lease::group_members(self.pid, self.child_start).is_empty()
        {
            // Only while ending a run, never while the child runs.
            let _ = self.wait_until(Instant::now() + Duration::from_millis(20), |_| false);
        }
        self.signal_group(libc::SIGKILL);
        self.wait_until(Instant::now() + Duration::from_secs(5), |s| {
            s.exited.is_some()
        });
    }

    /// The child has exited: whatever it left in its process group (a daemon's children, a
    /// background job) gets SIGTERM, then SIGKILL after the grace period.
    fn end_group(&mut self) {
        let left = lease::group_members(self.pid, self.child_start);
        if left.is_empty() {
            return;
        }
        self.send(notice(&format!(
            "{} process(es) left in the child's process group after it exited: terminating them",
            left.len()
        )));
        self.signal_group(libc::SIGTERM);
        let deadline = Instant::now() + self.grace;
        while Instant::now() < deadline
            && !lease::group_members(self.pid, self.child_start).is_empty()
        {
            // Only while ending a run, never while the child runs.
            let _ = self.wait_until(Instant::now() + Duration::from_millis(20), |_| false);
        }
        self.signal_group(libc::SIGKILL);
    }

    /// Until both pipe readers reached end of file (a process outside the group may still hold
    /// a pipe: then give up after `limit`).
    fn wait_readers(&mut self, limit: Duration) {
        if !self.wait_until(Instant::now() + limit, |s| s.readers_done >= 2) {
            self.send(notice("the child's output pipes are still open (held by a process outside its group): not waiting for them"));
        }
    }
}
