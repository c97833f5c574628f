"""Calls and verdicts as the seed's acceptance tests (tests/test_acceptance*.py) drive ``Breaker``
under ``preset: seed``: a call made, guarded as the shim does, and what its verdict hit."""

from __future__ import annotations

from itertools import count
from typing import Any

from breaker import Allow, Ask, Breaker, Deny, ToolCall, load_config
from breaker.core.reading.fingerprints import fingerprint_call

_ids = count()


def make(**raw: Any) -> Breaker:
    return Breaker(load_config({"preset": "seed", **(raw or {})}))


def tool(name: str, **arguments: Any) -> ToolCall:
    return ToolCall(name, arguments, f"call-{next(_ids)}")


def bash(command: str, **extra: Any) -> ToolCall:
    return tool("bash", command=command, **extra)


def guard(breaker: Breaker, call: ToolCall, agent: int | str = 1, result: str | None = None) -> Allow | Deny:
    """What the shim does for one call: preflight (answered with no approver), guard, result."""
    verdict = breaker.decide(agent, call)
    if isinstance(verdict, Deny):
        breaker.record_result(agent, call.call_id, verdict.message)
    elif result is not None:
        breaker.record_result(agent, call.call_id, result)
    return verdict


def kinds(verdict: Allow | Ask | Deny) -> set[str]:
    return {hit.fingerprint.kind for hit in verdict.hits} if isinstance(verdict, (Ask, Deny)) else set()


def keys(verdict: Allow | Ask | Deny) -> set[str]:
    return {hit.fingerprint.key for hit in verdict.hits} if isinstance(verdict, (Ask, Deny)) else set()


def allowed(verdicts: list[Allow | Deny]) -> list[bool]:
    return [isinstance(v, Allow) for v in verdicts]


def fingerprint_keys(call: ToolCall, **raw: Any) -> set[str]:
    return {
        fp.key for fp in fingerprint_call(call, load_config({"preset": "seed", **(raw or {})})).fingerprints
    }


def ping_pong(n: int) -> list[ToolCall]:
    """Loop C's calls: one page fetched under two host spellings, ``--max-time`` churning."""
    spellings = [("https://open-data.canada.ca/", 60), ("https://open.canada.ca/", 30)]
    return [
        bash(f"curl --max-time {t} -s -o /tmp/od.html {url}", description=f"attempt {i}")
        for i, (url, t) in ((i, spellings[i % 2]) for i in range(n))
    ]
