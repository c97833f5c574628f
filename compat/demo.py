"""`npm run demo`: boot a real dsh with the plugin, let a scripted model loop three ways, and
tell what happened, in sentences, from dsh's own session log; the last line is the ``rtb replay``
command that shows the same stops.

    python compat/demo.py --home HOME --kept DIR          # HOME: a DSH_HOME prepared by compat/setup.sh
    python compat/demo.py --profile DIR --dsh PREFIX --kept DIR    # a user's profile, the README's dsh

With ``--profile`` the demo runs in that profile (its bundles, its ``cordis.patch.yml``) of the dsh
home it is in, on the dsh installed in PREFIX, and the scripted model is declared in a settings file
in ``--kept`` that a ``--patch`` overlay points dsh's ``settings`` row at: the user's settings.yaml is
neither read nor changed. The scenario's working folder is in ``--kept`` too (demo.sh gives a
temporary folder there, so the clone keeps nothing; with ``--home``, .demo/ in the clone).

Exit status: 0 when every loop was stopped before it ran a fifth time and no denied call ran.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import socket
import sys
import textwrap
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from dsh_run import CLOSED_PROXY, Attempt, Outcome, Target
from mock_model import MODEL_ID
from run import play
from scenarios import SCENARIOS, counter_lines

DEMO = next(scenario for scenario in SCENARIOS if scenario.name == "demo")
HIT = re.compile(r"^- (\w+:.*) (\d+)/(\d+)$")
#: Why a denied call was not run: the denial's first line after "was not run: ".
WHY = re.compile(r"was not run: (.*?)(?: \(sameResultLimit: [^)]*\))?\.")
WIDTH = 100
DSH_VERSION = "0.1.0-rc.8"

#: The three loops of the demo session: (first call, title, what the model does, why it is one
#: action repeated).
LOOPS = (
    (
        1,
        "Loop A: the same call, verbatim",
        "The model appends a line to counter.txt with `{command}`, five times, with exactly the same "
        "arguments each time.",
        "The five calls are identical, so they are one action repeated.",
    ),
    (
        6,
        "Loop B: a decoy argument changes, the command does not",
        "The model runs `{command}` five times, giving each call a new `description` ({descriptions}) "
        "and a new `timeoutMs`, so no two calls are byte-identical.",
        "The breaker deletes decoy arguments such as `description` and `timeoutMs` before it compares "
        "calls, so the five calls are the same call.",
    ),
    (
        11,
        "Loop C: two spellings of one host, and a timeout that keeps changing",
        "The model fetches the same portal five times, alternating between https://open-data.canada.ca/ "
        "and https://open.canada.ca/ and between `--max-time 60` and `--max-time 30`, writing to the "
        "same file each time.",
        "The breaker folds open-data.canada.ca into open.canada.ca and drops volatile flags such as "
        "`--max-time`, so the five fetches are one resource (`net:`), one command (`cmd:`) and one "
        "output file (`sink:`).",
    ),
)

PROXY_NOTE = (
    f"About the fetches: every URL in this demo is fetched through `curl -x {CLOSED_PROXY}`, a proxy "
    "address on this machine where nothing listens, so no request leaves the machine. curl fails at "
    "once with `curl: (7) Failed to connect`, and dsh's bash tool reports `[exit code: 7]`: that "
    "failure is the result the model keeps getting and keeps retrying."
)


def say(text: str, indent: str = "") -> None:
    """A paragraph, wrapped at spaces only: a path or a fingerprint is never cut."""
    print(
        textwrap.fill(
            text,
            WIDTH,
            initial_indent=indent,
            subsequent_indent=indent,
            break_long_words=False,
            break_on_hyphens=False,
        )
    )


def hits_of(attempt: Attempt) -> list[tuple[str, str, str]]:
    """The fingerprints a denial names: (key, count, cap), whole."""
    return [(m[1], m[2], m[3]) for m in map(HIT.match, attempt.text.splitlines()) if m]


def first_line(text: str) -> str:
    return text.splitlines()[0] if text else ""


def result_summary(text: str) -> str:
    """What a call returned, in one line: curl's error and the exit code, or the first line."""
    lines = [line.strip() for line in text.splitlines() if line.strip() not in ("", "[stdout]", "[stderr]")]
    telling = [line for line in lines if line.startswith(("curl: ", "[exit code"))]
    # curl says how long it took to fail; that varies and is not what the model learns
    return re.sub(r" after \d+ ms", "", " ".join(telling or lines[:1])) or "(no output)"


