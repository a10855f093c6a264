"""The roles of a point's agents, by mode (docs/agent-contract.md)."""

MODES = ("roundtrip", "oneway")
ROLES = {"roundtrip": ("pong", "ping"), "oneway": ("sub", "pub")}
"""mode -> (server role, sender role)"""
SENDERS = ("ping", "pub")
MEASURING_ROLE = {"roundtrip": "ping", "oneway": "sub"}
"""mode -> the role whose report carries the measurement"""
