"""How host names are compared: one folding for ``hostAliases`` (checked here, in the
configuration) and for the hosts of URLs (``breaker.core.reading.urls``), so an alias matches
every spelling of its host."""

from __future__ import annotations


def fold_host_name(spelled: str) -> str:
    """A host name as hosts are compared (URLs and ``hostAliases`` alike): lowercase, no trailing
    dot, an internationalised name in its ASCII form (``bücher.de`` is ``xn--bcher-kva.de``, the
    name DNS asks for; one that has none stays as written), no ``www.`` in front of a name that
    still has a dot (``www.example.org`` is ``example.org``, while ``www.org`` is a name of its
    own, not the bare label ``org``)."""
    name = spelled.lower().rstrip(".")
    if not name.isascii():
        try:  # noqa: SIM105  (the core imports no contextlib: tests/test_layers.py)
            name = name.encode("idna").decode("ascii")
        except UnicodeError:  # no ASCII form (a label too long): kept as written
            pass
    return name[4:] if name.startswith("www.") and "." in name[4:] else name
