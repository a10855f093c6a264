//! Fast DDS's shared-memory transport leaves files in /dev/shm (`fastrtps_*` segments, their
//! `_el` lock files and `sem.fastrtps_*` semaphores; Fast DDS 3, the ROS 2 wheels' RMW, names
//! them `fastdds_*`): it removes its own at a clean exit, never after a crash (measured: a
//! SIGKILLed pong leaves its 8 MiB segment, its port segments and a semaphore), and Fast DDS 3
//! left a port segment at a clean exit too (once, in a 20-node ros2 graph). Used by the fastdds
//! transport and by ros2 (whose RMW may be rmw_fastrtps_cpp). Never removing a segment someone still uses, this process removes
//! - when it opens its first shared-memory endpoint: leftovers that no live process maps and
//!   that are older than [`STALE_AFTER`] (a crashed run's; the age spares a segment another
//!   process created a moment ago and has not mapped yet),
//! - when an endpoint closes: what appeared since that first open and nobody maps any more.
//!
//! "Nobody" counts every live process's maps and open files: a run beside this one creates its
//! segments at any moment, and a new segment is open (not yet mapped) in between.

use std::collections::HashSet;
use std::path::Path;
use std::sync::Mutex;

const DIR: &str = "/dev/shm";

/// /dev/shm entries that are Fast DDS's.
pub fn is_fastdds(name: &str) -> bool {
    ["fastrtps_", "sem.fastrtps_", "fastdds_", "sem.fastdds_"]
        .iter()
        .any(|p| name.starts_with(p))
}

/// What was there before this process opened its first shared-memory endpoint (not ours).
static BEFORE: Mutex<Option<HashSet<String>>> = Mutex::new(None);

fn listing() -> HashSet<String> {
    std::fs::read_dir(DIR)
        .map(|d| {
            d.filter_map(|e| e.ok()?.file_name().into_string().ok())
                .filter(|n| is_fastdds(n))
                .collect()
        })
        .unwrap_or_default()
}

/// How old an unmapped entry must be to count as a crashed run's leftover.
pub const STALE_AFTER: std::time::Duration = std::time::Duration::from_secs(10);

/// Remove stale leftovers, then remember the entries present now (once per process).
pub fn watch() {
    let mut before = BEFORE.lock().unwrap_or_else(|p| p.into_inner());
    if before.is_none() {
        remove_unmapped(listing(), |name| {
            std::fs::metadata(Path::new(DIR).join(name))
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.elapsed().ok())
                .is_some_and(|age| age >= STALE_AFTER)
        });
        *before = Some(listing());
    }
}

/// Every /dev/shm path some live process maps (from /proc/<pid>/maps).
pub fn mapped() -> HashSet<String> {
    let mut out = HashSet::new();
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return out;
    };
    for p in procs.flatten() {
        if !p
            .file_name()
            .to_string_lossy()
            .bytes()
            .all(|b| b.is_ascii_digit())
        {
            continue;
        }
        let Ok(maps) = std::fs::read_to_string(p.path().join("maps")) else {
            continue;
        };
        for line in maps.lines() {
            if let Some(i) = line.find("/dev/shm/") {
                let name = line[i + "/dev/shm/".len()..].trim_end_matches(" (deleted)");
                out.insert(name.to_string());
            }
        }
    }
    out
}

/// Remove the entries that appeared since [`watch`] and that nobody maps; returns their names.
pub fn sweep() -> Vec<String> {
    let before = BEFORE.lock().unwrap_or_else(|p| p.into_inner());
    let Some(before) = before.as_ref() else {
        return Vec::new(); // shared memory never used here
    };
    let new: HashSet<String> = listing().difference(before).cloned().collect();
    remove_unmapped(new, |_| true)
}

/// Every /dev/shm path another live process has open (from /proc/<pid>/fd): a segment it has
/// just created and not mapped yet, a lock file a participant holds. This process's own open
/// files are not counted: what it still maps is (`mapped`), and at its last endpoint's close
/// Fast DDS 3 keeps a port segment's descriptor open that nobody maps any more (a stress run's
/// leftover `fastdds_port<N>` after a ros2 point).
pub fn opened() -> HashSet<String> {
    let mut out = HashSet::new();
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return out;
    };
    let me = std::process::id().to_string();
    for p in procs.flatten() {
        let pid = p.file_name().to_string_lossy().into_owned();
        // processes only (not /proc/self, /proc/thread-self), and not this one
        if pid == me || !pid.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let Ok(fds) = std::fs::read_dir(p.path().join("fd")) else {
            continue;
        };
        for fd in fds.flatten() {
            if let Ok(target) = std::fs::read_link(fd.path()) {
                if let Ok(name) = target.strip_prefix(DIR) {
                    out.insert(name.to_string_lossy().into_owned());
                }
            }
        }
    }
    out
}

