//! `--layers`: the per-layer latency split (issue 27).

pub mod ring;
