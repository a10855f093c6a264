"""Graphs: many nodes, mixed streams and chains in one run (issue 24). model (the graph),
parse (mwperf's YAML), irobot (iRobot ros2-performance topologies as they are), check (what
cannot run, before anything starts), builtin (the shipped graphs, finding one by name)."""
