"""``--opt security=...`` of the fastdds agent for one identity: the files by what each is (the
agent's Fast DDS shim makes them the ``dds.sec.*`` participant properties: its security.rs)."""

from .files import Identity


def security_opt(identity: Identity) -> str:
    files = {"ca": identity.ca, "cert": identity.cert, "key": identity.key,
             "governance": identity.governance, "permissions": identity.permissions}
    for path in files.values():
        if "," in str(path):
            raise ValueError(f"a comma in {path} (the option separates its files with commas)")
    return "security=" + ",".join(f"{what}={path}" for what, path in files.items())