def tell_loop(outcome: Outcome, first: int, title: str, story: str, why: str, *, under: str | None) -> bool:
    """One loop of five calls: what the model did, what ran, what was denied and why; ``under``:
    the configuration file the session ran under (None: the defaults)."""
    calls = outcome.attempts[first - 1 : first + 4]
    print(title)
    print("-" * len(title))
    command = str(calls[0].arguments.get("command", ""))
    shown = command.replace(str(outcome.work) + "/", "")
    descriptions = ", ".join(f"'{c.arguments.get('description')}'" for c in calls)
    say(story.format(command=shown, descriptions=descriptions))
    ran = [n for n, call in enumerate(calls, first) if call.is_error is False]
    denied = [n for n, call in enumerate(calls, first) if call.text.startswith("Error: REPEAT_TOOL_BLOCKED")]
    results = sorted({result_summary(call.text) for call in calls if call.is_error is False})
    if ran:
        say(f"Calls {ran[0]} to {ran[-1]} of the session ran; each returned: {'; '.join(results)}")
    if not denied:
        say(
            f"No call of this loop was denied under {under}."
            if under
            else "No call of this loop was denied: the demo failed here."
        )
        print()
        return False
    stopped = denied[0]
    reason = WHY.search(outcome.attempts[stopped - 1].text)
    said = f" the breaker's reason: {reason[1]}." if reason else ""
    say(
        f"Call {stopped} was denied before it ran, the {ordinal(stopped - first + 1)} call of the loop;"
        f"{said} {why}"
    )
    hits = hits_of(outcome.attempts[stopped - 1])
    if hits:
        say("What it counted (this call's count / the limit):")
    for key, count, cap in hits:
        print(f"    {key}  {count}/{cap}")
    say(
        "Instead of a result the model received an error that starts as below, quotes what the "
        "earlier attempt returned, and says what to do instead:"
    )
    say(first_line(outcome.attempts[stopped - 1].text), indent="    ")
    print()
    return bool(ran) and ran == list(range(first, stopped)) and denied == list(range(stopped, first + 5))


def ordinal(n: int) -> str:
    return f"{n}{ {1: 'st', 2: 'nd', 3: 'rd'}.get(n, 'th') }"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


#: At most this many lines of what dsh said first (up to a blank line) when the session did not run.
SAID_LINES = 6


def in_profile(profile: Path, prefix: Path, kept: Path) -> Target:
    """The demo in a user's profile: the scripted model declared in ``kept``'s settings file, which
    an overlay points dsh's ``settings`` row at, so the user's own settings are not read."""
    port = free_port()
    settings, overlay = kept / "settings.yaml", kept / "settings-overlay.yml"
    settings.write_text(
        f"llm-pi-ai:\n  providers:\n    demo:\n      api: openai-completions\n"
        f"      baseURL: http://127.0.0.1:{port}/v1\n      apiKeyEnv: MOCK_API_KEY\n"
        f"      models:\n        - id: {MODEL_ID}\n          name: {MODEL_ID}\n"
        "          contextWindow: 128000\n          maxTokens: 4096\n          input: [text]\n"
        f"agent-default-model:\n  provider: demo\n  model: {MODEL_ID}\n"
    )
    overlay.write_text(f"- id: settings\n  config:\n    path: {json.dumps(str(settings))}\n")
    bin_dir = prefix / "node_modules" / ".bin"
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return Target(
        home=profile.parent.parent,
        version=DSH_VERSION,
        mode="your profile",
        dsh_bin=bin_dir / "dsh",
        node_dir=bin_dir,
        mock_port=port,
        patch=overlay,
        profile=profile.name,
        cache=cache,
        plugin_dir=Path(__file__).resolve().parents[1],
        upgrade_tarball=None,
    )


