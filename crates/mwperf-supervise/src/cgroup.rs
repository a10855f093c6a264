//! `supervise --cgroup NAME --cpu-quota PCT [--cpu-pin CPUS]`: the child runs in the cgroup
//! `mwperf/NAME` of this host's cpu hierarchy, limited to PCT % of one CPU, and/or pinned.
//!
//! The hierarchy is read from /proc/self/mountinfo (as python/mwperf/emulation/cgroups.py does):
//! cgroup v2 (`cpu.max`, the cpu controller enabled in the parents' `cgroup.subtree_control`) when
//! its root offers the cpu controller, else the v1 hierarchy mounted with `cpu`
//! (`cpu.cfs_period_us` / `cpu.cfs_quota_us`). Supervisors of one run on one host may name the
//! same group (a host's shared quota): the first creates it, the others join it, and the last one
//! to end removes it (rmdir of a cgroup that still has members fails with EBUSY: fine).
//!
//! The child joins between fork and exec: the supervisor opens `cgroup.procs` first, the child
//! writes its own pid there (and calls sched_setaffinity), so the program and every thread it
//! starts are in the group from its first instruction. A failure there comes back through the
//! spawn error as an errno offset by [`JOIN_ERR`] / [`PIN_ERR`], so it is told apart from exec's.

use std::fs::File;
use std::io::Write;
use std::os::fd::{AsRawFd, RawFd};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The folder every mwperf cgroup lives in (shared with the control plane's local cgroups).
pub const PARENT: &str = "mwperf";
/// The CFS period, µs: the kernel's default; the quota is a share of it.
pub const PERIOD_US: u64 = 100_000;
/// A spawn error at or above this (below [`PIN_ERR`]) is "joining the cgroup failed with errno - JOIN_ERR".
pub const JOIN_ERR: i32 = 0x10000;
/// A spawn error at or above this is "sched_setaffinity failed with errno - PIN_ERR".
pub const PIN_ERR: i32 = 0x20000;

/// A mounted cgroup hierarchy.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Hierarchy {
    /// 1 or 2
    pub version: u8,
    pub mount: PathBuf,
    /// v1: the controllers bound to it; v2: those its root offers (`cgroup.controllers`).
    pub controllers: Vec<String>,
}

const V1_CONTROLLERS: &[&str] = &[
    "cpu",
    "cpuacct",
    "cpuset",
    "memory",
    "devices",
    "freezer",
    "blkio",
    "pids",
    "net_cls",
    "net_prio",
    "perf_event",
    "hugetlb",
    "rdma",
    "misc",
];

/// Every cgroup hierarchy in `mountinfo` (the text of /proc/self/mountinfo); `v2_controllers`
/// reads a cgroup2 mount's `cgroup.controllers`.
pub fn hierarchies(
    mountinfo: &str,
    v2_controllers: impl Fn(&Path) -> Vec<String>,
) -> Vec<Hierarchy> {
    let mut found = Vec::new();
    for l in mountinfo.lines() {
        let Some((before, after)) = l.split_once(" - ") else {
            continue;
        };
        let (fields, rest): (Vec<&str>, Vec<&str>) = (
            before.split_whitespace().collect(),
            after.split_whitespace().collect(),
        );
        if fields.len() < 5 || rest.len() < 3 {
            continue;
        }
        let mount = PathBuf::from(fields[4].replace("\\040", " "));
        match rest[0] {
            "cgroup2" => {
                let controllers = v2_controllers(&mount);
                found.push(Hierarchy {
                    version: 2,
                    mount,
                    controllers,
                });
            }
            "cgroup" => {
                let controllers = rest[2]
                    .split(',')
                    .filter(|o| V1_CONTROLLERS.contains(o))
                    .map(String::from)
                    .collect();
                found.push(Hierarchy {
                    version: 1,
                    mount,
                    controllers,
                });
            }
            _ => {}
        }
    }
    found
}

