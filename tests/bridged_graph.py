"""The graph the bridged-graph tests run (test_bridge_graph.py, test_bridges_graph_e2e.py): a
robot on the sender side publishing /state to a base on the server side and to a node beside
it (which names no host: the sender side by default), the base answering on /cmd."""

TWO_SIDES = """name: two-sides
nodes:
  - name: robot
    host: a
    publishers: [{topic: /state, rate: 100, payload: 256}]
    subscribers: [{topic: /cmd}]
  - name: base
    host: b
    subscribers: [{topic: /state}]
    publishers: [{topic: /cmd, rate: 50, payload: 64}]
  - name: local
    subscribers: [{topic: /state}]
"""