def configured_by(profile: Path) -> str | None:
    """What names the configuration file a profile gives the plugin (``rtb``'s words for it, read as
    ``rtb`` reads it), or None under the defaults."""
    sys.path.insert(1, str(Path(__file__).resolve().parents[1]))  # this checkout's breaker
    from breaker.rtb.config.whichconfig import choose

    chosen = choose(None, None, folder=profile)
    return None if chosen.source is None else chosen.label


def replay_command(target: Target, session: Path) -> str:
    """The command that shows this session's stops again, in the profile, under its configuration."""
    cache = "" if target.mode == "your profile" else f"XDG_CACHE_HOME={shlex.quote(str(target.cache))} "
    home = "" if target.mode == "your profile" else f"DSH_HOME={shlex.quote(str(target.home))} "
    return (
        f"cd {shlex.quote(str(target.profile_dir))} && {home}{cache}"
        f"npx --no rtb replay {shlex.quote(str(session))} --show-denials"
    )


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--home", type=Path, help="a DSH_HOME prepared by compat/setup.sh")
    where.add_argument("--profile", type=Path, help="a dsh profile folder with the plugin")
    parser.add_argument("--dsh", type=Path, help="with --profile: the folder dsh is installed in")
    parser.add_argument(
        "--kept", type=Path, required=True, help="its settings and work folder: .demo/, or a temporary one"
    )
    args = parser.parse_args()
    if args.profile is not None:
        if args.dsh is None:
            parser.error("--profile needs --dsh")
        target = in_profile(args.profile.resolve(), args.dsh.resolve(), args.kept.resolve())
    else:
        target = Target.load(args.home.resolve())
    yours = " in your profile, under its configuration" if target.mode == "your profile" else ""
    say(
        f"Booting dsh {target.version} headless with this plugin as a profile bundle{yours}. A scripted "
        "model (a small server on 127.0.0.1) makes 15 tool calls in one session: three loops of five calls. "
        "Each loop should be stopped before it runs a fifth time: at the 5th call by the caps, or sooner "
        "when its results show that running it again brings nothing new."
    )
    print()
    outcome = play(target, DEMO, quiet=True, work_root=args.kept.resolve() / "work")
    if outcome.session is None or len(outcome.attempts) != 15:
        say(f"The session did not go as scripted ({len(outcome.attempts)} calls logged).")
        for failure in outcome.failures:
            say(failure, indent="  ")
        said = outcome.run.stderr.strip().split("\n\n", 1)[0].splitlines()[:SAID_LINES]
        if said:  # the plugin's own line comes first, alone: a refused configuration, no Python
            print("What dsh said first:")
            for line in said:
                print(f"    {line}")
        if target.mode == "your profile":
            profile = target.home / "profiles" / target.profile
            say(
                "The demo runs under your profile's configuration: "
                f"`npx --no rtb check` in {profile} checks it."
            )
        return 1
    say(PROXY_NOTE)
    print()
    under = configured_by(target.profile_dir) if target.mode == "your profile" else None
    good = [tell_loop(outcome, *loop, under=under) for loop in LOOPS]
    lines = counter_lines(outcome.work)
    passed = all(good) and not outcome.failures
    if passed:
        say(
            f"All three loops were stopped before a fifth run, and a denied call never runs: counter.txt "
            f"holds {lines} lines, one per call of loop A that ran. The session log is {outcome.session}."
        )
    else:
        say("The demo did not go as expected:")
        for failure in outcome.failures:
            say(failure, indent="  ")
        if under:
            say(
                f"It ran under your profile's configuration, {under}, not the defaults the demo is "
                "written for; adding `--config /dev/null` (no configuration: the defaults) to the "
                "command below replays the session under the defaults."
            )
    print()
    print("The same stops, from the session log (the last line of the demo):")
    print(replay_command(target, outcome.session))
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
