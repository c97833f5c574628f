"""State-aware identity: the same call after the agent changed its workspace is another action.

An edit/test cycle runs the same test after every edit, a build/fix cycle the same build, and a
dev server is polled after each change. Counted verbatim, that honest work looks like a loop.
Under ``identity: state-aware`` each agent keeps a ``Workspace``: a version token per place it
changed (a file it wrote or edited, a file a shell command wrote through a sink, a mutating
command such as ``git commit`` or ``sed -i``). A call's fingerprints are keyed by the tokens of
every place except the ones the call itself writes, so

* running the test again after an edit is a new action (the edited file's token moved);
* a call that only rewrites its own output (``echo tick >> counter``, ``gen > out.json``) is
  not new to itself: its own place is left out, so loop A still counts;
* a shell write's ``sink:`` is the exception: it is keyed by what its file holds now, so a
  script rewritten with new content over a write that landed is a new write (a bash-only agent
  iterating on ``reproduce_issue.py``), while a rewrite over one that did not land is the same
  write again. An append (``>>``) builds on what the file held, so it always makes new content;
* a change that only undoes an earlier one is no change: an edit whose old and new strings
  reverse the previous edit of that file, or content the file already held, leaves the keys
  as they were. A flip-flop (A→B, test, B→A, test, ...) keeps running the same test and is
  caught.

Only a change that worked moves a token: the call's result decides (dsh's ``Error: …`` texts,
a shell's ``[exit code: N]`` / ``[killed by signal: X]`` markers, a shell that could not find a
command it was told to run). Public network targets are left as they are: a remote resource
does not depend on the local workspace.

Pure and bounded: a call and a result in, keys out; at most ``MAX_PLACES`` places per agent.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal, NamedTuple

from breaker.core.history.tokens import place_digest, token_of
from breaker.core.reading import (
    COMMAND_ARGS,
    FETCHERS,
    SHELL_TOOLS,
    Findings,
    Fingerprint,
    ShellScript,
    ToolCall,
    canonical_json,
    condensed,
    lex_shell,
    may_change,
    may_run,
    normal_path,
    path_argument,
    redirects_into_a_file,
    runs_code,
    shell_text,
    strip_prefix,
    succeeded,
)
from breaker.core.reading.volatile import content_of, said

#: Places remembered per agent; past this the oldest is forgotten (its change no longer keys calls).
MAX_PLACES = 1024
#: Undoable edits, and contents held before, remembered per place.
MAX_EDITS = 64
#: Target kinds that name a network resource: left unkeyed unless the call is purely local.
NETWORK_KINDS = frozenset({"net", "host", "site", "family"})
#: The HTTP clients: the programs that fetch, not the ones that read what was fetched.
FETCHER_NAMES = frozenset(FETCHERS)
#: Volume budgets count calls whatever the workspace holds.
UNKEYED_KINDS = frozenset({"verb"})

_CONTENT_ARGS = ("content", "file_text")
_OLD_ARGS = ("old_string", "old_str")
_NEW_ARGS = ("new_string", "new_str")
#: The argument names of what a call writes by path: content, or an edit (its pairs, or a list).
_WRITE_ARGS = frozenset({*_CONTENT_ARGS, *_OLD_ARGS, *_NEW_ARGS, "edits"})
#: Redirections that append to their file rather than replace it.
_APPENDING = (">>", "&>>")
#: Commands that change the workspace without a redirect: verb -> the subcommands that do (empty: all).
MUTATING_COMMANDS: dict[str, frozenset[str]] = {
    verb: frozenset(subcommands.split())
    for verb, subcommands in {
        "git": "add am apply checkout cherry-pick commit merge mv pull push rebase reset restore revert rm "
        "stash switch tag",
        "npm": "add ci i install remove uninstall update",
        "pnpm": "add i install remove update",
        "yarn": "add install remove upgrade",
        "pip": "install uninstall",
        "pip3": "install uninstall",
        "uv": "add pip remove sync",
        "cargo": "add install remove update",
        "go": "get install",
        "kubectl": "apply create delete patch replace rollout scale",
        "rm": "",
        "mv": "",
        "cp": "",
        "mkdir": "",
        "touch": "",
        "ln": "",
        "patch": "",
    }.items()
}
#: The words a program that may run code is looked for among, past its wrappers and assignments.
_PREFIX_WORDS = 8
#: Commands that change a file in place only with an ``-i`` flag.
IN_PLACE_COMMANDS = frozenset({"sed", "perl"})
#: What a key keyed by the workspace state carries after the key as read: `` @workspace:<state>``.
WORKSPACE_MARK = " @workspace:"
#: The place of a call that may have changed what later calls read (``reading.may_change``).
CHANGED = "call:"
#: The place of a shell line that ran code (``reading.runs_code``): it holds what the run answered.
RAN = "ran:"


Edit = tuple[tuple[str, str], ...]


class Effect(NamedTuple):
    """What one call changes when it works: the places it writes and the token each then holds.

    An edit's token is computed when it lands (it depends on the place's history), so for an
    edit ``tokens`` is empty and ``edit`` holds its (old, new) pairs. (A tuple: one is made for
    every call that writes.)
    """

    places: tuple[str, ...]
    tokens: tuple[str, ...] = ()
    edit: Edit = ()
    appends: frozenset[str] = frozenset()  # the places it appends to: their new content builds on the old
    answered: bool = False  # a possible change: its place's token is the answer it brings
    ran: frozenset[str] = frozenset()  # the places of code it ran: each holds what the run answered
    run: str = ""  # a shell line's command key: its places hold the token of the whole line
    said: tuple[str, ...] = ()  # what the call said (its id, its texts): not news when quoted back


NO_EFFECT = Effect(())


@dataclass(slots=True)
class _Place:
    """One changed place: what it holds now, how it got there, and what it has held before."""

    content: str | None = None  # the token of what it holds; None = as the agent found it
    identity: str | None = None  # the token calls are keyed by: the last content never held before
    edits: list[tuple[str | None, Edit]] = field(default_factory=list)  # (content before, edit)
    held: set[str | None] = field(default_factory=lambda: {None})
    moved: bool = False  # code a line ran: its answer changed between two of its runs (a poll)
    digest: int = 0  # ``place_digest`` of its identity (0: none), which the state holds until it moves


class Workspace:
    """One agent's changes: per place its tokens and undoable edits, and calls awaiting results."""

    __slots__ = ("_changes", "_last", "_pending", "_places", "_xor", "known_state")

    def __init__(self) -> None:
        self._places: dict[str, _Place] = {}  # insertion order = age
        self._xor = 0  # the XOR of every (place, identity token) digest: the whole state in one number
        # The state of what the agent is known to have changed (files, mutating commands), without
        # the possible changes of tools the breaker does not know: those are judged by the answers
        # that follow them (``progress``), not taken for a change of everything. A field, not a
        # property: every call reads it twice.
        self.known_state = 0
        self._changes = 0  # possible changes that landed: each is new, whatever it answered
        self._pending: dict[str, Effect] = {}
        self._last: tuple[str, Effect] = ("", NO_EFFECT)

    def identify(self, call: ToolCall, fingerprints: Iterable[Fingerprint]) -> tuple[Fingerprint, ...]:
        """``fingerprints`` keyed by the workspace state, leaving out the places ``call`` writes;
        a ``sink:`` is keyed by what its own file holds as well."""
        fingerprints = tuple(fingerprints)
        effect = effect_of(call, fingerprints)
        self._last = (call.call_id, effect)
        state = self._xor
        places = self._places
        for name in effect.places:
            place = places.get(name)
            if place is not None:
                state ^= place.digest
        # What a key keyed by this state carries, spelled once for the call's keys (a sink's aside).
        mark = f"{WORKSPACE_MARK}{state:016x}" if state else ""
        keyed: list[Fingerprint] = []
        consumers = None  # read for the first address fetched (most calls fetch none)
        for fp in fingerprints:
            kind = fp.kind
            if kind in NETWORK_KINDS and not fp.local:  # fetched: keyed by what reads it, if any
                if consumers is None:
                    consumers = _consumers(fingerprints)
                keyed.append(Fingerprint(kind, f"{fp.key} |{consumers}", fp.local) if consumers else fp)
            elif kind == "sink":
                sink_state = state ^ self._digest_of(_sink_place(fp), "content")
                keyed.append(
                    Fingerprint(kind, f"{fp.key}{WORKSPACE_MARK}{sink_state:016x}", fp.local)
                    if sink_state
                    else fp
                )
            elif state == 0 or kind in UNKEYED_KINDS:  # nothing changed yet: the plain key
                keyed.append(fp)
            else:
                keyed.append(Fingerprint(kind, fp.key + mark, fp.local))
        return tuple(keyed)

    @property
    def state(self) -> int:
        """The whole workspace state as one number (0: nothing changed yet)."""
        return self._xor

    @property
    def identified(self) -> Effect:
        """What the call identified last changes when it works (``effect_of``)."""
        return self._last[1]

    def expect(self, call_id: str, effect: Effect | None = None) -> None:
        """The call was allowed: its effect (as ``identified`` read it; None: the call identified
        last, if it is this one) waits for the call's result."""
        if effect is None:
            identified, effect = self._last
            if identified != call_id:
                return
        if call_id and effect.places:
            self._pending[call_id] = effect
            if len(self._pending) > MAX_PLACES:  # a result that never came
                del self._pending[next(iter(self._pending))]

    def settle(self, call_id: str, text: str) -> None:
        """The call's result arrived: a change that worked gives its places their new content."""
        effect = self._pending.pop(call_id, None)
        if effect is None or not succeeded(text):
            return
        tokens = effect.tokens
        if effect.run:  # a shell line: every place it wrote holds the line
            tokens = (token_of("run", effect.run),) * len(effect.places)
        if effect.answered:  # each possible change that landed is a change: its own token
            self._changes += 1
            tokens = (token_of("answer", text, self._changes),)
        for name, token in zip(effect.places, tokens or (None,) * len(effect.places), strict=True):
            place = self._places.pop(name, None) or _Place()
            if name in effect.ran:  # what code it ran wrote is told by its answer
                token = token_of("ran", content_of(text, effect.said))
                place.moved = place.moved or place.content not in (None, token)
            self._places[name] = place  # now the most recently changed
            if token is None:  # an edit: undo the previous one, or push it
                if place.edits and place.edits[-1][1] == reverse(effect.edit):
                    token = place.edits.pop()[0]
                else:
                    place.edits.append((place.content, effect.edit))
                    del place.edits[:-MAX_EDITS]
                    token = token_of("edit", place.content, effect.edit)
            else:
                if name in effect.appends:
                    token = token_of("append", place.content, token)
                place.edits.clear()
            self._hold(name, place, token)
        while len(self._places) > MAX_PLACES:
            oldest = next(iter(self._places))
            self._rekey(oldest, self._places.pop(oldest), None)

    def moved(self, effect: Effect) -> bool:
        """Whether code the call's line runs answered anew between two of its runs: a poll whose
        answer moves (``Progress.moving`` cannot tell: each new answer is a change that restarts it)."""
        return any((place := self._places.get(name)) is not None and place.moved for name in effect.ran)

    def _hold(self, name: str, place: _Place, token: str | None) -> None:
        """The place now holds ``token``; only content it never held before is a change."""
        place.content = token
        if token in place.held:
            return  # an undo, or content written back: the workspace is no different
        if len(place.held) >= MAX_EDITS:
            place.held.clear()
        place.held.add(token)
        self._rekey(name, place, token)

    def _digest_of(self, name: str, token: Literal["content", "identity"]) -> int:
        """The digest of one place's ``content`` or ``identity`` token (0: unchanged)."""
        place = self._places.get(name)
        if place is None:
            return 0
        if token == "identity":
            return place.digest
        return 0 if place.content is None else place_digest(name, place.content)

    def _rekey(self, name: str, place: _Place, identity: str | None) -> None:
        """The place's identity is now ``identity``: the state trades its old digest for the new."""
        digest = 0 if identity is None else place_digest(name, identity)
        moved = place.digest ^ digest
        self._xor ^= moved
        if not name.startswith(CHANGED):
            self.known_state ^= moved
        place.identity, place.digest = identity, digest


