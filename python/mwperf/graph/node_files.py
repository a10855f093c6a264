"""A graph node's name as the files it has in a run's work folder are named (its spec, report,
rows, logs): graph/run.py's and the parts' that give a node a file of its own (parts/layers.py)."""


def file_name(node: str) -> str:
    """A node's name as a file name (iRobot namespaces have '/'; check.py refuses two nodes
    that would share one)."""
    return "node." + node.replace("/", "_")
