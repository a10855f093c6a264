"""``--opt security=...`` of a fastdds or rustdds agent for one identity: the files by what each
is (the agent's dds_security.rs reads them; its Fast DDS shim makes them the ``dds.sec.*``
participant properties, RustDDS its builtin plugins' configuration)."""

from .files import Identity


def security_opt(identity: Identity) -> str:
    files = {"ca": identity.ca, "cert": identity.cert, "key": identity.key,
             "governance": identity.governance, "permissions": identity.permissions}
    for path in files.values():
        if "," in str(path):
            raise ValueError(f"a comma in {path} (the option separates its files with commas)")
    return "security=" + ",".join(f"{what}={path}" for what, path in files.items())
