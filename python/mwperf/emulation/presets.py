"""Named links (``--link wifi-80211n``, listed by ``mwperf links``), each with where its numbers
come from. A preset is just a spec in the links.py grammar; items after it on the command line
override it (``--link lte,loss=2%``).

The numbers describe a typical link of that kind, not a worst case; each ``source`` says what
they rest on. Where a standard fixes a number (a rate, a frame size, a back-off window) the
standard is cited; where only measurements exist, the figure is a round value inside the range
the cited source reports, and says so.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class Preset:
    """A named link: its spec, what it models, and the source of its numbers."""

    spec: str
    about: str
    source: str


PRESETS: dict[str, Preset] = {
    "ethernet-1g": Preset(
        "delay=5us,rate=1gbit,frame=1538/38,mtu=1500,queue=1MiB",
        "Gigabit Ethernet through one switch",
        "IEEE 802.3: 1000 Mbit/s; per frame 38 bytes besides the IP packet (preamble+SFD 8, "
        "header 14, FCS 4, inter-frame gap 12), MTU 1500; ~5 us for a store-and-forward switch "
        "hop is a round figure for a 1500-byte frame at 1 Gbit/s (12 us serialization is "
        "modelled by the rate)"),
    "wifi-80211n": Preset(
        "delay=2ms,jitter=1.5ms,dist=pareto,loss=0.5%,rate=100mbit,mtu=1500,queue=256KiB",
        "802.11n home/office WiFi, one hop to the access point",
        "IEEE 802.11n-2009: 2x2 MIMO at 40 MHz has a 300 Mbit/s PHY rate, of which MAC "
        "efficiency leaves roughly a third to a half for TCP (rate 100 Mbit/s); Sui et al., "
        "'Characterizing and Improving WiFi Latency in Large-Scale Operational Networks', "
        "MobiSys 2016: WiFi hop latencies of milliseconds with a long tail (a Pareto jitter), "
        "and residual loss after MAC retries below 1 %"),
    "lte": Preset(
        "delay=25ms,jitter=5ms,dist=normal,loss=0.1%,up:rate=10mbit,down:rate=30mbit,mtu=1428,"
        "queue=512KiB",
        "4G/LTE mobile data to a server near the operator's core",
        "3GPP TR 25.913 sets < 5 ms one-way user-plane latency in the radio network only; "
        "measured end-to-end RTTs of deployed LTE are typically 40-70 ms (OpenSignal's public "
        "LTE latency reports), so 25 ms each way; 10/30 Mbit/s up/down is a round typical "
        "throughput; MTU 1428 after GTP-U tunnel overhead as commonly configured"),
    "wan-internet": Preset(
        "delay=30ms,jitter=2ms,dist=normal,loss=0.1%,rate=100mbit,mtu=1500,queue=1MiB",
        "a continental internet path between two sites",
        "ITU-T Y.1541 QoS class 0/1 objectives: one-way delay <= 100 ms, delay variation "
        "<= 50 ms, loss ratio <= 1e-3 (so loss 0.1 %); 30 ms one way ~ 3000 km of fibre at "
        "2e8 m/s plus routing"),
    "satellite": Preset(
        "delay=280ms,jitter=5ms,dist=normal,loss=0.5%,up:rate=5mbit,down:rate=20mbit,mtu=1500,"
        "queue=1MiB",
        "geostationary satellite internet (one hop up and down)",
        "RFC 2488 section 2: one-way propagation through a GEO satellite is ~240-280 ms "
        "(35 786 km altitude, up and down at the speed of light); 5/20 Mbit/s and 0.5 % loss "
        "are round consumer-service values"),
    "serial-115200": Preset(
        "rate=115200bit,overhead=8n1,mtu=1006,queue=4KiB",
        "an RS-232/UART link at 115200 baud carrying IP (SLIP), as in seeds 001/004",
        "EIA/TIA-232 asynchronous framing 8N1 = 10 bits on the wire per byte (11520 bytes/s); "
        "RFC 1055 (SLIP): MTU 1006; a 4 KiB queue is the Linux tty flip-buffer order of size"),
    "ieee802154-250k": Preset(
        "rate=250kbit,frame=127/25,backoff=2.24ms,delay=320us,mtu=1280,queue=8KiB",
        "IEEE 802.15.4 radio at 2.4 GHz (Zigbee/6LoWPAN/Thread), as in seed 003",
        "IEEE 802.15.4-2006: O-QPSK at 2.4 GHz = 250 kbit/s, aMaxPHYPacketSize 127 bytes; "
        "RFC 4944: 25 bytes of MAC header+FCS leave 102 per frame, IPv6 MTU 1280 (IP headers "
        "are sent uncompressed here: no 6LoWPAN header compression); unslotted CSMA-CA with "
        "macMinBE 3: a random back-off of 0-7 unit periods of 20 symbols x 16 us = 0-2.24 ms "
        "per frame, plus CCA (8 symbols) and RX-to-TX turnaround (12 symbols) = 320 us delay"),
    "lossy-10": Preset(
        "loss=10%",
        "10 % random loss each way, nothing else",
        "seed 004's loss levels (1/10/60 %), issue 5's resilience scenario"),
    "corrupt-1": Preset(
        "corrupt=1%",
        "1 % of packets with one bit flipped each way (dropped by the receiver's checksum)",
        "seed 004's corruption levels (1/10 %), issue 5's resilience scenario"),
}
