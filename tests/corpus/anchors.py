"""The published loop detectors, re-implemented for the decision-quality measurement only.

None of this is in the product: it lets ``compare.py`` put this project's decisions beside the
rules other agent harnesses ship, applied to the same call sequences. Each detector below was
written here from a reading of its public source (named in its docstring with the repository,
path, commit and constants), keeping only the rule that judges tool calls: model-text rules
(monologues, content chanting, an LLM judge) have nothing to read in a list of calls.

Every detector sees one agent's calls in order, each with the text it returned, and answers with
the first call it *stops* (the call that would not have run) or, for an advisory one, the first
call after which it *warns*. A detector that judges a call after it ran stops the agent's next
call; when there is none, the run was over and nothing is stopped.

Each compares a call as its own harness holds it. dsh's ``bash`` carries a ``description`` (in
the real runs converted from mini-swe-agent it is the agent's thought). OpenHands keeps the
thought on the action it compares, and the official reminder runs inside dsh: both see it. Roo
Code, Gemini CLI and Cline compare tool parameters, with the model's reasoning outside the call:
for them it is left out (``Anchor.sees_description``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from breaker.rtb.read.sessions import CallEvent, HumanTurn, ResultEvent, Session
from breaker.rtb.replay.replayer import CallReplay, result_facts


@dataclass(frozen=True, slots=True)
class Step:
    """One call of one agent and what it returned; ``number`` counts that agent's calls from 1."""

    agent: str
    number: int
    tool: str
    arguments: Any
    result: str
    is_error: bool
    #: What dsh would have told a plugin about the result (``exitCode``, ``statusCode``, ...).
    facts: Mapping[str, object]
    #: A human turn came between this call and the agent's call before it.
    after_human: bool


@dataclass(frozen=True, slots=True)
class Intervention:
    """Where a detector first acts on one agent: ``index`` into that agent's steps, and why."""

    index: int
    rule: str


#: A detector: one agent's steps in, its first intervention (or None) out.
Detector = Callable[[Sequence[Step]], Intervention | None]


@dataclass(frozen=True, slots=True)
class Anchor:
    """A published detector under the name the table gives it; ``advisory`` ones never stop."""

    name: str
    short: str
    detect: Detector
    sees_description: bool
    advisory: bool = False

    def first(self, steps: Sequence[Step]) -> Intervention | None:
        """The detector on one agent's steps, each call as this detector's harness holds it."""
        if not self.sees_description:
            steps = [replace(step, arguments=_without_description(step.arguments)) for step in steps]
        return self.detect(steps)


def _without_description(arguments: Any) -> Any:
    if isinstance(arguments, dict) and "description" in arguments:
        return {key: value for key, value in arguments.items() if key != "description"}
    return arguments


def session_steps(session: Session) -> list[Step]:
    """The session's calls in log order, each with its result (empty when none was logged)."""
    results = {
        (event.agent, event.call_id): event for event in session.events if isinstance(event, ResultEvent)
    }
    steps: list[Step] = []
    counts: dict[str, int] = {}
    human_since: set[str] = set()
    for event in session.events:
        if isinstance(event, HumanTurn):
            human_since.add(event.agent)
        elif isinstance(event, CallEvent):
            counts[event.agent] = number = counts.get(event.agent, 0) + 1
            result = results.get((event.agent, event.call.call_id))
            text = "" if result is None else result.text
            facts: Mapping[str, object] = {}
            if result is not None:
                call = event.call
                ran = CallReplay(number, event.agent, call.call_id, call.name, "executed", "allowed")
                facts = result_facts(ran, result, text)
            steps.append(
                Step(
                    event.agent,
                    number,
                    event.call.name,
                    event.call.arguments,
                    text,
                    result is not None and result.is_error,
                    facts,
                    event.agent in human_since,
                )
            )
            human_since.discard(event.agent)
    return steps


def _top_keys_sorted(arguments: Any, ignored: frozenset[str] = frozenset()) -> str:
    """JSON of the arguments with their top-level keys sorted (nested values as given)."""
    if isinstance(arguments, dict):
        arguments = {key: arguments[key] for key in sorted(arguments) if key not in ignored}
    return json.dumps(arguments, ensure_ascii=False)