/// The hierarchy with the cpu controller (v2 preferred), None when there is none.
pub fn cpu_hierarchy(
    mountinfo: &str,
    v2_controllers: impl Fn(&Path) -> Vec<String>,
) -> Option<Hierarchy> {
    let mut all: Vec<Hierarchy> = hierarchies(mountinfo, v2_controllers)
        .into_iter()
        .filter(|h| h.controllers.iter().any(|c| c == "cpu"))
        .collect();
    all.sort_by_key(|h| std::cmp::Reverse(h.version));
    all.into_iter().next()
}

/// This host's cpu hierarchy.
pub fn detect() -> Option<Hierarchy> {
    let text = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    cpu_hierarchy(&text, |m| {
        std::fs::read_to_string(m.join("cgroup.controllers"))
            .map(|t| t.split_whitespace().map(String::from).collect())
            .unwrap_or_default()
    })
}

/// `<mount>/mwperf/<name>`.
pub fn group_path(h: &Hierarchy, name: &str) -> PathBuf {
    h.mount.join(PARENT).join(name)
}

/// The quota in µs per [`PERIOD_US`] for `pct` % of one CPU (at least 1 ms, as the kernel wants).
pub fn quota_us(pct: f64) -> u64 {
    ((pct / 100.0 * PERIOD_US as f64).round() as u64).max(1000)
}

/// The files that set the quota, in the order to write them.
pub fn quota_files(version: u8, quota_us: u64) -> Vec<(&'static str, String)> {
    if version == 2 {
        vec![("cpu.max", format!("{quota_us} {PERIOD_US}"))]
    } else {
        vec![
            ("cpu.cfs_period_us", PERIOD_US.to_string()),
            ("cpu.cfs_quota_us", quota_us.to_string()),
        ]
    }
}

/// The quota in % of one CPU from what the kernel reads back: v2 `cpu.max` ("max 100000" = no
/// limit: None), v1 `cpu.cfs_quota_us` and `cpu.cfs_period_us` (-1 = no limit).
pub fn parse_quota_pct(version: u8, max_or_quota: &str, period: Option<&str>) -> Option<f64> {
    let (quota, period) = if version == 2 {
        let mut w = max_or_quota.split_whitespace();
        (
            w.next()?.parse::<i64>().ok()?,
            w.next()?.parse::<i64>().ok()?,
        )
    } else {
        (
            max_or_quota.trim().parse::<i64>().ok()?,
            period?.trim().parse::<i64>().ok()?,
        )
    };
    (quota > 0 && period > 0).then(|| (100_000.0 * quota as f64 / period as f64).round() / 1000.0)
}

/// The throttling figures of a `cpu.stat` (v1 `throttled_time` in ns, v2 `throttled_usec`), in
/// the control plane's shape: `{"periods","throttled_periods","throttled_s"}`.
pub fn parse_cpu_stat(text: &str) -> serde_json::Value {
    let get = |key: &str| {
        text.lines().find_map(|l| {
            l.split_once(' ')
                .filter(|(k, _)| *k == key)
                .and_then(|(_, v)| v.trim().parse::<u64>().ok())
        })
    };
    let throttled_s = get("throttled_usec")
        .map(|u| u as f64 / 1e6)
        .or_else(|| get("throttled_time").map(|n| n as f64 / 1e9));
    serde_json::json!({"periods": get("nr_periods"), "throttled_periods": get("nr_throttled"), "throttled_s": throttled_s.map(|s| (s * 1e6).round() / 1e6)})
}

/// A `--cgroup` name: one folder name (letters, digits, `.`, `_`, `-`; not starting with `.`).
pub fn name_arg(s: &str) -> Result<String, String> {
    let ok = !s.is_empty()
        && s.len() <= 100
        && !s.starts_with('.')
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c));
    ok.then(|| s.to_string()).ok_or_else(|| {
        format!("'{s}' is not a cgroup name (letters, digits, '.', '_', '-'; at most 100)")
    })
}

/// A `--cpu-quota`: a share of one CPU in % (`50` or `50%`; above 100 = more than one CPU).
pub fn quota_arg(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .trim()
        .trim_end_matches('%')
        .parse()
        .map_err(|_| format!("'{s}' is not a percentage of one CPU such as 50"))?;
    if !(1.0..=100_000.0).contains(&v) {
        return Err(format!("{s} is outside 1 to 100000 (% of one CPU)"));
    }
    Ok(v)
}

