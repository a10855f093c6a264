"""Emulated hosts and links (issue 5): two network namespaces joined by a link with delay,
jitter, loss, corruption, duplication, reordering, rate limits, MTU and outages.

links.py is the ``--link`` grammar, presets.py the named links, hosts.py the namespaces,
netem.py and userspace.py the two backends, network.py puts them together for a run.
"""
