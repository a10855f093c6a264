"""Emulation of the conditions a robot's middleware runs under: slower CPUs (cpu.py, cgroups.py),
and hosts joined by links with delay, jitter, loss, corruption, duplication, reordering, rate
limits, MTU and outages (links.py: the ``--link`` grammar, presets.py: the named links, hosts.py:
the namespaces, topology.py: which hosts, links and placement, with addressing and routes,
netem.py and userspace.py: the two backends, network.py: all of it for a run).
"""
