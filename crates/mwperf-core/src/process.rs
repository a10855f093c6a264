//! The agent's own resource use: CPU times and context switches from getrusage, memory from the
//! process's own /proc/self/status.
//!
//! getrusage's `ru_maxrss` is not the process's own: Linux keeps the high-water mark across
//! execve and starts a forked child from its parent's, so an agent spawned by the Python control
//! plane reported the control plane's peak. VmHWM belongs to the address space the agent has
//! since its exec, so it is the agent's peak alone. The resident set is split by kind at the
//! moment of the report (RssAnon = heap and stacks, RssFile = mapped files and code, RssShmem =
//! shared memory such as iceoryx2's or Cyclone's segments, which is not the process's heap).

use serde::Serialize;

#[derive(Serialize, Debug, Clone, Default)]
pub struct ProcessUsage {
    pub pid: u32,
    pub wall_s: f64,
    pub cpu_user_s: f64,
    pub cpu_sys_s: f64,
    /// Peak resident set size of this process (VmHWM), KiB.
    pub max_rss_kib: u64,
    /// Where the figure comes from: "VmHWM" (the process's own) or "ru_maxrss" when /proc is not
    /// readable (then it may be a parent's high-water mark).
    pub rss_source: &'static str,
    /// Resident anonymous memory (heap, stacks) when the report is written, KiB.
    pub rss_anon_kib: Option<u64>,
    /// Resident file-backed memory (code, mapped files), KiB.
    pub rss_file_kib: Option<u64>,
    /// Resident shared memory (shm segments, tmpfs mappings), KiB.
    pub rss_shmem_kib: Option<u64>,
    pub voluntary_ctx_switches: u64,
    pub involuntary_ctx_switches: u64,
    /// The shared libraries mapped when the report is written (file names, in load order):
    /// what the transport pulled in (libddsc, ...), for `mwperf footprint`.
    pub libraries: Vec<String>,
}

/// The shared objects (`*.so*`) in a /proc/<pid>/maps text, by file name, first mapping first.
pub fn mapped_libraries(maps: &str) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    for line in maps.lines() {
        let Some(path) = line.split_whitespace().nth(5) else {
            continue;
        };
        let name = path.rsplit('/').next().unwrap_or(path);
        if path.starts_with('/') && name.contains(".so") && !found.iter().any(|f| f == name) {
            found.push(name.to_string());
        }
    }
    found
}

/// The memory lines of a /proc/<pid>/status text, in KiB.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct StatusMemory {
    pub hwm_kib: Option<u64>,
    pub anon_kib: Option<u64>,
    pub file_kib: Option<u64>,
    pub shmem_kib: Option<u64>,
}

impl StatusMemory {
    /// Parse the `VmHWM`, `RssAnon`, `RssFile` and `RssShmem` lines; absent lines stay None.
    pub fn parse(status: &str) -> Self {
        let mut out = StatusMemory::default();
        for line in status.lines() {
            let Some((key, rest)) = line.split_once(':') else {
                continue;
            };
            let slot = match key {
                "VmHWM" => &mut out.hwm_kib,
                "RssAnon" => &mut out.anon_kib,
                "RssFile" => &mut out.file_kib,
                "RssShmem" => &mut out.shmem_kib,
                _ => continue,
            };
            *slot = rest.split_whitespace().next().and_then(|v| v.parse().ok());
        }
        out
    }

    /// This process's own figures (all None if /proc is not mounted).
    pub fn own() -> Self {
        std::fs::read_to_string("/proc/self/status")
            .map(|t| Self::parse(&t))
            .unwrap_or_default()
    }
}

impl ProcessUsage {
    /// Usage since process start; `wall_s` is supplied by the caller.
    pub fn now(wall_s: f64) -> Self {
        // SAFETY: zeroed rusage is a valid out-parameter.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
        let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
        let memory = StatusMemory::own();
        let (max_rss_kib, rss_source) = match memory.hwm_kib {
            Some(hwm) => (hwm, "VmHWM"),
            None => (ru.ru_maxrss.max(0) as u64, "ru_maxrss"),
        };
        ProcessUsage {
            pid: std::process::id(),
            wall_s,
            cpu_user_s: tv(ru.ru_utime),
            cpu_sys_s: tv(ru.ru_stime),
            max_rss_kib,
            rss_source,
            rss_anon_kib: memory.anon_kib,
            rss_file_kib: memory.file_kib,
            rss_shmem_kib: memory.shmem_kib,
            voluntary_ctx_switches: ru.ru_nvcsw.max(0) as u64,
            involuntary_ctx_switches: ru.ru_nivcsw.max(0) as u64,
            libraries: std::fs::read_to_string("/proc/self/maps")
                .map(|m| mapped_libraries(&m))
                .unwrap_or_default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mapped_libraries_are_named_once_in_load_order() {
        let maps = "55d0-55e0 r-xp 0 08:01 1 /usr/bin/mwperf-agent\n\
                    7f00-7f10 r--p 0 08:01 2 /usr/lib/x86_64-linux-gnu/libddsc.so.0.10.2\n\
                    7f10-7f20 r-xp 0 08:01 2 /usr/lib/x86_64-linux-gnu/libddsc.so.0.10.2\n\
                    7f20-7f30 rw-s 0 00:05 3 /dev/shm/iox2_segment\n\
                    7f30-7f40 r-xp 0 08:01 4 /usr/lib/x86_64-linux-gnu/libc.so.6\n\
                    7ffd-7ffe rw-p 0 00:00 0 [stack]\n";
        assert_eq!(
            mapped_libraries(maps),
            vec!["libddsc.so.0.10.2".to_string(), "libc.so.6".to_string()]
        );
    }

    #[test]
    fn parses_the_memory_lines_of_proc_status() {
        let text = "Name:\tx\nVmPeak:\t  9000 kB\nVmHWM:\t    6016 kB\nVmRSS:\t 5000 kB\n\
                    RssAnon:\t    1200 kB\nRssFile:\t    3700 kB\nRssShmem:\t     100 kB\n";
        let m = StatusMemory::parse(text);
        assert_eq!(
            m,
            StatusMemory {
                hwm_kib: Some(6016),
                anon_kib: Some(1200),
                file_kib: Some(3700),
                shmem_kib: Some(100)
            }
        );
        assert_eq!(StatusMemory::parse("Name:\tx\n"), StatusMemory::default());
    }

    #[test]
    fn own_peak_is_at_least_the_current_resident_set() {
        let m = StatusMemory::own();
        let hwm = m.hwm_kib.expect("/proc/self/status has VmHWM on Linux");
        assert!(hwm >= m.anon_kib.unwrap() + m.file_kib.unwrap() + m.shmem_kib.unwrap() - 4);
    }
}
