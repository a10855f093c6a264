"""Security for a point (``--secure MODE``, issue 42): DDS-Security (what each mode asks of the
middleware, and the per-run public-key infrastructure mwperf makes for it in the point's scratch
folder) and a WireGuard tunnel between emulated hosts (``wireguard``: the tunnel and its keys,
``wg_uapi``: WireGuard's configuration protocol).

One concept per module: ``modes`` (the modes and the governance protection kinds each means),
``pki`` (a CA and X.509 v3 identity certificates), ``smime`` (S/MIME signing by the permissions
CA), ``governance`` and ``permissions`` (the two signed XML documents), ``files`` (the set of
files one identity needs, made together), ``check`` (what is wrong with a set of files, one
line naming the file), ``cyclonedds`` (the ``<Security>`` block of the Cyclone XML
configuration), ``identity_opt`` (a fastdds or rustdds agent's ``--opt security=`` naming one
identity's files, which its Fast DDS shim turns into the ``dds.sec.*`` participant properties
and RustDDS into its builtin plugins' configuration). Everything is made with the ``cryptography`` library (no ``openssl``
subprocess); nothing outlives the scratch folder.
"""

FOLDER = "security"
"""the folder of a secured point's files inside its scratch folder"""
