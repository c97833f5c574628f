"""The protocol between the Node shim and the Python worker: the reference, and its public names.

The frame codec is ``breaker.frames``; the message set (request types, validation, replies) is
``breaker.ops``. Both are re-exported here.

Framing
    A 4-byte big-endian length, then one msgpack map whose first key is ``id``; the limits
    (``MAX_FRAME_BYTES``, ``MAX_FRAME_VALUES``) and how the worker answers and steps over a frame
    it cannot read are in ``breaker.frames``' docstring.

Requests (shim → worker)
    Every request is a map with ``id`` (int) and ``op`` (str). The worker answers every request
    with exactly one reply carrying the same ``id``, in request order; a reply is
    ``{id, ok: true, ...fields}`` or ``{id, ok: false, error: str}``. A frame whose ``id`` cannot
    be read (no map with an int ``id`` first) is answered with ``id: null``.

    ============  ===================================  =========================================
    op            request fields                       ok reply fields
    ============  ===================================  =========================================
    configure     config: raw map | nil,               settings: {countedTools, onWorkerFailure,
                  known: bool (optional; accepted      guardTimeoutMs, startTimeoutMs, window,
                  before: no pydantic check),          maxAgents, notices, condensedChars,
                  rows: [{id, keys, name}] (optional:  operations, resultTextChars,
                  the patch rows dsh composed)         factFields, factTextChars,
                                                       breaks, grouping, workerFailureDenial, strays:
                                                       [str] (a line each:
                                                       ``breaker.strayrows``)}
    guard         agent: int, call: str, name: str,    deny: str | nil (``Breaker.decide``),
                  args: any, standIn: bool (optional)  counted: str (a denial's counts, under
                                                       ``logDenials``: ``Breaker.denial``),
                                                       passes: int, conditional (when given),
                                                       standIn: any (when asked)
    preflight     agent, call, name, args, standIn     ask: str | nil, deny: str | nil, counted,
                                                       decided: bool (``Breaker.precheck``: the
                                                       ask, else the guard's verdict as of now
                                                       when ``decided``, kept for ``commit``),
                                                       passes, conditional (when given)
    commit        agent: int, call: str                -                 (``Breaker.commit``: the
                                                       kept verdict of that call takes effect;
                                                       an error when none is kept)
    result        agent: int, call: str, text: str,    notices: [{text, summary}], only when
                  outcome: map | nil                   some are owed (``record_result``); passes,
                                                       conditional (when given)
    human         agent: int                           -                 (``human_message``)
    step          agent: int                           -                 (``new_step``: the
                                                       agent's model turn began; it is entered
                                                       at the agent's next counted call)
    forget        agent: int                           -
    stats         -                                    stats: map
    shutdown      -                                    - (then the worker exits 0)
    ============  ===================================  =========================================

    ``reply`` (optional) says where the reply goes: absent, on stdout in request order (the shim
    blocks for it); ``"later"``, on the worker's second reply stream, in request order (the
    shim's event loop reads it: the ``later`` FIFO, breaker/streams.py, or the fd ``--later-replies FD``
    names, else stdout serves); ``"errors"``,
    nowhere unless the request failed, and then on that second stream (events nobody waits for).

    ``preflight`` serves ``tools/pre-execute``, which dsh awaits before the guard: the shim uses a
    ``decided`` verdict in the guard, without a round trip, only when nothing else was sent for
    that agent since (but preflights that did not ask), and then sends ``commit``; otherwise the
    guard sends ``guard`` as usual (node-shim/call/ahead.js). ``commit`` of a call with no kept verdict
    is an error reply and changes nothing: the two sides disagree about the ahead-of-guard rule
    (``agents.OPERATIONS``, which the shim gets in ``operations``). The shim sends a ``commit``
    only to the worker that kept the verdict; a replacement rebuilds that call from the journal's
    ``guard``.

    ``passes`` (``Breaker.passes``, after the request) is how many more of that agent's calls
    will surely be allowed. The shim lets that many through at pre-execute without asking,
    counting every call it has committed or let through since it sent the request, and commits
    each at its pre-execute: a ``guard`` event (``reply: "errors"``) sent when its event loop is
    idle and always before any later request (node-shim/call/ahead.js).
    A ``result`` whose reply is awaited (not an event) brings ``passes`` too, as of once it is
    recorded: the shim sends each result that way where its event loop reads the replies, so the
    agent's next call usually finds a pass waiting for it. A result's reply leaves ``passes`` and
    ``conditional`` out when the worker read another awaited result of the same agent after it, in
    the same read (``superseded``): that one's reply brings them, as of later, and a reply without
    them grants nothing (the shim keeps the promise it holds).

    ``conditional`` (``Breaker.conditional``; absent when it promises no more than ``passes``, by
    count or by group) is ``{passes: int, digests: [int]}``: how many of the agent's calls, counted
    as ``passes`` is, surely pass while every result of that agent sent after the request is *news*.
    A result breaks the condition, in which the shim lets no call through beyond ``passes`` (it
    waits for a newer answer), when: its digest is among ``digests`` or is that of a result sent
    before it since the request (the digest: SHA-256 of the tool's name, a NUL byte and the result's
    ``text`` as sent, in UTF-8; its first 6 bytes as a big-endian integer); its ``text`` holds one
    of ``breaks.marks`` anywhere, starts with one of ``breaks.prefixes``, or holds the string of a
    ``breaks.heads`` entry ``[string, units, marks]`` within its first ``units`` UTF-16 code units
    and one of that entry's ``marks`` anywhere; or its ``outcome`` holds
    a field of ``breaks.facts`` with a value not listed for it (a value of another type is not
    listed: ``false`` is not ``0``; an absent field breaks nothing). ``breaks`` comes once, in the
    configure reply. ``breaker.core.reading.news.breaks`` states it in Python;
    node-shim/call/ahead.js (``NewsCheck``) evaluates it, and node-shim/test/conditions.test.js pins
    the two on the same cases. The condition names no rule: why a promise under it holds is the
    worker's (``breaker.core.deciding.passes.conditional``, checked by tests/test_conditions.py). It
    may also hold ``groups: [int]``, ``window: [int]`` (the window's calls, oldest first, each as
    the index of its group in ``groups``, -1 for a call of none named) and ``room: int``: while
    the condition holds, a call beyond those passes passes too when fewer than ``room`` of the
    calls still in its window (the last ``grouping.window`` of the window's calls and of the
    agent's calls committed since the request, in order) are of its group or its stand-ins (its
    tool's loose group; for a URL tool, the calls with no group, named as 0). What a group is
    (``breaker.core.reading.groups``; ``grouping``, in the configure reply, holds the names it
    reads, whether URL tools have groups and the window's size) and why such a call passes
    (tests/test_group_promises.py) are the worker's; node-shim/call/groups.js computes a call's group,
    and node-shim/test/groups.test.js pins it against Python's.

    ``standIn`` (asked for by a call of ``condensedChars`` or more, the configure reply's) is the
    call's arguments with each long text condensed, when that is the same call to ``Breaker``
    (``breaker.core.history.standin``): the shim journals those instead of the call's megabytes, so a
    replacement worker still counts it. Absent when there is none.

    ``keepFrom`` (guard, decided preflight; absent when None) is ``Breaker.history_from``: the
    call from which the agent's calls rebuild what outlives its window (the failure that began a
    streak still alive); the shim's journal keeps that call and those after it.

    ``configure`` must succeed before any other op except ``shutdown``; a config
    that ``load_config`` rejects is answered with ``ok: false`` and the ConfigError text, which
    names the key. A worker configures once: a second ``configure`` is refused (the shim starts a
    new worker for a new configuration), so no stray frame can switch caps off. Unknown extra
    fields are ignored, so a newer shim can talk to this worker; a wrong field type is an error.

An ordered pipe gives the ordering guarantee the shim relies on: an event (``result``, ``human``)
sent before a ``guard`` is applied before that guard is decided.
"""

