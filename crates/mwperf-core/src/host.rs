//! Facts about the host a result was measured on.

use serde::Serialize;

#[derive(Serialize, Debug, Clone)]
pub struct HostFacts {
    pub hostname: String,
    pub kernel: String,
    pub cpu_model: String,
    pub cores: u32,
    pub governor: String,
    pub clocksource: String,
    /// cpuidle driver ("none" in many VMs: idle is then the hypervisor's business and
    /// /dev/cpu_dma_latency changes nothing).
    pub cpuidle_driver: String,
}

fn read_trim(path: &str) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

impl HostFacts {
    pub fn collect() -> Self {
        let cpu_model = std::fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|t| {
                t.lines()
                    .find(|l| l.starts_with("model name"))
                    .and_then(|l| l.split_once(':'))
                    .map(|(_, v)| v.trim().to_string())
            })
            .unwrap_or_else(|| "unknown".into());
        HostFacts {
            hostname: read_trim("/proc/sys/kernel/hostname").unwrap_or_else(|| "unknown".into()),
            kernel: read_trim("/proc/sys/kernel/osrelease").unwrap_or_else(|| "unknown".into()),
            cpu_model,
            cores: std::thread::available_parallelism()
                .map(|n| n.get() as u32)
                .unwrap_or(1),
            governor: read_trim("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")
                .unwrap_or_else(|| "unavailable".into()),
            clocksource: read_trim(
                "/sys/devices/system/clocksource/clocksource0/current_clocksource",
            )
            .unwrap_or_else(|| "unknown".into()),
            cpuidle_driver: read_trim("/sys/devices/system/cpu/cpuidle/current_driver")
                .unwrap_or_else(|| "none".into()),
        }
    }
}
