"""A real OpenSSH server in an emulated host, for the --host tests.

``Robot`` makes a network namespace joined to the test's own by a veth pair (10.254.N.1 here,
10.254.N.2 there), generates a host key and a user key, and starts Debian's sshd inside the
namespace on port 2222 with key authentication only. Its address here is added and removed
while no test needs this machine's addresses unchanged (host_addresses.py). It writes an ssh configuration file that
names the user key and a known_hosts file holding the host key (``ssh_config``), or one
without it (``ssh_config_unknown``) for the host-key tests. Everything goes on ``close``.
"""

import os
import re
import secrets
import shutil
import socket
import subprocess
import time
from pathlib import Path

import host_addresses

SSHD = "/usr/sbin/sshd"
PORT = 2222


def run(*argv: str) -> None:
    subprocess.run(argv, check=True, capture_output=True)


def cpu_cgroup_mount() -> str:
    """Shell commands that mount this machine's cpu cgroup hierarchy at the same place (in a
    new mount namespace whose /sys is fresh); empty when there is none."""
    v1 = None
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        before, _, after = line.partition(" - ")
        mount, rest = before.split()[4], after.split()
        if rest[0] == "cgroup2" and "cpu" in Path(mount, "cgroup.controllers").read_text().split():
            return f"mount -t cgroup2 none {mount} && "
        if rest[0] == "cgroup" and "cpu" in rest[2].split(","):
            options = ",".join(o for o in rest[2].split(",") if o in ("cpu", "cpuacct"))
            v1 = (f"mount -t tmpfs cgroups {Path(mount).parent} && mkdir -p {mount} && "
                  f"mount -t cgroup -o {options} cgroup {mount} && ")
    return v1 or ""


def _free_octet() -> int:
    """N of a 10.254.N.0/24 that no address here is on (another robot's: a test run beside)."""
    shown = subprocess.run(["ip", "-4", "-o", "addr", "show"], capture_output=True, text=True,
                           check=False).stdout
    taken = {int(n) for n in re.findall(r"inet 10\.254\.(\d+)\.", shown)}
    return secrets.choice([n for n in range(1, 251) if n not in taken])


class Robot:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        tag = secrets.token_hex(2)
        self.netns, self.veth = f"mwtssh{tag}", f"mwts{tag}"
        octet = _free_octet()
        self.local, self.address = f"10.254.{octet}.1", f"10.254.{octet}.2"
        self.sshd: subprocess.Popen | None = None
        run("ip", "netns", "add", self.netns)
        try:
            run("ip", "link", "add", self.veth, "type", "veth", "peer", "name", "eth0", "netns",
                self.netns)
            with host_addresses.changing():  # not while a Fast DDS test needs shared memory
                run("ip", "addr", "add", f"{self.local}/24", "dev", self.veth)
            run("ip", "link", "set", self.veth, "up")
            run("ip", "-n", self.netns, "addr", "add", f"{self.address}/24", "dev", "eth0")
            run("ip", "-n", self.netns, "link", "set", "eth0", "up")
            run("ip", "-n", self.netns, "link", "set", "lo", "up")
            self._keys_and_config()
            self.start_sshd()
        except BaseException:
            self.close()
            raise

    def _keys_and_config(self) -> None:
        f = self.folder
        for name in ("hostkey", "userkey"):
            run("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(f / name))
        shutil.copy(f / "userkey.pub", f / "authorized_keys")
        (f / "sshd_config").write_text(
            f"Port {PORT}\nListenAddress {self.address}\nHostKey {f / 'hostkey'}\n"
            f"AuthorizedKeysFile {f / 'authorized_keys'}\nPasswordAuthentication no\n"
            "KbdInteractiveAuthentication no\nPermitRootLogin prohibit-password\n"
            "StrictModes no\nUsePAM no\nMaxSessions 64\nMaxStartups 64\n"
            f"PidFile {f / 'sshd.pid'}\nSubsystem sftp internal-sftp\n")
        host_key = (f / "hostkey.pub").read_text().split()
        (f / "known_hosts").write_text(f"[{self.address}]:{PORT} {host_key[0]} {host_key[1]}\n")
        (f / "known_hosts_empty").write_text("")
        for name, known in (("ssh_config", "known_hosts"),
                            ("ssh_config_unknown", "known_hosts_empty")):
            (f / name).write_text(f"Host *\n  IdentityFile {f / 'userkey'}\n"
                                  f"  IdentitiesOnly yes\n  UserKnownHostsFile {f / known}\n"
                                  f"  GlobalKnownHostsFile /dev/null\n")

    @property
    def url(self) -> str:
        return f"ssh://root@{self.address}:{PORT}"

    def start_sshd(self) -> None:
        Path("/run/sshd").mkdir(exist_ok=True)  # sshd's privilege separation folder
        # `ip netns exec` mounts a fresh /sys without cgroups: mount this machine's cpu
        # hierarchy there again (the same one), as a robot has its cgroups mounted.
        self.sshd = subprocess.Popen(["ip", "netns", "exec", self.netns, "sh", "-c",
                                      cpu_cgroup_mount() + 'exec "$@"', "sh", SSHD, "-D", "-e",
                                      "-f", str(self.folder / "sshd_config")],
                                     stdout=subprocess.DEVNULL,
                                     stderr=open(self.folder / "sshd.log", "ab"))
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection((self.address, PORT), timeout=1).close()
                return
            except OSError:
                if self.sshd.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("sshd did not start: "
                                       + (self.folder / "sshd.log").read_text()) from None
                time.sleep(0.05)

    def pids(self) -> list[int]:
        """The processes inside the robot's namespace."""
        done = subprocess.run(["ip", "netns", "pids", self.netns], capture_output=True,
                              text=True, check=False)
        return [int(pid) for pid in done.stdout.split()]

    def processes(self) -> list[str]:
        """Command lines of the processes inside the robot's namespace other than sshd."""
        found = []
        for pid in self.pids():
            try:
                cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            if not cmd.startswith((SSHD, "sshd")):
                found.append(cmd.strip())
        return found

    def close(self) -> None:
        if self.sshd is not None and self.sshd.poll() is None:
            self.sshd.terminate()
            self.sshd.wait(5)
        subprocess.run(["ip", "netns", "pids", self.netns], capture_output=True, check=False)
        for pid in subprocess.run(["ip", "netns", "pids", self.netns], capture_output=True,
                                  text=True, check=False).stdout.split():
            try:
                os.kill(int(pid), 9)
            except OSError:
                pass
        with host_addresses.changing():  # the veth's address goes with the namespace
            subprocess.run(["ip", "netns", "delete", self.netns], capture_output=True,
                           check=False)
            subprocess.run(["ip", "link", "delete", self.veth], capture_output=True, check=False)
