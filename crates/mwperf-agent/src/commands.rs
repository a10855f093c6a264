//! The subcommands that are not a measuring run: the listings, the router, the probe, the
//! supervisor, the host's facts and pooling, and a graph's node (its own run and report,
//! node/). Each does its work and gives its own exit code.

use std::process::ExitCode;

use crate::cli::Role;
use crate::{facts, listing, pooling, probe, probe_ros2, router};

/// Serve `role` if it is one of these subcommands; None for a measuring role (ping, pong, pub, sub).
pub fn run(role: &Role) -> Option<ExitCode> {
    Some(match role {
        Role::Payloads(a) => {
            listing::payloads(a.json);
            ExitCode::SUCCESS
        }
        Role::Transports(a) => {
            listing::transports(a.json);
            ExitCode::SUCCESS
        }
        Role::Warnings(a) => {
            listing::warnings(a.json);
            ExitCode::SUCCESS
        }
        Role::Options(a) => {
            listing::options(a.json);
            ExitCode::SUCCESS
        }
        Role::Router(a) => router::run(a),
        Role::Probe(a) => probe::run(a),
        Role::ProbeRos2(a) => probe_ros2::run(a),
        Role::Supervise(a) => mwperf_supervise::run(a),
        Role::SuperviseClean(a) => mwperf_supervise::clean::run(a),
        Role::SuperviseCgroup(a) => mwperf_supervise::local::run(a),
        Role::Facts => facts::run(),
        Role::Pool => pooling::run(),
        Role::Node(a) => crate::node::main(a),
        Role::NodeCollect(a) => crate::node::collect::main(a),
        Role::Ping(_)
        | Role::Pub(_)
        | Role::Pong(_)
        | Role::Sub(_)
        | Role::Client(_)
        | Role::Server(_) => return None,
    })
}
