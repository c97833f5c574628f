"""The labelled corpus: agent trajectories a breaker must stop (``loop``) or let run (``ok``).

Each case (a function in one of ``CASE_MODULES``) writes one session in the replay format
(``breaker.rtb.trajectories``) with the tool names, argument shapes and result texts dsh gives the
model (``[exit code: N]`` after a failed shell command, ``Fetched <url> (HTTP <status>)``,
``Error: ...`` for a failed file edit), so logic that reads results can be judged on it. A loop
case marks the call where its loop starts: the first call of the action (or cycle of actions) the
agent then keeps repeating.
``recorded-*`` sessions are real dsh logs from the compat harness (examples/sessions).

    python tests/corpus/build.py      # rewrites sessions/ and labels.tsv from the cases

tests/test_corpus.py fails when the committed files drift from what this script writes.
"""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path

import zstandard
from casebook import CASES

HERE = Path(__file__).resolve().parent
SESSIONS = HERE / "sessions"
LABELS = HERE / "labels.tsv"
RECORDED = HERE.parent.parent / "examples" / "sessions"

#: The modules of the cases, in the order they are registered (the order of labels.tsv).
CASE_MODULES = (
    "loops_repeated",
    "loops_unchanged",
    "ok_cycles",
    "ok_routine",
    "changing_answers",
    "reported_patterns",
)
for _module in CASE_MODULES:
    importlib.import_module(_module)


def corpus_files() -> dict[Path, bytes]:
    """Every file of the corpus (sessions/*.jsonl and labels.tsv) and its content."""
    files: dict[Path, bytes] = {}
    rows = ["# session id\tloop|ok\twhy\tloop start (call number of the looping agent)"]
    for built in CASES:
        for agent in built.agents:
            files[SESSIONS / f"{agent.session_id}.jsonl"] = agent.trajectory.to_jsonl().encode()
        start = "" if built.loop_start is None else f"\t{built.loop_start}"
        rows.append(f"{built.name}\t{built.label}\t{built.reason}{start}")
    for name, label, reason in RECORDED_CASES:
        files[SESSIONS / f"recorded-{name}.jsonl"] = _decompressed(RECORDED / f"{name}.jsonl.zstd")
        rows.append(f"recorded-{name}\t{label}\t{reason}" + ("\t1" if label == "loop" else ""))
    files[LABELS] = ("\n".join(rows) + "\n").encode()
    return files


def write_corpus() -> None:
    """Rewrite sessions/ and labels.tsv."""
    replace_sessions(SESSIONS, corpus_files())


def replace_sessions(folder: Path, files: dict[Path, bytes]) -> None:
    """Write ``files``, after removing every session file of ``folder`` (a dropped case leaves none)."""
    folder.mkdir(exist_ok=True)
    for stale in folder.glob("*.jsonl"):
        stale.unlink()
    for path, content in files.items():
        path.write_bytes(content)


#: Real dsh 0.1.0-rc.8 sessions from the compat harness (see examples/sessions/README.md).
RECORDED_CASES = [
    ("loop-a-identical", "loop", "real dsh: the same append command six times"),
    ("loop-b-decoy", "loop", "real dsh: description and timeoutMs churn around one command"),
    ("loop-c-pingpong", "loop", "real dsh: host spelling and --max-time ping-pong, every fetch refused"),
    ("local-loop", "loop", "real dsh: one local health endpoint through seven pipelines"),
    ("pagination", "ok", "real dsh: eight pages of one listing"),
]


def _decompressed(path: Path) -> bytes:
    """A dsh log is a series of zstd frames; the corpus keeps it as plain JSON lines."""
    data, text = path.read_bytes(), b""
    while data:
        frame = zstandard.ZstdDecompressor().decompressobj()
        text += frame.decompress(data)
        data = frame.unused_data
    return b"".join(
        json.dumps(json.loads(line)).encode() + b"\n" for line in text.splitlines() if line.strip()
    )


if __name__ == "__main__":
    write_corpus()
    loops = sum(1 for built in CASES if built.label == "loop")
    print(
        f"{len(CASES)} cases ({loops} loop, {len(CASES) - loops} ok) + {len(RECORDED_CASES)} recorded",
        file=sys.stderr,
    )
