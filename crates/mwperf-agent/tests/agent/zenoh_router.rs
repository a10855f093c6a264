//! End to end through the built agent: `mwperf-agent router --transport zenoh` as the router,
//! a pong and a ping in client mode through it, then SIGTERM stops the router with exit 0.

#![cfg(feature = "zenoh")]

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

const AGENT: &str = env!("CARGO_BIN_EXE_mwperf-agent");

/// A started agent, killed when dropped: a failing assertion leaves no router or pong behind.
struct Agent(Child);

impl Drop for Agent {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Start the agent with `args` and return it with the words of its READY line.
fn start(args: &[&str]) -> (Agent, Vec<String>) {
    let mut child = Agent(
        Command::new(AGENT)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let mut line = String::new();
    BufReader::new(child.0.stdout.as_mut().unwrap())
        .read_line(&mut line)
        .unwrap();
    let words: Vec<String> = line.split_whitespace().map(String::from).collect();
    assert_eq!(
        words.first().map(String::as_str),
        Some("READY"),
        "{args:?} printed {line:?}"
    );
    (child, words)
}

fn terminate(agent: &mut Agent) -> std::process::ExitStatus {
    // SAFETY: signalling a child we started and have not reaped.
    unsafe { libc::kill(agent.0.id() as i32, libc::SIGTERM) };
    agent.0.wait().unwrap()
}

#[test]
fn client_mode_through_the_agents_router() {
    let (mut router, ready) = start(&[
        "router",
        "--transport",
        "zenoh",
        "--listen",
        "tcp/127.0.0.1:0",
    ]);
    assert_eq!(ready[1], "zenoh-router");
    let at = ready[2].clone();
    assert!(
        at.starts_with("tcp/127.0.0.1:") && !at.ends_with(":0"),
        "{at}"
    );

    let listen = format!("{at}#agent-router");
    // A deep keep-last queue and a warm-up, as the Python end-to-end tests use: on a loaded
    // 2-core host a late sender catches up in a burst that the default depth of 10 drops by
    // design, and zero loss must check the router path, not the host's scheduling.
    let (mut pong, ready) = start(&[
        "pong",
        "--transport",
        "zenoh",
        "--listen",
        &listen,
        "--opt",
        "mode=client",
        "--depth",
        "1000",
        "--quiet",
    ]);
    assert_eq!(ready[2], listen);
    let out = Command::new(AGENT)
        .args([
            "ping",
            "--transport",
            "zenoh",
            "--connect",
            &listen,
            "--opt",
            "mode=client",
            "--depth",
            "1000",
            "--warmup",
            "200ms",
            "--rate",
            "1000",
            "--duration",
            "1s",
            "--payload",
            "64",
            "--quiet",
            "--json",
            "-",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "ping: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["status"], "complete", "{report}");
    let acc = &report["measurement"]["accounting"];
    assert!(acc["received"].as_u64().unwrap() >= 900, "{acc}");
    assert_eq!(acc["lost"].as_u64(), Some(0), "{acc}");

    assert!(terminate(&mut pong).success());
    let st = terminate(&mut router);
    assert!(st.success(), "router exit: {st}");
}

#[test]
fn router_usage_errors_exit_2() {
    let st = Command::new(AGENT)
        .args(["router", "--transport", "tcp", "--listen", "127.0.0.1:0"])
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert_eq!(st.code(), Some(2));
    let st = Command::new(AGENT)
        .args([
            "ping",
            "--transport",
            "zenoh",
            "--connect",
            "tcp/127.0.0.1:1#x",
            "--opt",
            "colour=red",
        ])
        .stderr(Stdio::null())
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert_eq!(st.code(), Some(2));
}
