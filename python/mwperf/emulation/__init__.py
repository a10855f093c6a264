"""Emulation of the conditions a robot's middleware runs under: slower CPUs (cpu.py, cgroups.py)
and the links and hosts between the agents."""
