"""The roles of a point's agents, by mode (docs/agent-contract.md)."""

MODES = ("roundtrip", "oneway", "service")
ROLES = {"roundtrip": ("pong", "ping"), "oneway": ("sub", "pub"), "service": ("server", "client")}
"""mode -> (server role, sender role)"""
SENDERS = ("ping", "pub", "client")
MEASURING_ROLE = {"roundtrip": "ping", "oneway": "sub", "service": "client"}
"""mode -> the role whose report carries the measurement"""