from __future__ import annotations

from breaker.frames import (
    HEADER_BYTES,
    ID_PEEK_BYTES,
    MAX_FRAME_BYTES,
    MAX_FRAME_VALUES,
    FrameDecoder,
    encode_frame_parts,
    holds_more_values_than,
    parse_request,
    peek_id,
)
from breaker.ops import (
    ERROR_TEXT_CHARS,
    BadRequest,
    Commit,
    Configure,
    Forget,
    Guard,
    Human,
    Preflight,
    Reply,
    ReplyMode,
    Request,
    Result,
    Shutdown,
    Stats,
    Step,
    error_reply,
    ok_reply,
    read_request,
    superseded,
)

__all__ = [
    "ERROR_TEXT_CHARS",
    "HEADER_BYTES",
    "ID_PEEK_BYTES",
    "MAX_FRAME_BYTES",
    "MAX_FRAME_VALUES",
    "BadRequest",
    "Commit",
    "Configure",
    "Forget",
    "FrameDecoder",
    "Guard",
    "Human",
    "Preflight",
    "Reply",
    "ReplyMode",
    "Request",
    "Result",
    "Shutdown",
    "Stats",
    "Step",
    "encode_frame_parts",
    "error_reply",
    "holds_more_values_than",
    "ok_reply",
    "parse_request",
    "peek_id",
    "read_request",
    "superseded",
]
