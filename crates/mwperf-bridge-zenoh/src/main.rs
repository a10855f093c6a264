//! mwperf-bridge-zenoh: zenoh-plugin-ros2dds in a zenoh runtime, configured by one JSON5 file.
//!
//! Usage: `mwperf-bridge-zenoh CONFIG.json5` | `mwperf-bridge-zenoh --version`.
//! The config is zenoh's own (mode, listen/connect endpoints, `plugins.ros2dds` with the DDS
//! domain); the control plane writes it (python/mwperf/bridges/zenoh_ros2dds.py). Prints
//! `ready` on stdout once the runtime (and with it the plugin) has started, then runs until
//! SIGTERM/SIGINT (exit code 0).
use std::io::Write;

use zenoh::{
    config::Config,
    internal::{plugins::PluginsManager, runtime::RuntimeBuilder},
};
use zenoh_plugin_trait::Plugin;

fn fail(msg: String) -> ! {
    eprintln!("mwperf-bridge-zenoh: {msg}");
    std::process::exit(1);
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [flag] if flag == "--version" => {
            println!(
                "mwperf-bridge-zenoh zenoh-plugin-ros2dds {}",
                zenoh_plugin_ros2dds::ROS2Plugin::PLUGIN_LONG_VERSION
            );
            return;
        }
        [_] => {}
        _ => fail("usage: mwperf-bridge-zenoh CONFIG.json5 | --version".into()),
    }
    zenoh::init_log_from_env_or("warn");
    let mut config =
        Config::from_file(&args[0]).unwrap_or_else(|e| fail(format!("config {}: {e}", args[0])));
    // As zenoh-bridge-ros2dds does: timestamps (publication caches of TRANSIENT_LOCAL topics),
    // the admin space, and plugin loading.
    for (key, value) in [
        ("timestamping/enabled", "true"),
        ("adminspace/enabled", "true"),
        ("plugins_loading/enabled", "true"),
    ] {
        config
            .insert_json5(key, value)
            .unwrap_or_else(|e| fail(format!("{key}: {e}")));
    }

    let mut plugins = PluginsManager::static_plugins_only();
    plugins.declare_static_plugin::<zenoh_plugin_ros2dds::ROS2Plugin, &str>("ros2dds", true);
    let mut runtime = RuntimeBuilder::new(config)
        .plugins_manager(plugins)
        .build()
        .await
        .unwrap_or_else(|e| fail(format!("runtime: {e}")));
    runtime
        .start()
        .await
        .unwrap_or_else(|e| fail(format!("start: {e}")));
    println!("ready");
    let _ = std::io::stdout().flush();

    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .unwrap_or_else(|e| fail(format!("signal: {e}")));
    tokio::select! {
        _ = term.recv() => {}
        _ = tokio::signal::ctrl_c() => {}
    }
    // Exit without closing the runtime: zenoh 1.10.2 can panic in its routing tables while
    // closing a router with plugin routes (resource.rs unwrap), and the process's end releases
    // the sockets and the DDS participant anyway, as zenoh-bridge-ros2dds's own exit does.
    let _ = runtime;
    std::process::exit(0);
}