/// A `--cpu-pin`: CPU numbers as taskset takes them (`1`, `0-1`, `0,2-3`).
pub fn cpus_arg(s: &str) -> Result<Vec<usize>, String> {
    let bad = || format!("'{s}' is not a CPU list such as 1, 0-1 or 0,2-3");
    let mut cpus = Vec::new();
    for part in s.split(',') {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        let (a, b): (usize, usize) = (
            a.trim().parse().map_err(|_| bad())?,
            b.trim().parse().map_err(|_| bad())?,
        );
        if b < a || b >= libc::CPU_SETSIZE as usize {
            return Err(bad());
        }
        cpus.extend(a..=b);
    }
    cpus.sort_unstable();
    cpus.dedup();
    Ok(cpus)
}

/// The CPUs `pid` (0 = this thread) may run on.
pub fn affinity(pid: i32) -> Option<Vec<usize>> {
    // SAFETY: a zeroed cpu_set_t is valid; the kernel fills it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(pid, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return None;
        }
        Some(
            (0..libc::CPU_SETSIZE as usize)
                .filter(|&c| libc::CPU_ISSET(c, &set))
                .collect(),
        )
    }
}

/// The cpu_set_t for `cpus` (built before fork: the child only passes it to the kernel).
pub fn cpu_set(cpus: &[usize]) -> libc::cpu_set_t {
    // SAFETY: a zeroed cpu_set_t is valid; CPU_SET only sets bits below CPU_SETSIZE (checked by cpus_arg).
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for &c in cpus {
            libc::CPU_SET(c, &mut set);
        }
        set
    }
}

/// A cgroup the child will join: its folder and its `cgroup.procs`, opened (close-on-exec).
pub struct Group {
    pub hierarchy: Hierarchy,
    pub path: PathBuf,
    pub quota_pct: Option<f64>,
    procs: File,
}

impl Group {
    /// The descriptor the child writes its pid to.
    pub fn procs_fd(&self) -> RawFd {
        self.procs.as_raw_fd()
    }
}

/// Writes a cgroup file as `echo TEXT > FILE` does (created and truncated: a no-op on cgroupfs,
/// where the kernel made the file; a plain folder standing in for a hierarchy gets the file).
fn write(path: &Path, text: &str) -> std::io::Result<()> {
    std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(path)?
        .write_all(text.as_bytes())
}

/// Who the hint after a refused cgroup speaks to: a remote host's supervisor (reached over SSH)
/// or the control plane on its own machine (`supervise-cgroup`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Where {
    Remote,
    Local,
}

/// What to change, after the kernel's reason, for a cgroup that cannot be set up.
fn hint(e: &std::io::Error, at: Where) -> &'static str {
    let denied = matches!(
        e.raw_os_error(),
        Some(libc::EACCES) | Some(libc::EPERM) | Some(libc::EROFS)
    );
    match (at, denied) {
        (Where::Remote, true) => "; limiting CPU needs root on this host (or a delegated cgroup): connect as root (ssh://root@...) or drop the CPU limit for this host",
        (Where::Remote, false) => "; check the host's cgroup mounts (mwperf doctor there) or drop the CPU limit for this host",
        (Where::Local, true) => "; limiting CPU needs root (or a delegated cgroup); run mwperf as root",
        (Where::Local, false) => "; check the cgroup mounts ('mwperf doctor') or drop --cpu-quota",
    }
}

/// Creates (or joins) `mwperf/<name>` with `pct` % of one CPU, its `cgroup.procs` opened for the
/// child to join; the error is one line saying what to change.
pub fn setup(h: &Hierarchy, name: &str, pct: f64) -> Result<Group, String> {
    let (path, procs) = make(h, name, pct, Where::Remote, true)?;
    Ok(Group {
        hierarchy: h.clone(),
        quota_pct: read_quota(h.version, &path),
        path,
        procs: procs.expect("make opens cgroup.procs when asked to"),
    })
}

/// Creates (or joins) `mwperf/<name>` with `pct` % of one CPU for a process the caller puts in
/// it itself (`supervise-cgroup create`: the control plane's local cgroups); its path.
pub fn create(h: &Hierarchy, name: &str, pct: f64) -> Result<PathBuf, String> {
    make(h, name, pct, Where::Local, false).map(|(path, _)| path)
}

