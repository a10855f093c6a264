//! `supervise-cgroup`: the cgroup steps of `supervise --cgroup`, one at a time, for the control
//! plane's own machine (python/mwperf/emulation/cgroups.py calls it), so the mountinfo parsing,
//! the group's creation and quota, the real-time budget and the throttling figures exist once.
//!
//! The control plane still forks its local agents itself and puts them in the group between fork
//! and exec (writing the pid to `cgroup.procs`, as `supervise` does): nothing runs beside them.
//! Each action prints one JSON value on stdout; a refusal is one line on stderr saying what to
//! change, and exit code 1 (2: a usage error).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};

use super::cgroup::{self, Hierarchy};

#[derive(Args, Debug)]
pub struct CgroupArgs {
    #[command(subcommand)]
    pub action: Action,
}

#[derive(Subcommand, Debug)]
pub enum Action {
    /// Every mounted cgroup hierarchy and the one with the cpu controller (v2 preferred):
    /// {"hierarchies": [{"version", "mount", "controllers"}], "cpu": one of them or null}.
    Hierarchies {
        /// Read this file instead of /proc/self/mountinfo.
        #[arg(long, default_value = "/proc/self/mountinfo")]
        mountinfo: PathBuf,
    },
    /// Create (or join) `<mount>/mwperf/NAME` limited to --cpu-quota % of one CPU:
    /// {"path", "quota_us", "period_us"}.
    Create {
        #[arg(long, value_parser = cgroup::name_arg)]
        name: String,
        #[arg(long = "cpu-quota", value_parser = cgroup::quota_arg)]
        cpu_quota: f64,
        /// The hierarchy's mount point (from `hierarchies`).
        #[arg(long)]
        mount: PathBuf,
        /// The hierarchy's version, 1 or 2.
        #[arg(long = "cgroup-version", value_parser = clap::value_parser!(u8).range(1..=2))]
        cgroup_version: u8,
    },
    /// cgroup v1 with RT group scheduling: give the group --path a SCHED_FIFO budget of
    /// --fraction of each CPU, at most 1/--siblings of its parent's: {"share"}.
    RtBudget {
        #[arg(long)]
        path: PathBuf,
        /// The hierarchy's mount point (its root budget).
        #[arg(long)]
        mount: PathBuf,
        #[arg(long)]
        fraction: f64,
        #[arg(long, default_value_t = 1)]
        siblings: u32,
    },
    /// The group's throttling so far (cpu.stat): {"periods", "throttled_periods",
    /// "throttled_s"}, null when unreadable.
    Throttling {
        #[arg(long)]
        path: PathBuf,
    },
}

fn refuse(msg: &str) -> ExitCode {
    eprintln!("mwperf-agent supervise-cgroup: {msg}");
    ExitCode::from(1)
}

pub fn run(a: &CgroupArgs) -> ExitCode {
    let out = match &a.action {
        Action::Hierarchies { mountinfo } => {
            // No mountinfo: no hierarchy.
            let text = std::fs::read_to_string(mountinfo).unwrap_or_default();
            let v2 = |m: &std::path::Path| {
                std::fs::read_to_string(m.join("cgroup.controllers"))
                    .map(|t| t.split_whitespace().map(String::from).collect())
                    .unwrap_or_default()
            };
            let all: Vec<Hierarchy> = cgroup::hierarchies(&text, v2);
            let cpu = cgroup::cpu_hierarchy(&text, v2);
            serde_json::json!({"hierarchies": all, "cpu": cpu})
        }
        Action::Create {
            name,
            cpu_quota,
            mount,
            cgroup_version,
        } => {
            let h = Hierarchy {
                version: *cgroup_version,
                mount: mount.clone(),
                controllers: vec!["cpu".into()],
            };
            match cgroup::create(&h, name, *cpu_quota) {
                Ok(path) => serde_json::json!({
                    "path": path.display().to_string(),
                    "quota_us": cgroup::quota_us(*cpu_quota),
                    "period_us": cgroup::PERIOD_US,
                }),
                Err(msg) => return refuse(&msg),
            }
        }
        Action::RtBudget {
            path,
            mount,
            fraction,
            siblings,
        } => match cgroup::rt_budget(mount, path, *fraction, *siblings) {
            Ok(share) => serde_json::json!({"share": share}),
            Err(e) => return refuse(&e.to_string()),
        },
        Action::Throttling { path } => cgroup::throttling(path),
    };
    println!("{out}");
    ExitCode::SUCCESS
}
