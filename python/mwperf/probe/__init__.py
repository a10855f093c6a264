"""Probe a live system's topics without touching it: subscribe as an ordinary subscriber, log
each arrival, and summarise rate, its stability, inter-arrival jitter, gaps, bursts, sizes and
header age (``listen`` runs the subscriber, ``stats`` computes, ``render`` prints)."""
