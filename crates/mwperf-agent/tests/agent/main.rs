//! The agent's integration tests through the built binary, one test binary with a module per
//! area (fewer binaries to link: the test suite's cold build).

mod supervise;
mod zenoh_router;