/// The group's folder made (parents too, v2's cpu controller enabled on the way) and its quota
/// written; with `join` its `cgroup.procs` opened.
fn make(
    h: &Hierarchy,
    name: &str,
    pct: f64,
    at: Where,
    join: bool,
) -> Result<(PathBuf, Option<File>), String> {
    let path = group_path(h, name);
    let quota = quota_us(pct);
    let failed = |what: &str, p: &Path, e: std::io::Error| {
        format!(
            "--cpu-quota: cannot {what} {}: {e}{}",
            p.display(),
            hint(&e, at)
        )
    };
    // Another run's supervisor may remove the empty parent meanwhile, or the group's last member
    // (of this run) remove the group: then make them again.
    let mut attempt = 0;
    loop {
        attempt += 1;
        let r: Result<(PathBuf, Option<File>), (String, bool)> = (|| {
            let parent = h.mount.join(PARENT);
            if h.version == 2 {
                enable_cpu(&h.mount).map_err(|e| {
                    (
                        failed(
                            "enable the cpu controller in",
                            &h.mount.join("cgroup.subtree_control"),
                            e,
                        ),
                        false,
                    )
                })?;
            }
            match std::fs::create_dir(&parent) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err((failed("create", &parent, e), false)),
            }
            if h.version == 2 {
                enable_cpu(&parent).map_err(|e| {
                    let gone = e.kind() == std::io::ErrorKind::NotFound;
                    (
                        failed(
                            "enable the cpu controller in",
                            &parent.join("cgroup.subtree_control"),
                            e,
                        ),
                        gone,
                    )
                })?;
            }
            match std::fs::create_dir(&path) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => {
                    let gone = e.kind() == std::io::ErrorKind::NotFound;
                    return Err((failed("create", &path, e), gone));
                }
            }
            for (file, text) in quota_files(h.version, quota) {
                write(&path.join(file), &text).map_err(|e| {
                    let gone = e.kind() == std::io::ErrorKind::NotFound;
                    (
                        format!(
                            "--cpu-quota: cannot write '{text}' to {}: {e}{}",
                            path.join(file).display(),
                            hint(&e, at)
                        ),
                        gone,
                    )
                })?;
            }
            if !join {
                return Ok((path.clone(), None));
            }
            let procs = std::fs::OpenOptions::new()
                .write(true)
                .open(path.join("cgroup.procs"))
                .map_err(|e| {
                    let gone = e.kind() == std::io::ErrorKind::NotFound;
                    (failed("open", &path.join("cgroup.procs"), e), gone)
                })?;
            Ok((path.clone(), Some(procs)))
        })();
        match r {
            Ok(g) => return Ok(g),
            Err((_, true)) if attempt < 5 => continue,
            Err((msg, _)) => return Err(msg),
        }
    }
}

/// v2: offer the cpu controller to `folder`'s children.
fn enable_cpu(folder: &Path) -> std::io::Result<()> {
    let control = folder.join("cgroup.subtree_control");
    if std::fs::read_to_string(&control)?
        .split_whitespace()
        .any(|c| c == "cpu")
    {
        return Ok(());
    }
    write(&control, "+cpu")
}

/// cgroup v1 with RT group scheduling: give the group `path` a SCHED_FIFO budget of `fraction` of
/// each CPU (its tasks get no real-time time at all otherwise), at most 1/`siblings` of the
/// parent's (the kernel refuses children whose budgets add up to more); the parent gets the
/// root's budget first when it has none. The fraction set.
pub fn rt_budget(mount: &Path, path: &Path, fraction: f64, siblings: u32) -> std::io::Result<f64> {
    let read = |p: PathBuf| -> std::io::Result<i64> {
        let text = std::fs::read_to_string(&p)?;
        text.trim().parse().map_err(|_| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("{}: '{}' is not a number", p.display(), text.trim()),
            )
        })
    };
    // The kernel's refusal names the file and the value it refused.
    let put = |p: PathBuf, v: i64| {
        write(&p, &v.to_string()).map_err(|e| {
            std::io::Error::new(e.kind(), format!("{e} writing '{v}' to {}", p.display()))
        })
    };
    let parent = path.parent().unwrap_or(path);
    let period = read(mount.join("cpu.rt_period_us"))?;
    let mut runtime = read(mount.join("cpu.rt_runtime_us"))?;
    if runtime < 0 {
        runtime = period;
    }
    if read(parent.join("cpu.rt_runtime_us"))? == 0 {
        put(parent.join("cpu.rt_period_us"), period)?;
        put(parent.join("cpu.rt_runtime_us"), runtime)?;
    }
    let share = fraction.min(runtime as f64 / period as f64 / siblings.max(1) as f64);
    put(path.join("cpu.rt_period_us"), PERIOD_US as i64)?;
    put(
        path.join("cpu.rt_runtime_us"),
        (share * PERIOD_US as f64) as i64,
    )?;
    Ok(share)
}

