//! Several nodes in one process (a graph file's `process: NAME`, docs/graphs.md "Processes"):
//! `--node-spec` repeated, each with its report path (`--node-json`), every node on threads of
//! its own; their endpoints share the process's middleware session (`Spec::shared_session`:
//! one DDS participant, zenoh session, iceoryx2 node... per process), so messages between them
//! take the middleware's in-process path, as between the components of a ROS 2 container.
//!
//! Per-process instruments (`--count-allocs`, `--layers-out`, `--alloc-site-markers`) and a
//! clock reference (`--clock-serve`) stay with one node per process: their figures are the
//! process's, not a node's. A node that fails before the graph starts stops the process's
//! others (a component that throws takes its container down): the process exits 1 and each
//! failed node says why on stderr.

use super::spec::NodeSpec;
use crate::cli::NodeArgs;

/// The nodes of this process, each with where its report goes.
pub fn read(args: &NodeArgs) -> Result<Vec<(NodeSpec, Option<String>)>, String> {
    let several = args.node_spec.len() > 1;
    if !args.node_json.is_empty() {
        if args.node_json.len() != args.node_spec.len() {
            return Err(format!(
                "--node-json: one per --node-spec, in the same order ({} specs, {} reports)",
                args.node_spec.len(),
                args.node_json.len()
            ));
        }
        if args.common.json.is_some() {
            return Err(
                "--json: one node's report; with --node-json each spec has its own".to_string(),
            );
        }
    } else if several {
        return Err(format!(
            "--node-json: with {} --node-spec, one report path per spec, in the same order",
            args.node_spec.len()
        ));
    }
    if several {
        if args.clock_serve.is_some() {
            return Err(
                "--clock-serve: a graph's clock reference is a process of one node (one \
                 --node-spec)"
                    .to_string(),
            );
        }
        let per_process = [
            ("--count-allocs", args.common.count_allocs),
            ("--layers-out", args.common.layers_out.is_some()),
            ("--alloc-site-markers", args.common.alloc_site_markers),
        ];
        if let Some((flag, _)) = per_process.iter().find(|(_, on)| *on) {
            return Err(format!(
                "{flag}: counts a whole process, not one of its nodes: not with several \
                 --node-spec"
            ));
        }
    }
    let mut nodes: Vec<(NodeSpec, Option<String>)> = Vec::new();
    for (i, text) in args.node_spec.iter().enumerate() {
        let spec = NodeSpec::read(text)?;
        if spec.is_empty() && args.clock_serve.is_none() {
            return Err(format!(
                "--node-spec: node '{}' has neither publishers nor subscriptions, servers or \
                 clients (only a clock reference, --clock-serve, may have none)",
                spec.name
            ));
        }
        spec.check_sizes(args.common.transport)
            .map_err(|e| format!("--node-spec: {e}"))?;
        if nodes.iter().any(|(n, _)| n.name == spec.name) {
            return Err(format!("--node-spec: node '{}' given twice", spec.name));
        }
        let path = match args.node_json.get(i) {
            Some(p) => Some(p.clone()),
            None => args.common.json.clone(),
        };
        nodes.push((spec, path));
    }
    Ok(nodes)
}

/// Run every node with `run`, one alone on this thread, several each on a thread of its own;
/// the outcomes in the nodes' order. A node failing stops the others (their waits end).
pub fn run_all<R: Send, F>(nodes: &[(NodeSpec, Option<String>)], run: F) -> Vec<Result<R, String>>
where
    F: Fn(&NodeSpec) -> Result<R, String> + Sync,
{
    let stop_on_failure = |spec: &NodeSpec| {
        let outcome = run(spec);
        if outcome.is_err() && nodes.len() > 1 {
            crate::signals::request_stop();
        }
        outcome
    };
    if let [(spec, _)] = nodes {
        return vec![stop_on_failure(spec)];
    }
    std::thread::scope(|scope| {
        let handles: Vec<_> = nodes
            .iter()
            .map(|(spec, _)| {
                let go = &stop_on_failure;
                std::thread::Builder::new()
                    .name(format!("node {}", spec.name))
                    .spawn_scoped(scope, move || go(spec))
                    .expect("a thread for a node")
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err("its thread panicked".to_string()))
            })
            .collect()
    })
}

/// The process's exit code from two nodes': a failure (1) over a partial (3) over complete (0).
pub fn worse(a: u8, b: u8) -> u8 {
    let rank = |c: u8| match c {
        0 => 0,
        3 => 1,
        _ => 2,
    };
    if rank(b) > rank(a) {
        b
    } else {
        a
    }
}

#[cfg(test)]
mod tests {
    use super::worse;

    #[test]
    fn a_failure_outranks_a_partial_which_outranks_complete() {
        assert_eq!(worse(0, 3), 3);
        assert_eq!(worse(3, 0), 3);
        assert_eq!(worse(3, 1), 1);
        assert_eq!(worse(1, 3), 1);
        assert_eq!(worse(0, 0), 0);
    }
}
