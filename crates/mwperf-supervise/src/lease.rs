//! The scratch folder's lease (DIR/lease.json) and what `supervise-clean` decides from it.
//!
//! A process is named by its pid and its start time (field 22 of /proc/<pid>/stat, clock ticks
//! since boot): a pid the kernel handed to another process since does not match.

use serde::{Deserialize, Serialize};
use std::path::Path;

pub const FILE: &str = "lease.json";

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub struct Lease {
    pub supervisor_pid: i32,
    pub supervisor_start: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub child_pid: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub child_start: Option<u64>,
    pub started_unix_s: u64,
    /// The cgroup the child runs in (`--cgroup`), recorded before it is made: a stale one is
    /// removed by `supervise-clean` (its tasks killed first).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cgroup: Option<String>,
}

impl Lease {
    pub fn parse(text: &str) -> Option<Lease> {
        let l: Lease = serde_json::from_str(text).ok()?;
        (l.supervisor_pid > 0 && l.child_pid.is_none_or(|p| p > 0)).then_some(l)
    }

    /// Written to a temporary file and renamed over lease.json, so a reader never sees half a lease.
    pub fn write(&self, dir: &Path) -> std::io::Result<()> {
        let tmp = dir.join(".lease.json.tmp");
        std::fs::write(
            &tmp,
            serde_json::to_vec(self).map_err(std::io::Error::other)?,
        )?;
        std::fs::rename(&tmp, dir.join(FILE))
    }
}

/// The fields of /proc/<pid>/stat after the command name (which may hold spaces and ')').
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stat {
    pub state: char,
    pub pgrp: i32,
    pub utime_ticks: u64,
    pub stime_ticks: u64,
    pub start_ticks: u64,
}

impl Stat {
    pub fn parse(text: &str) -> Option<Stat> {
        let rest = &text[text.rfind(')')? + 1..];
        // rest starts at field 3 (state): field N is word N - 3.
        let f: Vec<&str> = rest.split_whitespace().collect();
        let num = |n: usize| f.get(n - 3).and_then(|v| v.parse::<u64>().ok());
        Some(Stat {
            state: f.first()?.chars().next()?,
            pgrp: f.get(5 - 3)?.parse().ok()?,
            utime_ticks: num(14)?,
            stime_ticks: num(15)?,
            start_ticks: num(22)?,
        })
    }

    pub fn of(pid: i32) -> Option<Stat> {
        if pid <= 0 {
            return None;
        }
        Stat::parse(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
    }
}

/// Start time of this process (field 22 of /proc/self/stat).
pub fn own_start() -> u64 {
    std::fs::read_to_string("/proc/self/stat")
        .ok()
        .and_then(|t| Stat::parse(&t))
        .map_or(0, |s| s.start_ticks)
}

/// Whether `pid` is the process that started at `start` and has not exited (a zombie has).
pub fn alive(pid: i32, start: u64) -> bool {
    Stat::of(pid).is_some_and(|s| s.start_ticks == start && s.state != 'Z' && s.state != 'X')
}

/// Live processes of process group `pgrp` that started no earlier than `since` (a group id is
/// not handed out again while any member lives, so these belong to the leased child's group).
pub fn group_members(pgrp: i32, since: u64) -> Vec<i32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| {
            Stat::of(pid).is_some_and(|s| {
                s.pgrp == pgrp && s.start_ticks >= since && s.state != 'Z' && s.state != 'X'
            })
        })
        .collect()
}

/// What `supervise-clean` does with one leased folder.
#[derive(Debug, PartialEq, Eq)]
pub enum Decision {
    /// The supervisor still runs: leave the folder alone.
    Keep,
    /// The supervisor is gone: kill the child's process group (Some(pgid)) when it has live
    /// members, then remove the folder.
    Remove { kill_group: Option<i32> },
}

