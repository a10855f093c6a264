"""Planning a run (issue 38, docs/architecture.md §2.1): what the options ask, as a graph and its
settings. stream_graph (the single-stream command line as the graph it measures)."""
