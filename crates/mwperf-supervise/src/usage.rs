//! The `usage` reply to `sample`: the child's own CPU time and memory, from /proc/<pid>/stat and
//! /proc/<pid>/status (not its descendants'; a figure that cannot be read is null).

use super::lease::Stat;
use mwperf_core::process::StatusMemory;

pub fn sample(pid: i32) -> serde_json::Value {
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    let hz = if hz > 0 { hz as f64 } else { 100.0 };
    let stat = Stat::of(pid);
    let mem = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .map(|t| StatusMemory::parse(&t))
        .unwrap_or_default();
    json(
        stat.as_ref()
            .map(|s| (s.utime_ticks as f64 / hz, s.stime_ticks as f64 / hz)),
        mem,
    )
}

fn json(cpu: Option<(f64, f64)>, mem: StatusMemory) -> serde_json::Value {
    serde_json::json!({
        "cpu_user_s": cpu.map(|c| c.0),
        "cpu_sys_s": cpu.map(|c| c.1),
        "peak_rss_kib": mem.hwm_kib,
        "rss_anon_kib": mem.anon_kib,
        "rss_shmem_kib": mem.shmem_kib,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nulls_when_unreadable_and_figures_for_a_live_process() {
        let none = sample(i32::MAX);
        let keys = [
            "cpu_user_s",
            "cpu_sys_s",
            "peak_rss_kib",
            "rss_anon_kib",
            "rss_shmem_kib",
        ];
        assert_eq!(none.as_object().unwrap().len(), keys.len());
        assert!(keys.iter().all(|k| none[k].is_null()), "{none}");
        let own = sample(std::process::id() as i32);
        assert!(own["cpu_user_s"].as_f64().is_some());
        assert!(own["peak_rss_kib"].as_u64().unwrap() > 0);
    }
}