/// `supervisor_alive`: whether pid + start time match a running process; `group_alive`: whether
/// the child's process group (pgid = child pid) has live members started since the child.
pub fn decide(
    lease: &Lease,
    supervisor_alive: impl Fn(i32, u64) -> bool,
    group_alive: impl Fn(i32, u64) -> bool,
) -> Decision {
    if supervisor_alive(lease.supervisor_pid, lease.supervisor_start) {
        return Decision::Keep;
    }
    let kill_group = match (lease.child_pid, lease.child_start) {
        (Some(pid), Some(start)) if group_alive(pid, start) => Some(pid),
        _ => None,
    };
    Decision::Remove { kill_group }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STAT: &str = "4242 (a (weird) name) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 75 0 0 20 0 1 0 987654 1000000 200 18446744073709551615";

    #[test]
    fn parses_proc_stat_after_the_last_paren() {
        let s = Stat::parse(STAT).unwrap();
        assert_eq!(
            s,
            Stat {
                state: 'S',
                pgrp: 4242,
                utime_ticks: 250,
                stime_ticks: 75,
                start_ticks: 987654
            }
        );
        assert_eq!(Stat::parse("garbage"), None);
        assert_eq!(Stat::parse("1 (x) S 1"), None);
        let own = Stat::of(std::process::id() as i32).unwrap();
        assert_eq!(own.start_ticks, own_start());
        assert!(alive(std::process::id() as i32, own_start()));
        assert!(!alive(std::process::id() as i32, own_start() + 1));
        assert!(!alive(0, 0) && !alive(-5, 0));
    }

    #[test]
    fn lease_round_trip_and_bad_input() {
        let l = Lease {
            supervisor_pid: 10,
            supervisor_start: 5,
            child_pid: Some(11),
            child_start: Some(6),
            started_unix_s: 1_700_000_000,
            cgroup: Some("/sys/fs/cgroup/cpu/mwperf/mwp1-b".into()),
        };
        assert_eq!(
            Lease::parse(&serde_json::to_string(&l).unwrap()),
            Some(l.clone())
        );
        let early = r#"{"supervisor_pid":10,"supervisor_start":5,"started_unix_s":1}"#;
        assert_eq!(Lease::parse(early).unwrap().child_pid, None);
        assert_eq!(Lease::parse(""), None);
        assert_eq!(Lease::parse(r#"{"supervisor_pid":10}"#), None);
        assert_eq!(
            Lease::parse(r#"{"supervisor_pid":0,"supervisor_start":5,"started_unix_s":1}"#),
            None
        );
        assert_eq!(
            Lease::parse(r#"{"supervisor_pid":-1,"supervisor_start":5,"started_unix_s":1}"#),
            None
        );
        assert_eq!(
            Lease::parse(
                r#"{"supervisor_pid":10,"supervisor_start":5,"started_unix_s":1,"child_pid":-1,"child_start":1}"#
            ),
            None
        );
        assert_eq!(Lease::parse("[1,2]"), None);
    }

    #[test]
    fn clean_decision() {
        let l = Lease {
            supervisor_pid: 10,
            supervisor_start: 5,
            child_pid: Some(11),
            child_start: Some(6),
            started_unix_s: 0,
            cgroup: None,
        };
        let yes = |_: i32, _: u64| true;
        let no = |_: i32, _: u64| false;
        assert_eq!(decide(&l, yes, yes), Decision::Keep);
        assert_eq!(
            decide(&l, no, yes),
            Decision::Remove {
                kill_group: Some(11)
            }
        );
        assert_eq!(decide(&l, no, no), Decision::Remove { kill_group: None });
        // The supervisor's pid now belongs to another process (start time differs): gone.
        assert_eq!(
            decide(&l, |p, s| p == 10 && s == 99, no),
            Decision::Remove { kill_group: None }
        );
        // No child recorded yet: nothing to kill.
        let early = Lease {
            child_pid: None,
            child_start: None,
            ..l
        };
        assert_eq!(
            decide(&early, no, yes),
            Decision::Remove { kill_group: None }
        );
    }
}