/// The quota in effect in `path` (None: no limit or unreadable).
pub fn read_quota(version: u8, path: &Path) -> Option<f64> {
    if version == 2 {
        parse_quota_pct(
            2,
            &std::fs::read_to_string(path.join("cpu.max")).ok()?,
            None,
        )
    } else {
        let q = std::fs::read_to_string(path.join("cpu.cfs_quota_us")).ok()?;
        parse_quota_pct(
            1,
            &q,
            std::fs::read_to_string(path.join("cpu.cfs_period_us"))
                .ok()
                .as_deref(),
        )
    }
}

/// The group's throttling so far (`cpu.stat`), null when unreadable.
pub fn throttling(path: &Path) -> serde_json::Value {
    std::fs::read_to_string(path.join("cpu.stat"))
        .map_or(serde_json::Value::Null, |t| parse_cpu_stat(&t))
}

/// The live pids in the cgroup `path`.
pub fn members(path: &Path) -> Vec<i32> {
    std::fs::read_to_string(path.join("cgroup.procs"))
        .map(|t| t.lines().filter_map(|l| l.trim().parse().ok()).collect())
        .unwrap_or_default()
}

/// Removes the cgroup `path` when it has no members (others of the run may still be in it:
/// then it stays for the last of them); the empty `mwperf` parent too. A group whose
/// `cgroup.procs` is empty but that the kernel still calls busy (an exiting task) is retried
/// for up to `patience`. True when it is gone.
pub fn remove_if_empty(path: &Path, patience: Duration) -> bool {
    let deadline = Instant::now() + patience;
    loop {
        match std::fs::remove_dir(path) {
            Ok(()) => break,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => break,
            Err(_) if members(path).is_empty() && Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(20))
            }
            Err(_) => return false,
        }
    }
    if let Some(parent) = path
        .parent()
        .filter(|p| p.file_name().is_some_and(|n| n == PARENT))
    {
        let _ = std::fs::remove_dir(parent); // busy with other groups: fine
    }
    true
}

