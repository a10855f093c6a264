//! The examples' common zenoh flags, hand-parsed (upstream uses clap's CommonArgs):
//! `-m peer|client`, `-e ENDPOINT` (connect, repeatable), `-l ENDPOINT` (listen, repeatable),
//! `--no-multicast-scouting`, `--no-express`, plus the tool's own flags and positionals.
//! Shared by all the tools; z_pong has no own flags.
#![allow(dead_code)]

use zenoh::Config;

pub struct Args {
    pub config: Config,
    pub express: bool,
    /// Flags with a value that the tool itself defines (e.g. `-n`, `-w`), in order.
    pub own: Vec<(String, String)>,
    pub positional: Vec<String>,
}

pub fn parse(own_flags: &[&str]) -> Args {
    let mut it = std::env::args().skip(1);
    let (mut mode, mut connect, mut listen) = (None, Vec::new(), Vec::new());
    let (mut scouting, mut express) = (true, true);
    let (mut own, mut positional) = (Vec::new(), Vec::new());
    while let Some(a) = it.next() {
        let mut value = || it.next().unwrap_or_else(|| usage(&format!("{a} needs a value")));
        match a.as_str() {
            "-m" | "--mode" => mode = Some(value()),
            "-e" | "--connect" => connect.push(value()),
            "-l" | "--listen" => listen.push(value()),
            "--no-multicast-scouting" => scouting = false,
            "--no-express" => express = false,
            f if own_flags.contains(&f) => own.push((f.to_string(), value())),
            f if f.starts_with('-') => usage(&format!("unknown flag {f}")),
            _ => positional.push(a),
        }
    }
    let mut config = Config::default();
    let list = |v: &[String]| format!("[{}]", v.iter().map(|e| format!("\"{e}\"")).collect::<Vec<_>>().join(","));
    if let Some(m) = mode {
        config.insert_json5("mode", &format!("\"{m}\"")).unwrap_or_else(|e| usage(&format!("-m {m}: {e}")));
    }
    if !connect.is_empty() {
        config.insert_json5("connect/endpoints", &list(&connect)).unwrap_or_else(|e| usage(&format!("-e: {e}")));
    }
    if !listen.is_empty() {
        config.insert_json5("listen/endpoints", &list(&listen)).unwrap_or_else(|e| usage(&format!("-l: {e}")));
    }
    if !scouting {
        config.insert_json5("scouting/multicast/enabled", "false").unwrap();
    }
    Args { config, express, own, positional }
}

pub fn usage(msg: &str) -> ! {
    eprintln!("error: {msg}\nusage: z_ping [-m peer|client] [-e ENDPOINT] [-l ENDPOINT] [--no-multicast-scouting] [--no-express] [-w SECS] [-n SAMPLES] PAYLOAD_SIZE\n       z_pong [-m peer|client] [-e ENDPOINT] [-l ENDPOINT] [--no-multicast-scouting] [--no-express]\n       z_pub_thr [COMMON] [-d SECS] [-c block|drop] PAYLOAD_SIZE\n       z_sub_thr [COMMON] [-i MILLIS]");
    std::process::exit(2)
}
