//! The agent's own resource use (getrusage of the whole process).

use serde::Serialize;

#[derive(Serialize, Debug, Clone, Default)]
pub struct ProcessUsage {
    pub pid: u32,
    pub wall_s: f64,
    pub cpu_user_s: f64,
    pub cpu_sys_s: f64,
    pub max_rss_kib: u64,
    pub voluntary_ctx_switches: u64,
    pub involuntary_ctx_switches: u64,
}

impl ProcessUsage {
    /// Usage since process start; `wall_s` is supplied by the caller.
    pub fn now(wall_s: f64) -> Self {
        // SAFETY: zeroed rusage is a valid out-parameter.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
        let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
        ProcessUsage {
            pid: std::process::id(),
            wall_s,
            cpu_user_s: tv(ru.ru_utime),
            cpu_sys_s: tv(ru.ru_stime),
            max_rss_kib: ru.ru_maxrss.max(0) as u64,
            voluntary_ctx_switches: ru.ru_nvcsw.max(0) as u64,
            involuntary_ctx_switches: ru.ru_nivcsw.max(0) as u64,
        }
    }
}