/// The `cgroup` line's JSON: what took effect.
pub fn report(group: Option<&Group>, cpus: &[usize]) -> serde_json::Value {
    serde_json::json!({
        "path": group.map(|g| g.path.display().to_string()),
        "version": group.map(|g| g.hierarchy.version),
        "period_us": group.map(|_| PERIOD_US),
        "quota_pct": group.and_then(|g| g.quota_pct),
        "cpus": cpus,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const V1: &str = "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct
34 31 0:31 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset
40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
";
    const V2: &str = "26 1 0:23 / / rw - ext4 /dev/sda1 rw
29 23 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot
";

    #[test]
    fn detects_v1_v2_and_hybrid_from_mountinfo() {
        let none = |_: &Path| Vec::new();
        let cpu = |_: &Path| vec!["cpuset".to_string(), "cpu".to_string(), "io".to_string()];
        // Hybrid with an empty unified hierarchy: the v1 cpu hierarchy.
        let h = cpu_hierarchy(V1, none).unwrap();
        assert_eq!(
            (h.version, h.mount.as_path()),
            (1, Path::new("/sys/fs/cgroup/cpu,cpuacct"))
        );
        assert_eq!(h.controllers, ["cpu", "cpuacct"]);
        assert_eq!(hierarchies(V1, none).len(), 4);
        // A unified hierarchy offering cpu wins.
        assert_eq!(cpu_hierarchy(V1, cpu).unwrap().version, 2);
        let h = cpu_hierarchy(V2, cpu).unwrap();
        assert_eq!(
            (h.version, h.mount.as_path()),
            (2, Path::new("/sys/fs/cgroup"))
        );
        // v2 without the cpu controller, and no cgroup at all: none.
        assert_eq!(cpu_hierarchy(V2, none), None);
        assert_eq!(
            cpu_hierarchy("26 1 0:23 / / rw - ext4 /dev/sda1 rw\ngarbage\n", cpu),
            None
        );
        // An escaped space in the mount point.
        let odd = "40 31 0:37 / /mnt/my\\040cg rw - cgroup cgroup rw,cpu\n";
        assert_eq!(
            cpu_hierarchy(odd, none).unwrap().mount,
            PathBuf::from("/mnt/my cg")
        );
    }

    #[test]
    fn paths_and_quota_formatting() {
        let v1 = Hierarchy {
            version: 1,
            mount: "/sys/fs/cgroup/cpu".into(),
            controllers: vec!["cpu".into()],
        };
        assert_eq!(
            group_path(&v1, "mwp1a2b3c-b"),
            PathBuf::from("/sys/fs/cgroup/cpu/mwperf/mwp1a2b3c-b")
        );
        assert_eq!(quota_us(20.0), 20_000);
        assert_eq!(quota_us(150.0), 150_000);
        assert_eq!(quota_us(0.5), 1000);
        assert_eq!(
            quota_files(1, 20_000),
            vec![
                ("cpu.cfs_period_us", "100000".to_string()),
                ("cpu.cfs_quota_us", "20000".to_string())
            ]
        );
        assert_eq!(
            quota_files(2, 50_000),
            vec![("cpu.max", "50000 100000".to_string())]
        );
        assert_eq!(parse_quota_pct(2, "50000 100000\n", None), Some(50.0));
        assert_eq!(parse_quota_pct(2, "max 100000\n", None), None);
        assert_eq!(parse_quota_pct(1, "20000\n", Some("100000\n")), Some(20.0));
        assert_eq!(parse_quota_pct(1, "-1\n", Some("100000\n")), None);
        assert_eq!(parse_quota_pct(1, "33333", Some("100000")), Some(33.333));
    }

    #[test]
    fn cpu_stat_v1_and_v2() {
        let v1 = "nr_periods 120\nnr_throttled 80\nthrottled_time 1600000000\nnr_bursts 0\n";
        assert_eq!(
            parse_cpu_stat(v1),
            serde_json::json!({"periods": 120, "throttled_periods": 80, "throttled_s": 1.6})
        );
        let v2 = "usage_usec 400000\nuser_usec 1\nsystem_usec 2\nnr_periods 20\nnr_throttled 19\nthrottled_usec 1500000\n";
        assert_eq!(
            parse_cpu_stat(v2),
            serde_json::json!({"periods": 20, "throttled_periods": 19, "throttled_s": 1.5})
        );
        assert_eq!(
            parse_cpu_stat(""),
            serde_json::json!({"periods": null, "throttled_periods": null, "throttled_s": null})
        );
    }

    /// A folder standing in for a hierarchy (a new cgroup's files are the kernel's; here the
    /// quota files are created by the writes).
    fn scratch(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("mwperf-cg-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(d.join(PARENT)).unwrap();
        d
    }

    #[test]
    fn create_writes_the_quota_per_version() {
        for version in [1u8, 2] {
            let d = scratch(&format!("v{version}"));
            std::fs::write(d.join("cgroup.subtree_control"), "memory\n").unwrap();
            std::fs::write(d.join(PARENT).join("cgroup.subtree_control"), "").unwrap();
            let h = Hierarchy {
                version,
                mount: d.clone(),
                controllers: vec!["cpu".into()],
            };
            let path = create(&h, "mwpabcdef-pong", 37.5).unwrap();
            assert_eq!(path, d.join("mwperf/mwpabcdef-pong"));
            let read = |f: &str| std::fs::read_to_string(path.join(f)).unwrap();
            if version == 2 {
                for f in [
                    d.join("cgroup.subtree_control"),
                    d.join("mwperf/cgroup.subtree_control"),
                ] {
                    assert_eq!(std::fs::read_to_string(f).unwrap(), "+cpu");
                }
                assert_eq!(read("cpu.max"), "37500 100000");
            } else {
                assert_eq!(read("cpu.cfs_period_us"), "100000");
                assert_eq!(read("cpu.cfs_quota_us"), "37500");
            }
            assert_eq!(read_quota(version, &path), Some(37.5));
            // Created again (another member of a host's group): joined, not an error.
            assert_eq!(create(&h, "mwpabcdef-pong", 37.5).unwrap(), path);
            std::fs::remove_dir_all(&d).unwrap();
        }
    }

    #[test]
    fn create_says_what_to_change() {
        let d = scratch("refused");
        let file = d.join("not-a-folder");
        std::fs::write(&file, "").unwrap();
        let h = Hierarchy {
            version: 1,
            mount: file.clone(),
            controllers: vec!["cpu".into()],
        };
        let e = create(&h, "mwpabcdef-pong", 50.0).unwrap_err();
        assert!(
            e.starts_with(&format!(
                "--cpu-quota: cannot create {}",
                file.join(PARENT).display()
            )),
            "{e}"
        );
        assert!(
            e.ends_with("; check the cgroup mounts ('mwperf doctor') or drop --cpu-quota"),
            "{e}"
        );
        let denied = std::io::Error::from_raw_os_error(libc::EACCES);
        assert!(hint(&denied, Where::Local).contains("run mwperf as root"));
        assert!(hint(&denied, Where::Remote).contains("connect as root"));
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn rt_budget_splits_the_parents_share() {
        let d = scratch("rt");
        std::fs::write(d.join("cpu.rt_period_us"), "1000000\n").unwrap();
        std::fs::write(d.join("cpu.rt_runtime_us"), "950000\n").unwrap();
        std::fs::write(d.join(PARENT).join("cpu.rt_runtime_us"), "0\n").unwrap();
        let g = d.join(PARENT).join("mwpabcdef-pong");
        std::fs::create_dir(&g).unwrap();
        // 30 % asked, 0.95 / 2 allowed: 30 %; the parent got the root's budget first.
        assert_eq!(rt_budget(&d, &g, 0.3, 2).unwrap(), 0.3);
        let read = |p: PathBuf| std::fs::read_to_string(p).unwrap();
        assert_eq!(read(d.join("mwperf/cpu.rt_runtime_us")), "950000");
        assert_eq!(read(d.join("mwperf/cpu.rt_period_us")), "1000000");
        assert_eq!(read(g.join("cpu.rt_period_us")), "100000");
        assert_eq!(read(g.join("cpu.rt_runtime_us")), "30000");
        // 80 % asked: held to the sibling's half of 95 %.
        assert_eq!(rt_budget(&d, &g, 0.8, 2).unwrap(), 0.475);
        assert_eq!(read(g.join("cpu.rt_runtime_us")), "47500");
        // Unlimited root (-1): the whole period.
        std::fs::write(d.join("cpu.rt_runtime_us"), "-1").unwrap();
        assert_eq!(rt_budget(&d, &g, 0.9, 1).unwrap(), 0.9);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn flags() {
        assert_eq!(quota_arg("20"), Ok(20.0));
        assert_eq!(quota_arg("20%"), Ok(20.0));
        assert!(quota_arg("0").is_err() && quota_arg("x").is_err() && quota_arg("").is_err());
        assert_eq!(cpus_arg("1"), Ok(vec![1]));
        assert_eq!(cpus_arg("0-2,5"), Ok(vec![0, 1, 2, 5]));
        assert!(
            cpus_arg("2-1").is_err()
                && cpus_arg("a").is_err()
                && cpus_arg("").is_err()
                && cpus_arg("99999").is_err()
        );
        assert!(name_arg("mwp1a2b3c-b").is_ok());
        for bad in ["", "..", ".x", "a/b", "a b", &"x".repeat(101)] {
            assert!(name_arg(bad).is_err(), "{bad}");
        }
    }
}