def _action(step: Step) -> tuple[str, str]:
    """A call as an event-equality check sees it: the tool and all of its arguments."""
    return step.tool, json.dumps(step.arguments, sort_keys=True, ensure_ascii=False)


def roo_code(steps: Sequence[Step]) -> Intervention | None:
    """Roo Code's ToolRepetitionDetector: the 4th identical consecutive call is not run.

    Source: RooCodeInc/Roo-Code, src/core/tools/ToolRepetitionDetector.ts @ 37479466bc61; the limit
    is the task's consecutive-mistake limit, DEFAULT_CONSECUTIVE_MISTAKE_LIMIT = 3
    (packages/types/src/provider-settings.ts @ 0e110a2d47d5). Before a tool runs, its name and
    parameters (top-level keys sorted) are compared with the previous call's; an identical call
    adds one to a counter that starts at 0 for a new call, and at 3 the call is refused and the
    user asked. A user message does not reset it (the detector sees only tool calls).
    """
    previous: str | None = None
    repeats = 0
    for index, step in enumerate(steps):
        key = step.tool + "\0" + _top_keys_sorted(step.arguments)
        repeats = repeats + 1 if key == previous else 0
        previous = key
        if repeats >= 3:
            return Intervention(index, "4th identical consecutive call")
    return None


def gemini_cli(steps: Sequence[Step]) -> Intervention | None:
    """Gemini CLI's LoopDetectionService, its tool-call rule: the 5th identical call in a row.

    Source: google-gemini/gemini-cli, packages/core/src/services/loopDetectionService.ts
    @ 022f913dc748; TOOL_CALL_LOOP_THRESHOLD = 5. Each tool-call request is keyed by its name and
    ``JSON.stringify`` of its arguments (as sent, keys unsorted); the same key as the last request
    counts up from 1, and at 5 the loop is reported before the call runs and the turn ends. A new
    user prompt resets the count. Its content-chanting and LLM-judge checks read model text and
    are not applied.
    """
    previous: str | None = None
    count = 0
    for index, step in enumerate(steps):
        if step.after_human:
            previous, count = None, 0
        key = step.tool + ":" + json.dumps(step.arguments, ensure_ascii=False)
        count = count + 1 if key == previous else 1
        previous = key
        if count >= 5:
            return Intervention(index, "5th identical consecutive call")
    return None


def _cline_runs(steps: Sequence[Step]) -> list[int]:
    """Cline's run length at each call: same tool and signature as the previous call, else 1.

    Source: cline/cline, src/core/task/loop-detection.ts @ 592293271eb7: the signature is
    ``JSON.stringify(params, sortedKeys)`` without the ``task_progress`` metadata parameter.
    """
    runs: list[int] = []
    previous: tuple[str, str] | None = None
    for step in steps:
        key = (step.tool, _top_keys_sorted(step.arguments, frozenset({"task_progress"})))
        runs.append(runs[-1] + 1 if runs and key == previous else 1)
        previous = key
    return runs


def cline_stop(steps: Sequence[Step]) -> Intervention | None:
    """Cline's hard escalation: after the 5th identical call in a row, the task stops for the user.

    Source: cline/cline, src/core/task/loop-detection.ts @ 592293271eb7;
    LOOP_DETECTION_HARD_THRESHOLD = 5. At the 5th identical call (which runs) the task's
    consecutive-mistake count is set to its maximum, so the next request asks the user first:
    the agent's next call is the one stopped.
    """
    for index, run in enumerate(_cline_runs(steps)):
        if run == 5 and index + 1 < len(steps):
            return Intervention(index + 1, "after the 5th identical consecutive call")
    return None


def cline_warning(steps: Sequence[Step]) -> Intervention | None:
    """Cline's soft warning, advisory: a notice with the result of the 3rd identical call in a row.

    Source: cline/cline, src/core/task/loop-detection.ts @ 592293271eb7;
    LOOP_DETECTION_SOFT_THRESHOLD = 3.
    """
    for index, run in enumerate(_cline_runs(steps)):
        if run == 3:
            return Intervention(index, "3rd identical consecutive call (warning)")
    return None


