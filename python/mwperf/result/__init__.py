"""The result document: v3 (nodes, edges, chains, calls), the upgrade of older results to it and
the stream view derived from it (docs/architecture.md §2.3)."""
