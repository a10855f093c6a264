"""The roles of a point's agents, by mode (docs/agent-contract.md)."""

MODES = ("roundtrip", "oneway", "throughput", "service")
ROLES = {"roundtrip": ("pong", "ping"), "oneway": ("sub", "pub"), "throughput": ("sub", "pub"),
         "service": ("server", "client")}
"""mode -> (server role, sender role)"""
SENDERS = ("ping", "pub", "client")
MEASURING_ROLE = {"roundtrip": "ping", "oneway": "sub", "throughput": "sub", "service": "client"}
"""mode -> the role whose report carries the measurement"""
ONE_WAY = ("oneway", "throughput")
"""the modes of a pub -> sub stream (a throughput stream is one sent as fast as it is taken)"""
