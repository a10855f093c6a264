//! mwperf-core's integration tests, one test binary with a module per area.

mod properties;
mod schema;