def effect_of(call: ToolCall, fingerprints: Iterable[Fingerprint]) -> Effect:
    """What ``call`` would change: a file tool's path, a shell command's sinks and mutations, or,
    for a call of a tool the breaker does not know to only read, whatever it changes, known by
    the answer it brings (``answered``)."""
    arguments = call.arguments if isinstance(call.arguments, dict) else {}
    tool = call.name.lower()
    if tool in SHELL_TOOLS:
        effect = _shell_effect(arguments, fingerprints)
        return effect._replace(said=tuple(said(call))) if effect.ran else effect
    content: str | None = None
    edit: Edit = ()
    if not _WRITE_ARGS.isdisjoint(arguments):  # content or an edit: what it writes by path
        content = text_argument(arguments, _CONTENT_ARGS)
        edit = _edit_pairs(arguments) if content is None else ()
    path = path_argument(arguments) if content is not None or edit else None  # what it writes
    if path is not None:
        place = "file:" + path
        if content is not None:
            return Effect((place,), (token_of("content", content),))
        return Effect((place,), edit=edit)
    if not may_change(tool):
        return NO_EFFECT
    exact = next((fp.key for fp in fingerprints if fp.kind == "exact"), None)
    return Effect((CHANGED + (exact or canonical_json([call.name, arguments])),), answered=True)