/// Remove the entries of `names` that `also` accepts and no live process maps or has open
/// (other runs beside this one create theirs at any moment: open before they are mapped). A
/// lock file (`_el`, `_sl`) goes with its segment: kept while the segment is in use. A port's
/// semaphore (`sem.<port>_mutex`) is kept while its port file exists: Fast DDS closes it after
/// every open of the port and opens it again for the next, so it is neither mapped nor open
/// between two uses, and removing it while one process holds it lets two open the port at once
/// (Fast DDS 3 then drops the reader's shared-memory locator: UDP for the whole match).
fn remove_unmapped(names: HashSet<String>, also: impl Fn(&str) -> bool) -> Vec<String> {
    if names.is_empty() {
        return Vec::new();
    }
    let mut in_use = mapped();
    in_use.extend(opened());
    let mut removed = Vec::new();
    let (semaphores, files): (Vec<String>, Vec<String>) =
        names.into_iter().partition(|n| guarded_by(n).is_some());
    for name in files {
        if !also(&name) || in_use.contains(&name) || in_use.contains(segment_of(&name)) {
            continue;
        }
        if std::fs::remove_file(Path::new(DIR).join(&name)).is_ok() {
            removed.push(name);
        }
    }
    for name in semaphores {
        let port = guarded_by(&name).unwrap_or_default();
        if !also(&name) || in_use.contains(&name) || Path::new(DIR).join(port).exists() {
            continue;
        }
        if std::fs::remove_file(Path::new(DIR).join(&name)).is_ok() {
            removed.push(name);
        }
    }
    removed
}

/// The segment a lock file belongs to (`X_el`, `X_sl` -> `X`); other names are their own.
fn segment_of(name: &str) -> &str {
    name.strip_suffix("_el")
        .or_else(|| name.strip_suffix("_sl"))
        .unwrap_or(name)
}

/// The file a port semaphore guards (`sem.X_mutex` -> `X`); None for other names.
fn guarded_by(name: &str) -> Option<&str> {
    name.strip_prefix("sem.")?.strip_suffix("_mutex")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ports_semaphore_is_kept_while_the_port_exists_and_a_lock_file_while_its_segment_is() {
        let port = format!("fastdds_mwperf_unit_port{}", std::process::id());
        let sem = format!("sem.{port}_mutex");
        let lock = format!("{port}_sl");
        for n in [&port, &sem, &lock] {
            std::fs::File::create(Path::new(DIR).join(n)).unwrap();
        }
        // the port in use (mapped by a process: here opened by another), its semaphore idle
        let mut holder = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!("exec 3<{DIR}/{port}; exec sleep 30"))
            .spawn()
            .unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while !opened().contains(&port) && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let names: HashSet<String> = [port.clone(), sem.clone(), lock.clone()].into();
        assert!(remove_unmapped(names.clone(), |_| true).is_empty());
        holder.kill().unwrap();
        holder.wait().unwrap();
        // the port unused: it, its lock file and then its semaphore go, in one sweep
        let mut gone = remove_unmapped(names, |_| true);
        gone.sort();
        let mut all = vec![port, sem, lock];
        all.sort();
        assert_eq!(gone, all);
        assert!(all.iter().all(|n| !Path::new(DIR).join(n).exists()));
    }

    #[test]
    fn a_segment_another_process_holds_open_is_not_swept() {
        let name = format!("fastdds_mwperf_unit_{}", std::process::id());
        let path = Path::new(DIR).join(&name);
        std::fs::File::create(&path).unwrap();
        // another process holds it open, not mapped (created a moment ago)
        let mut holder = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!("exec 3<{}; exec sleep 30", path.display()))
            .spawn()
            .unwrap();
        let names: HashSet<String> = [name.clone()].into();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while !opened().contains(&name) && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert!(remove_unmapped(names.clone(), |_| true).is_empty());
        assert!(path.exists());
        holder.kill().unwrap();
        holder.wait().unwrap();
        // this process's own descriptor does not keep it
        let _mine = std::fs::File::open(&path).unwrap();
        assert_eq!(remove_unmapped(names, |_| true), vec![name]);
        assert!(!path.exists());
    }
}
