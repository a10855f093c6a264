"""The ``<Security>`` block of a Cyclone DDS configuration for one identity, merged with the
configuration the agent would otherwise use (a user's ``--opt config``, else the agent's own
loopback configuration): Cyclone takes a comma-separated list of XML fragments and files and
merges them in order, so the security fragment goes after the base unchanged."""

from .files import Identity


def security_block(identity: Identity) -> str:
    """A ``<CycloneDDS>`` fragment with the builtin plugins (auth, access control, crypto)."""
    def uri(path: object) -> str:
        return f"file:{path}"
    return ("<CycloneDDS><Domain Id=\"any\"><Security>"
            "<Authentication>"
            f"<IdentityCA>{uri(identity.ca)}</IdentityCA>"
            f"<IdentityCertificate>{uri(identity.cert)}</IdentityCertificate>"
            f"<PrivateKey>{uri(identity.key)}</PrivateKey>"
            "</Authentication>"
            "<AccessControl>"
            f"<PermissionsCA>{uri(identity.ca)}</PermissionsCA>"
            f"<Governance>{uri(identity.governance)}</Governance>"
            f"<Permissions>{uri(identity.permissions)}</Permissions>"
            "</AccessControl>"
            "</Security></Domain></CycloneDDS>")


def merged_config(base: str, identity: Identity) -> str:
    """``base`` (XML text or a file URI list) followed by the identity's security fragment."""
    if "," in str(identity.ca.parent):
        raise ValueError(f"a comma in the security folder {identity.ca.parent} (Cyclone splits "
                         "its configuration list at commas)")
    return f"{base},{security_block(identity)}"