def reverse(edit: Edit) -> Edit:
    """The edit that undoes ``edit``: each pair swapped, in reverse order."""
    return tuple((new, old) for old, new in reversed(edit))


def _shell_effect(arguments: dict[object, object], fingerprints: Iterable[Fingerprint]) -> Effect:
    """Sinks, and mutating commands, each hold the token of the whole command that wrote them
    (made when the result comes, from ``Effect.run``); code it ran holds what it answered."""
    command = text_argument(arguments, COMMAND_ARGS)
    if command is None:
        return NO_EFFECT
    cmd_key = None
    places: list[str] = []
    runners = False  # whether any of its programs may run code (most lines run none)
    for fp in fingerprints:  # one pass over them: a line has several
        kind = fp.kind
        if kind == "sink":
            places.append(_sink_place(fp))
        elif kind == "cmd":
            cmd_key = fp.key if cmd_key is None else cmd_key
        elif kind == "verb" and not runners:
            runners = may_run(fp.key[5:])
    cmd_key = command if cmd_key is None else cmd_key
    script = lex_shell(command)
    mutates, ran = _writes(script, runners=runners)
    if mutates:
        places.append("run:" + cmd_key)
    if ran:
        places.append(RAN + cmd_key)
    if not places:
        return NO_EFFECT
    appends = frozenset(places) & _appended(script)
    return Effect(tuple(places), appends=appends, ran=frozenset(places[-1:] if ran else ()), run=cmd_key)


