//! `supervise-clean --root DIR`: for each subfolder with a lease.json whose supervisor is gone
//! (pid and start time no longer match a running process), SIGKILL the child's process group if
//! it still has members, and remove the folder. Folders of live supervisors are kept; folders
//! without a lease are not ours and are not touched; symbolic links are never followed.

use std::path::Path;
use std::process::ExitCode;

use super::cgroup;
use super::lease::{self, Decision, Lease};

pub fn run(a: &super::CleanArgs) -> ExitCode {
    let (removed, killed, kept, cgroups) = clean(&a.root);
    println!(
        "{}",
        serde_json::json!({"removed": removed, "killed": killed, "kept": kept, "cgroups": cgroups})
    );
    ExitCode::SUCCESS
}

/// (removed folder names, killed process group ids, kept folder count, removed cgroup paths).
pub fn clean(root: &Path) -> (Vec<String>, Vec<i32>, usize, Vec<String>) {
    let (mut removed, mut killed, mut kept, mut cgroups) = (Vec::new(), Vec::new(), 0, Vec::new());
    let Ok(entries) = std::fs::read_dir(root) else {
        return (removed, killed, kept, cgroups);
    };
    let mut stale = Vec::new();
    let mut live_groups = std::collections::HashSet::new();
    for entry in entries.flatten() {
        // file_type() of a read_dir entry does not follow symlinks.
        if !entry.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        let folder = entry.path();
        let lease_path = folder.join(lease::FILE);
        if !std::fs::symlink_metadata(&lease_path).is_ok_and(|m| m.file_type().is_file()) {
            continue;
        }
        let Some(l) = std::fs::read_to_string(&lease_path)
            .ok()
            .and_then(|t| Lease::parse(&t))
        else {
            eprintln!(
                "mwperf-agent supervise-clean: {}: unreadable lease, kept",
                lease_path.display()
            );
            kept += 1;
            continue;
        };
        let group_alive = |pgid: i32, since: u64| !lease::group_members(pgid, since).is_empty();
        match lease::decide(&l, lease::alive, group_alive) {
            Decision::Keep => {
                kept += 1;
                live_groups.extend(l.cgroup.clone());
            }
            Decision::Remove { kill_group } => stale.push((
                entry.file_name().to_string_lossy().into_owned(),
                folder,
                l.cgroup.clone(),
                kill_group,
            )),
        }
    }
    for (name, folder, group, kill_group) in stale {
        if let Some(pgid) = kill_group {
            // SAFETY: the group has live members started since the leased child, and a
            // group id is not reused while any member lives.
            unsafe { libc::kill(-pgid, libc::SIGKILL) };
            killed.push(pgid);
        }
        // A cgroup no live supervisor shares: what is still in it was left by the dead one.
        if let Some(path) = group
            .filter(|g| !live_groups.contains(g))
            .map(std::path::PathBuf::from)
            .filter(|p| ours(p))
        {
            for pid in cgroup::members(&path) {
                // SAFETY: a process in this run's leased cgroup, whose supervisors are all gone.
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
            while !cgroup::members(&path).is_empty() && std::time::Instant::now() < deadline {
                std::thread::sleep(std::time::Duration::from_millis(20)); // SIGKILLed tasks take a moment to leave
            }
            if path.exists() && cgroup::remove_if_empty(&path, std::time::Duration::from_secs(2)) {
                cgroups.push(path.display().to_string());
            } else if path.exists() {
                eprintln!(
                    "mwperf-agent supervise-clean: cannot remove cgroup {} (still busy)",
                    path.display()
                );
            }
        }
        match std::fs::remove_dir_all(&folder) {
            Ok(()) => removed.push(name),
            Err(e) => eprintln!(
                "mwperf-agent supervise-clean: cannot remove {}: {e}",
                folder.display()
            ),
        }
    }
    (removed, killed, kept, cgroups)
}

/// Whether `path` is a supervisor's cgroup: `<cpu hierarchy>/mwperf/<name>` (a lease names
/// nothing else for killing).
fn ours(path: &Path) -> bool {
    let named = path
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| cgroup::name_arg(n).is_ok());
    let parent = path.parent();
    named
        && parent
            .and_then(|p| p.file_name())
            .is_some_and(|n| n == cgroup::PARENT)
        && cgroup::detect()
            .is_some_and(|h| parent.and_then(|p| p.parent()) == Some(h.mount.as_path()))
}
