"""ROS 1: a rosmaster per point; with ``--pong relay`` topic_tools' relay echoes instead of a
pong agent, and the ping connects to the master with the base name the relay was started for.
ROS 1 nodes advertise their host's address (ROS_IP) across emulated hosts."""

import secrets

from ..daemons import ros1 as daemons
from .hooks import DoctorChecks, Hooks, Plan, Setup


def prepare(setup: Setup) -> Plan:
    master = setup.daemons.start(lambda: daemons.master_spec(setup.workdir,
                                                             *setup.where("rosmaster")))
    if setup.cfg.pong == "relay":
        base = f"mwperf_{secrets.randbits(32):08x}"  # a valid ROS graph name (no '-')
        setup.daemons.start(lambda: daemons.relay_spec(setup.workdir, master.address, base,
                                                       *setup.where("pong")))
        return Plan(None, connect=f"{master.address}#{base}")
    return Plan(master.address)


def agent_env(address: str) -> dict[str, str]:
    return {"ROS_IP": address}


def doctor(check: DoctorChecks) -> list:
    return [check.program("ros1", daemons.MASTER_PROGRAM, daemons.MASTER_PACKAGE, "master",
                          needed=True),
            check.program("ros1 relay", daemons.RELAY_PROGRAM, daemons.RELAY_PACKAGE,
                          "foreign echo for --pong relay", needed=False)]


HOOKS = Hooks(prepare=prepare, doctor=doctor, agent_env=agent_env, relay="topic_tools relay")