def _sink_place(fp: Fingerprint) -> str:
    return "file:" + fp.key.removeprefix("sink:")


def _appended(script: ShellScript) -> frozenset[str]:
    """The files a command line appends to (``>>``, ``tee -a``), as places (spelled both as
    written and normalised, as a ``sink:`` may be)."""
    targets: list[str] = []
    for part in script.parts:
        if isinstance(part, str):
            continue
        targets.extend(target for operator, target in part.redirects if operator.endswith(_APPENDING))
        if part.words and part.words[0] == "tee" and "-a" in part.words:
            targets.extend(word for word in part.words[1:] if not word.startswith("-"))
    return frozenset("file:" + path for target in targets for path in (target, normal_path(target)))


def _writes(script: ShellScript, depth: int = 2, *, runners: bool = True) -> tuple[bool, bool]:
    """Whether a command line makes a change its words name (a mutating command, ``sed -i``), and
    whether it runs code whose writes only its answer tells (``reading.runs_code``; a shell's
    ``-c`` text is read as a line of its own, where a redirection into a file is such a write);
    ``runners``: whether any of its programs may run code (``reading.may_run``: else none does)."""
    mutates = ran = False
    for part in script.parts:
        if isinstance(part, str) or not part.words:
            continue
        words = part.words
        verb = words[0].rsplit("/", 1)[-1]
        subcommands = MUTATING_COMMANDS.get(verb)
        if (
            subcommands is not None and (not subcommands or (len(words) > 1 and words[1] in subcommands))
        ) or (verb in IN_PLACE_COMMANDS and any(word.startswith("-i") for word in words[1:])):
            mutates = True
        elif runners and not ran and any(may_run(word.rsplit("/", 1)[-1]) for word in words[:_PREFIX_WORDS]):
            words = words[strip_prefix(words, Findings({}))[1] :]
            text = shell_text(words) if depth else None
            if text is None:
                ran = runs_code(words)
            else:  # a line of its own: what it runs, and the files it redirects into
                inner = lex_shell(text)
                ran = any(_writes(inner, depth - 1)) or redirects_into_a_file(inner)
    return mutates, ran


def _edit_pairs(arguments: dict[object, object]) -> Edit:
    """An edit's (old, new) pairs: one from old/new strings, or several from an ``edits`` list;
    a long text by its digest (``condensed``), which is all an edit is compared by."""
    old, new = text_argument(arguments, _OLD_ARGS), text_argument(arguments, _NEW_ARGS)
    if old is not None and new is not None:
        return ((condensed(old), condensed(new)),)
    listed = arguments.get("edits")
    pairs: list[tuple[str, str]] = []
    if isinstance(listed, list):
        for item in listed:
            if isinstance(item, dict):
                old, new = text_argument(item, _OLD_ARGS), text_argument(item, _NEW_ARGS)
                if old is not None and new is not None:
                    pairs.append((condensed(old), condensed(new)))
    return tuple(pairs)


def _consumers(fingerprints: Iterable[Fingerprint]) -> str:
    """The programs of a command line other than its HTTP clients, sorted (empty: none): what
    reads what it fetched. A page fetched and fed to ``grep``, then to ``sed``, then to ``awk`` is
    three ways of reading it, not one fetch repeated; a fetch that only changes its client, its
    wrapper or its flags keeps the same target key."""
    verbs = sorted({fp.key[5:] for fp in fingerprints if fp.kind == "verb"} - FETCHER_NAMES)
    return " ".join(verbs)


def text_argument(arguments: dict[object, object], names: tuple[str, ...]) -> str | None:
    """The first of ``names`` whose value is a string, else None."""
    for name in names:
        value = arguments.get(name)
        if isinstance(value, str):
            return value
    return None
