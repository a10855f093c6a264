"""The permissions document of one identity (DDS-Security 1.1, §9.4.1.3): a grant for its
subject, valid as long as its certificate, allowing it to publish and subscribe the given
topics (``*``: every topic) in every partition (``*``: a reader Cyclone creates with a
partition the grant does not list is refused), in every domain; everything else denied."""

import datetime

from .governance import DOMAINS


def _stamp(moment: datetime.datetime) -> str:
    return moment.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")


def permissions(subject: str, grant: str, not_before: datetime.datetime,
                not_after: datetime.datetime, topics: tuple[str, ...] = ("*",)) -> str:
    low, high = DOMAINS
    names = "".join(f"<topic>{topic}</topic>" for topic in topics)
    allowed = (f"<topics>{names}</topics><partitions><partition>*</partition></partitions>")
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<dds xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:noNamespaceSchemaLocation="http://www.omg.org/spec/DDS-Security/20170801/omg_shared_ca_permissions.xsd">
  <permissions>
    <grant name="{grant}">
      <subject_name>{subject}</subject_name>
      <validity><not_before>{_stamp(not_before)}</not_before><not_after>{_stamp(not_after)}</not_after></validity>
      <allow_rule>
        <domains><id_range><min>{low}</min><max>{high}</max></id_range></domains>
        <publish>{allowed}</publish>
        <subscribe>{allowed}</subscribe>
      </allow_rule>
      <default>DENY</default>
    </grant>
  </permissions>
</dds>
"""
