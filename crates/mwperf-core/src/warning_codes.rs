//! Every warning code mwperf emits, from either language, with what it means: the one registry.
//! The agent's warnings use these constants (a code that is not here does not compile); the
//! control plane's are checked against `mwperf-agent warnings --json` (tests/test_warning_codes.py),
//! and docs/results.md's list is that output.

use serde::Serialize;

/// One warning code and what it tells the user, whatever the message's figures.
#[derive(Serialize, Debug, Clone, Copy, PartialEq, Eq)]
pub struct Code {
    pub code: &'static str,
    pub about: &'static str,
    /// Which side emits it: "agent" or "control plane".
    pub from: &'static str,
}

macro_rules! codes {
    ($($from:literal { $($name:ident = $code:literal : $about:literal,)* })*) => {
        $($(
            #[doc = $about]
            pub const $name: Code = Code { code: $code, about: $about, from: $from };
        )*)*
        /// Every code, agent's first, in this file's order.
        pub const ALL: &[Code] = &[$($($name,)*)*];
    };
}

codes! {
    "agent" {
        NO_WARMUP = "no-warmup": "the first messages (connection set-up, page faults, cold caches) are measured",
        CPU_GOVERNOR = "cpu-governor": "the CPU frequency governor changes clock speed under the measurement",
        CPU_IDLE_NOT_PREVENTED = "cpu-idle-not-prevented": "--prevent-cpu-idle could not hold /dev/cpu_dma_latency",
        CPU_IDLE_NOT_CONTROLLABLE = "cpu-idle-not-controllable": "the kernel has no cpuidle driver: --prevent-cpu-idle has no effect",
        SLOW_CLOCK = "slow-clock": "reading the clock is slow: timestamps are coarse",
        SENDER_BEHIND = "sender-behind": "the sender fell behind its schedule: the offered rate was not kept",
        NO_SAMPLES = "no-samples": "no measured message arrived",
        TOO_FEW_SAMPLES = "too-few-samples": "the p99 rests on fewer than 10 samples beyond it",
        FOREIGN_TRAFFIC = "foreign-traffic": "packets not of this run arrived (dropped, not measured)",
        CLOCK_SYNC_FAILED = "clock-sync-failed": "one way across two clocks without a clock fit: latencies mix two clocks",
        CLOCK_SYNC_BOUND = "clock-sync-bound": "the clock offset's error bound is more than 10 % of the one-way p50",
        CLOCK_SYNC_NEGATIVE = "clock-sync-negative": "one-way samples were still negative after the clock correction",
        CLOCK_SYNC_RUNNING_FIT = "clock-sync-running-fit": "samples beyond the buffer were corrected with the fit as it stood then",
    }
    "control plane" {
        SENDER_TIMEOUT = "sender-timeout": "the sender did not finish in time and was stopped",
        SENDER_COUNT_MISSING = "sender-count-missing": "the sender's send count is missing: one-way loss cannot be computed",
        PAYLOAD_MISMATCH = "payload-mismatch": "the agent measured another payload size than was asked for",
        ACCOUNTING_MISMATCH = "accounting-mismatch": "the agents' counts disagree (a bug in the accounting)",
        AGENT_KILLED = "agent-killed": "an agent did not stop when asked and was killed",
        NO_END_OF_STREAM = "no-end-of-stream": "a subscriber did not see the end-of-stream marker",
        RELIABLE_BACKLOG = "reliable-backlog": "a reliable queue was cut off: messages still queued when the subscriber stopped count as undelivered",
        UNSTEADY_THROUGHPUT = "unsteady-throughput": "a throughput stream delivered less than half its median in a whole second",
        LAYERS_UNAVAILABLE = "layers-unavailable": "--layers could not see an agent's system calls: the run went on without (part of) the split",
        LAYERS_INCOMPLETE = "layers-incomplete": "--layers: some measured messages could not be split (events dropped, or not seen)",
        CONNECTION_LOST = "connection-lost": "the SSH channel to a real host's agent closed",
        DAEMON_EXITED = "daemon-exited": "a daemon exited during the run",
        DAEMON_KILLED = "daemon-killed": "a daemon did not stop when asked and was killed",
        PROFILE_UNAVAILABLE = "profile-unavailable": "--profile: perf cannot sample here",
        PROFILE_FAILED = "profile-failed": "--profile: perf failed during the run",
        KEEP_AWAKE_FAILED = "keep-awake-failed": "--keep-awake: a CPU's spinner did not start: that CPU was free to halt",
        RT_PRIORITY_DENIED = "rt-priority-denied": "a real-time priority was refused: the role ran SCHED_OTHER",
        RT_BUDGET_BELOW_QUOTA = "rt-budget-below-quota": "a SCHED_FIFO role's real-time budget is below its CPU quota",
        OUTAGE_MISSED = "outage-missed": "the link outage fell outside the measurement",
        RESTART_NOT_RECOVERED = "restart-not-recovered": "after a --restart nothing sent came back within the run",
        RESTART_SURVIVOR_ONLY = "restart-survivor-only": "after a --restart of the sub (or a graph node) its latency figures cover only the restarted process's arrivals",
        BRIDGE_RATE_SHORT = "bridge-rate-short": "the bridge delivered less than 95 % of the offered rate",
        IMPORTED = "imported": "an imported result: latency as the other tool measured it",
        OUTSIDE_TUNNEL = "outside-tunnel": "--secure wireguard: packets crossed the link outside the tunnel, in the clear",
    }
}

/// The registry as `mwperf-agent warnings --json` prints it.
pub fn json() -> serde_json::Value {
    serde_json::to_value(ALL).expect("codes serialize")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique_kebab_case_and_explained() {
        let mut seen = std::collections::HashSet::new();
        for c in ALL {
            assert!(seen.insert(c.code), "{} twice", c.code);
            assert!(
                c.code.split('-').all(|w| !w.is_empty()
                    && w.bytes()
                        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())),
                "{}",
                c.code
            );
            assert!(!c.about.is_empty() && !c.about.ends_with('.'), "{}", c.code);
        }
    }
}