def _observation(step: Step) -> tuple[object, ...]:
    """What OpenHands compares of a result: a shell's command and exit code, else the whole text."""
    if "exitCode" in step.facts or "signal" in step.facts:
        return ("shell", _action(step), step.facts.get("exitCode"), step.facts.get("signal"))
    return ("text", step.is_error, step.result)


def openhands(steps: Sequence[Step]) -> Intervention | None:
    """OpenHands' StuckDetector, its rules on actions and observations; the agent's next step stops.

    Source: OpenHands/OpenHands, openhands/controller/stuck.py @ 331a1a43145f. Checked after each
    observation, over the history since the last user message (its interactive mode):
    the last 4 actions identical and the last 4 observations identical; the last 3 actions
    identical and all 3 observations errors (ErrorObservation: here a call that failed as a call,
    ``is_error``); the last 6 actions alternating A-B-A-B-A-B with their observations alternating
    too. Actions compare by every field (tool and all arguments); a command's observation compares
    by command and exit code only (``_eq_no_pid``), others by content. Its monologue,
    context-window and empty-response rules read model messages and are not applied.
    """
    start = 0
    for index, step in enumerate(steps):
        if step.after_human:
            start = index
        rule = _stuck(steps[start : index + 1])
        if rule is not None and index + 1 < len(steps):
            return Intervention(index + 1, rule)
    return None


def _stuck(history: Sequence[Step]) -> str | None:
    actions = [_action(step) for step in history[::-1]]
    observations = [_observation(step) for step in history[::-1]]
    if len(actions) >= 4 and len(set(actions[:4])) == 1 and len(set(observations[:4])) == 1:
        return "4 identical action/observation pairs"
    if len(actions) >= 3 and len(set(actions[:3])) == 1 and all(step.is_error for step in history[-3:]):
        return "3 identical actions, each an error"
    if len(actions) >= 6 and _alternates(actions[:6]) and _alternates(observations[:6]):
        return "A-B-A-B-A-B action/observation pattern"
    return None


def _alternates(last_six: Sequence[object]) -> bool:
    return last_six[0] == last_six[2] == last_six[4] and last_six[1] == last_six[3] == last_six[5]


def official_reminder(steps: Sequence[Step]) -> Intervention | None:
    """The official @deepseek-ai/dsh-repeat-tool-reminder, advisory: its first notice, at the 3rd.

    Source: npm @deepseek-ai/dsh-repeat-tool-reminder 0.1.0-rc.8, lib/index.js (repository
    deepseek-ai/deepseek-harness, packages/guard/repeat-tool-reminder), mounted by dsh-base with
    thresholds [3, 5, 8]. After each call runs, a call with the same tool and the same arguments
    (deep key-sorted JSON) as the previous one extends the run, any other starts it at 1; at 3, 5
    and 8 a notice is added to the result. A user prompt resets the run. It never stops a call.
    """
    previous: tuple[str, str] | None = None
    run = 0
    for index, step in enumerate(steps):
        if step.after_human:
            previous, run = None, 0
        key = (step.tool, json.dumps(step.arguments, sort_keys=True, ensure_ascii=False))
        run = run + 1 if key == previous else 1
        previous = key
        if run == 3:
            return Intervention(index, "3rd identical consecutive call (notice)")
    return None


#: The published detectors, in the order the table lists them.
ANCHORS = (
    Anchor("OpenHands StuckDetector", "OpenHands", openhands, sees_description=True),
    Anchor("Roo Code ToolRepetitionDetector", "Roo Code", roo_code, sees_description=False),
    Anchor("Gemini CLI LoopDetectionService (tool calls)", "Gemini CLI", gemini_cli, sees_description=False),
    Anchor("Cline, stop (5 in a row)", "Cline stop", cline_stop, sees_description=False),
    Anchor(
        "Cline, warning (3 in a row; advisory: notices)",
        "Cline warning",
        cline_warning,
        sees_description=False,
        advisory=True,
    ),
    Anchor(
        "official reminder (3/5/8; advisory: notices)",
        "reminder",
        official_reminder,
        sees_description=True,
        advisory=True,
    ),
)
