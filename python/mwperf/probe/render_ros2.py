"""The ROS 2 probe's text output: the header line; the QoS incompatibilities first (the usual
reason a topic is silent); the topic table with bandwidth and samples lost (plain DDS topics
marked); each topic's publishers and subscribers (nodes, compact QoS), or why the probe did not
subscribe; the services; then the gaps and caveats of every probe, and what the probe's own
readers did to the system."""

from ..sizes import format_bytes
from .render import header, notes, table
from .ros2_document import Ros2ProbeResult
from .qos_text import qos_text

DDS_MARK = " [dds]"


def render_ros2(result: Ros2ProbeResult) -> str:
    ros2 = result.ros2
    lines = [header(result)]
    found = ros2.get("incompatibilities") or []
    if found:
        lines += ["", f"QoS incompatibilities: {len(found)} writer/reader pair"
                  f"{'s' if len(found) > 1 else ''} will not match (no data flows):"]
        lines += [f"  {i['text']}" for i in found]
    participants = ros2.get("participants") or []
    nodes = sorted({n for p in participants for n in p.get("nodes") or []})
    lines += ["", f"{len(participants)} participants, {len(nodes)} nodes"
              + (f": {', '.join(nodes)}" if nodes else "")]
    names = [t.basic.topic + ("" if e.get("ros") else DDS_MARK)
             for t, e in zip(result.topics, result.extras)]
    extra = [("bandwidth", [_bandwidth(t.bandwidth_bps) for t in result.topics]),
             ("lost", [str(e.get("lost", 0)) if e.get("subscribed") else "-"
                       for e in result.extras])]
    lines += ["", *table(result, names, extra), ""]
    for name, e in zip(names, result.extras):
        lines += _endpoints(name, e)
    for service in ros2.get("services") or []:
        lines.append(f"service {service['name']} ({service['type']}): servers "
                     f"{', '.join(service['servers']) or 'none'}; clients "
                     f"{', '.join(service['clients']) or 'none'}")
    lines.append("")
    lines += notes(result)
    if any(not e.get("ros") for e in result.extras):
        lines.append(f"{DDS_MARK.strip()}: a plain DDS topic (no rt/ prefix), not a ROS 2 topic.")
    if ros2.get("reliable"):
        lines.append("Note: --reliable: the probe's readers were reliable, so reliable writers "
                     "kept samples for it and resent them: this shows what a reliable subscriber "
                     "gets, and the probe changed the system it measured.")
    else:
        lines.append("The probe's readers are best-effort and volatile: writers neither keep "
                     "nor resend samples for it (--reliable shows what a reliable subscriber "
                     "would get).")
    return "\n".join(lines) + "\n"


def _endpoints(name: str, extra: dict) -> list[str]:
    lines = [f"{name}:"]
    for role, key in (("pub", "publishers"), ("sub", "subscribers")):
        for e in extra.get(key) or []:
            who = e.get("node") or f"(no node) {e.get('endpoint')}"
            gone = "" if e.get("alive", True) else " (left)"
            lines.append(f"  {role} {who}  {qos_text(e.get('qos') or {})}{gone}")
    if not extra.get("subscribed"):
        lines.append(f"  not subscribed: {extra.get('why_not')}")
    elif extra.get("lost"):
        lines.append(f"  {extra['lost']} samples lost to the probe (DDS sample-lost status)")
    return lines


def _bandwidth(bps: float | None) -> str:
    return f"{format_bytes(round(bps))}/s" if bps else "-"
