//! `supervise-clean --root DIR`: for each subfolder with a lease.json whose supervisor is gone
//! (pid and start time no longer match a running process), SIGKILL the child's process group if
//! it still has members, and remove the folder. Folders of live supervisors are kept; folders
//! without a lease are not ours and are not touched; symbolic links are never followed.

use std::path::Path;
use std::process::ExitCode;

use super::lease::{self, Decision, Lease};

pub fn run(a: &super::CleanArgs) -> ExitCode {
    let (removed, killed, kept) = clean(&a.root);
    println!("{}", serde_json::json!({"removed": removed, "killed": killed, "kept": kept}));
    ExitCode::SUCCESS
}

/// (removed folder names, killed process group ids, kept folder count).
pub fn clean(root: &Path) -> (Vec<String>, Vec<i32>, usize) {
    let (mut removed, mut killed, mut kept) = (Vec::new(), Vec::new(), 0);
    let Ok(entries) = std::fs::read_dir(root) else { return (removed, killed, kept) };
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
        let Some(l) = std::fs::read_to_string(&lease_path).ok().and_then(|t| Lease::parse(&t)) else {
            eprintln!("mwperf-agent supervise-clean: {}: unreadable lease, kept", lease_path.display());
            kept += 1;
            continue;
        };
        let group_alive = |pgid: i32, since: u64| !lease::group_members(pgid, since).is_empty();
        match lease::decide(&l, lease::alive, group_alive) {
            Decision::Keep => kept += 1,
            Decision::Remove { kill_group } => {
                if let Some(pgid) = kill_group {
                    // SAFETY: the group has live members started since the leased child, and a
                    // group id is not reused while any member lives.
                    unsafe { libc::kill(-pgid, libc::SIGKILL) };
                    killed.push(pgid);
                }
                match std::fs::remove_dir_all(&folder) {
                    Ok(()) => removed.push(entry.file_name().to_string_lossy().into_owned()),
                    Err(e) => eprintln!("mwperf-agent supervise-clean: cannot remove {}: {e}", folder.display()),
                }
            }
        }
    }
    (removed, killed, kept)
}
