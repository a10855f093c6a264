// Records the git revision in the binary (MWPERF_GIT_REV), "unknown" outside a checkout, with
// "-dirty" when the agent's own sources differ from that commit.
//
// It reruns only when the commit or those sources change: never on git's index, which every
// `git status` may rewrite (watching it made each build after a `git status` recompile the
// thin-LTO agent). Only this crate carries the revision, so a commit relinks the agent, not the
// libraries under it.
use std::path::Path;
use std::process::Command;

/// What the agent is built from, relative to the workspace root.
const SOURCES: &[&str] = &[
    "crates/mwperf-agent",
    "crates/mwperf-core",
    "crates/mwperf-transports",
    "Cargo.toml",
    "Cargo.lock",
];

fn git(root: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(args)
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let rev = git(&root, &["rev-parse", "--short=12", "HEAD"]);
    let dirty = rev.is_some()
        && git(
            &root,
            &[
                &["status", "--porcelain", "--untracked-files=no", "--"],
                SOURCES,
            ]
            .concat(),
        )
        .is_some_and(|s| !s.is_empty());
    println!(
        "cargo:rustc-env=MWPERF_GIT_REV={}{}",
        rev.as_deref().unwrap_or("unknown"),
        if dirty { "-dirty" } else { "" }
    );
    // The commit: HEAD, the branch file it names, and packed refs (where a fresh clone keeps
    // it). Only paths that exist: cargo reruns the script every time for a missing one.
    let mut watch: Vec<std::path::PathBuf> = SOURCES.iter().map(|s| root.join(s)).collect();
    if let Some(git_dir) = git(&root, &["rev-parse", "--absolute-git-dir"]) {
        let git_dir = Path::new(&git_dir);
        watch.push(git_dir.join("HEAD"));
        watch.push(git_dir.join("packed-refs"));
        if let Some(head) = git(&root, &["symbolic-ref", "-q", "HEAD"]) {
            watch.push(git_dir.join(head));
        }
    }
    for path in watch.iter().filter(|p| p.exists()) {
        println!("cargo:rerun-if-changed={}", path.display());
    }
}
