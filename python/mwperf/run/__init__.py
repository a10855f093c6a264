"""What every run shares, a single stream's and a graph's (issue 38, docs/one-path-plan.md step
10): opened (the lease, the place, the daemons, the CPU placement and the agent set)."""
