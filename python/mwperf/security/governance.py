"""The governance document of a ``--secure`` mode (DDS-Security 1.1, §9.4.1.2): one domain rule
for every domain, no unauthenticated participant, join and topic access control on, and the
mode's protection kind (modes.PROTECTION) for RTPS messages, metadata and data."""

from .modes import PROTECTION

DOMAINS = (0, 230)
"""every DDS domain id (the run picks its own)"""


def governance(mode: str) -> str:
    kind = PROTECTION[mode]
    low, high = DOMAINS
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<dds xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:noNamespaceSchemaLocation="http://www.omg.org/spec/DDS-Security/20170801/omg_shared_ca_governance.xsd">
  <domain_access_rules>
    <domain_rule>
      <domains><id_range><min>{low}</min><max>{high}</max></id_range></domains>
      <allow_unauthenticated_participants>false</allow_unauthenticated_participants>
      <enable_join_access_control>true</enable_join_access_control>
      <discovery_protection_kind>NONE</discovery_protection_kind>
      <liveliness_protection_kind>NONE</liveliness_protection_kind>
      <rtps_protection_kind>{kind}</rtps_protection_kind>
      <topic_access_rules>
        <topic_rule>
          <topic_expression>*</topic_expression>
          <enable_discovery_protection>false</enable_discovery_protection>
          <enable_liveliness_protection>false</enable_liveliness_protection>
          <enable_read_access_control>true</enable_read_access_control>
          <enable_write_access_control>true</enable_write_access_control>
          <metadata_protection_kind>{kind}</metadata_protection_kind>
          <data_protection_kind>{kind}</data_protection_kind>
        </topic_rule>
      </topic_access_rules>
    </domain_rule>
  </domain_access_rules>
</dds>
"""
