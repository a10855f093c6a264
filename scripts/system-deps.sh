#!/usr/bin/env bash
# Install the Debian packages the middleware transports need (build and run), only if missing:
#   cyclonedds-dev cyclonedds-tools  Cyclone DDS library + idlc (built into the agent)
#   libfastrtps-dev libfastcdr-dev   Fast DDS 2.x (the agent's fastdds shim is compiled against it)
#   mosquitto mosquitto-clients      MQTT broker (+ clients for interop checks)
#   python3-rosmaster topic-tools    ROS 1 master and the relay used as a foreign pong
#   python3-rosbag python3-sensor-msgs  ROS 1 bags (mwperf bag example, rosbag play) and message types
#   python3-rospy python3-genpy      rospy publishers in the probe's tests, rospy service servers (genpy
#                                    generates their srv class) in the services' tests
#   python3-rosservice               `rosservice call` against mwperf's ROS 1 service server (tests)
#   chromium                         headless browser for the HTML report's test (tests only)
#   iproute2                         ip netns / ip link / tc for --link (emulated hosts and links)
#   openssh-client openssh-server    --host over SSH (the tests run a real sshd in an emulated host)
#   python3-venv                     the wheel's install test (a fresh virtual environment)
#   heaptrack                        --alloc-sites: allocations with their backtraces (heaptrack_interpret)
#   iperf3 sockperf                  the socket transports' reference tools (benchmarks/, and their tests)
#   wireguard-go                     --secure wireguard: a userspace WireGuard tunnel between emulated hosts
#   libssl-dev pkg-config            RustDDS's DDS-Security plugins link OpenSSL (the agent's rustdds)
# With the argument 'bridges': only what building the bridges needs (make bridges; docs/bridges.md):
#   cmake libclang-dev               Cyclone DDS built from source by cyclors, and its bindgen
# As root it installs them (no prompts, no stdin); otherwise it prints the command and goes on
# (the transports needing a missing package then fail with that install line).
set -euo pipefail
PACKAGES=(cyclonedds-dev cyclonedds-tools libfastrtps-dev libfastcdr-dev mosquitto mosquitto-clients python3-rosmaster topic-tools
          python3-rosbag python3-sensor-msgs python3-rospy python3-genpy python3-rosservice
          chromium iproute2 openssh-client openssh-server python3-venv heaptrack iperf3 sockperf wireguard-go
          libssl-dev pkg-config)
if [[ "${1:-}" == "bridges" ]]; then
    PACKAGES=(cmake libclang-dev)
fi

if ! command -v dpkg-query >/dev/null || ! command -v apt-get >/dev/null; then
    echo "mwperf: not a Debian system: install ${PACKAGES[*]} (or equivalents) yourself" >&2
    exit 0
fi
missing=()
for pkg in "${PACKAGES[@]}"; do
    status=$(dpkg-query -W -f '${Status}' "$pkg" 2>/dev/null || true)
    [[ "$status" == "install ok installed" ]] || missing+=("$pkg")
done
if [[ ${#missing[@]} -eq 0 ]]; then
    exit 0
fi
install_line="apt-get install -y --no-install-recommends ${missing[*]}"
if [[ $(id -u) -ne 0 ]]; then
    echo "mwperf: missing Debian packages; as root run: apt-get update && $install_line" >&2
    exit 0
fi
echo "mwperf: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq </dev/null
apt-get install -y -qq --no-install-recommends "${missing[@]}" </dev/null >/dev/null
