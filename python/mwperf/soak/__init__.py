"""Soak runs: every agent's and daemon's RSS, open descriptors, threads and (``--count-allocs``)
live heap sampled once a second from /proc (procfs, sampler), their growth over the steady state
as a least-squares slope (growth), and pass/fail gates on growth, samples, matching time,
latency and loss (gates; ``--gate`` and a scenario's ``gates:``), shown by show."""
