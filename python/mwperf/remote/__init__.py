"""Real hosts over SSH: a robot or a second computer as a first-class host of a run.

``--host NAME=ssh://user@host[:port]`` (scenario key ``host``) names a machine reached with the
system's OpenSSH client; ``--place ROLE=NAME,...`` puts agents and daemons on it. Pieces:

- ``target.py``: the ``ssh://`` address and the ``--host``/``--place`` values, checked.
- ``ssh.py``: one multiplexed OpenSSH connection per host (a ControlMaster mwperf owns), the
  host key verified, keys or agent only; every remote command an argument vector, quoted.
- ``deploy.py``: the remote agent: reused when its ``--version`` line is this one's, else copied
  into a per-user cache there (checksum-verified), or one line naming the architecture to build.
- ``supervised.py``: a process on the remote host, run under ``mwperf-agent supervise`` (its line
  protocol: docs/agent-contract.md), which ends it when the SSH channel closes.
- ``hosts.py``: the hosts of a run or sweep: connections reused across points, each host's
  address as the other side sees it, its facts, and the clean-up of what a dead mwperf left.
"""
