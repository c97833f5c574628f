"""How a corpus case is written: an agent's trajectory through dsh's tool shapes (``Agent``), a
case and its registry (``case``, ``CASES``), and outputs several cases reuse. The cases are in the
modules build.py lists (``CASE_MODULES``)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from trajectories import Trajectory


class Agent:
    """One agent's trajectory, written through dsh's tool shapes; counts calls to place a loop."""

    def __init__(self, session_id: str, parent: str | None = None) -> None:
        self.session_id = session_id
        self.trajectory = Trajectory(session_id, parent=parent)
        self.calls = 0
        self.loop_start: int | None = None

    def loop_starts(self) -> None:
        """The next call is the loop's first."""
        self.loop_start = self.calls + 1

    def human(self, text: str) -> None:
        self.trajectory.human(text)

    def together(self, calls: list[tuple[str, dict[str, object], str]]) -> None:
        """One model turn that sends ``calls`` (tool, arguments, result) at once: their results
        come back after all of them were sent."""
        self.trajectory.step()
        ids = [self.trajectory.call_only(tool, arguments) for tool, arguments, _ in calls]
        self.calls += len(calls)
        for call_id, (_, _, result) in zip(ids, calls, strict=True):
            self.trajectory.result(call_id, result)

    def call(self, tool: str, arguments: dict[str, object], result: str, *, is_error: bool = False) -> None:
        self.calls += 1
        self.trajectory.call(tool, arguments, result, is_error=is_error)

    def bash(self, command: str, output: str = "", code: int = 0, **decoys: object) -> None:
        """A shell command; a non-zero ``code`` ends the text with dsh's exit marker."""
        text = output or "(no output)"
        self.call("bash", {"command": command, **decoys}, text + (f"\n[exit code: {code}]" if code else ""))

    def read(self, path: str, lines: list[str], offset: int = 1, total: int | None = None) -> None:
        numbered = "\n".join(f"{offset + i}: {line}" for i, line in enumerate(lines))
        end = offset + len(lines) - 1
        total = total if total is not None else end
        footer = (
            f"(Showing lines {offset}-{end} of {total}. Use offset={end + 1} to continue.)"
            if end < total
            else f"(End of file - total {total} lines)"
        )
        arguments: dict[str, object] = {"file_path": path}
        if offset != 1:
            arguments["offset"] = offset
        self.call(
            "read",
            arguments,
            f"<path>{path}</path>\n<type>file</type>\n<content>\n{numbered}\n\n{footer}\n</content>",
        )

    def write(self, path: str, content: str, *, created: bool = False) -> None:
        done = "Created" if created else "Updated"
        self.call(
            "write",
            {"file_path": path, "content": content},
            f"<path>{path}</path>\n<type>file</type>\n<content>\n{done} file\n</content>",
        )

    def edit(self, path: str, old: str, new: str, *, found: bool = True) -> None:
        arguments: dict[str, object] = {"file_path": path, "old_string": old, "new_string": new}
        if found:
            self.call("edit", arguments, f"The file {path} has been updated successfully.")
        else:
            self.call("edit", arguments, f"Error: old_string not found in {path}", is_error=True)

    def fetch(self, url: str, status: int = 200, body: str = "", **decoys: object) -> None:
        self.call("web_fetch", {"url": url, **decoys}, f"Fetched {url} (HTTP {status})\n\n{body}")

    def fetch_error(self, url: str, reason: str) -> None:
        self.call("web_fetch", {"url": url}, f"Error: fetch failed: {reason}", is_error=True)

    def search(self, query: str, titles: list[str]) -> None:
        hits = "\n".join(f"{i}. {title}\n   https://example.org/{i}" for i, title in enumerate(titles, 1))
        self.call("web_search", {"query": query}, hits or "No results found")

    def grep(self, pattern: str, path: str, matches: list[str]) -> None:
        self.call("grep", {"pattern": pattern, "path": path}, "\n".join(matches) or "No matches found")


@dataclass
class Case:
    name: str
    label: str
    reason: str
    agents: list[Agent] = field(default_factory=list)

    def agent(self, parent: Agent | None = None) -> Agent:
        suffix = f".helper-{len(self.agents)}" if parent is not None else ""
        agent = Agent(self.name + suffix, parent.session_id if parent is not None else None)
        self.agents.append(agent)
        return agent

    @property
    def loop_start(self) -> int | None:
        return next((agent.loop_start for agent in self.agents if agent.loop_start is not None), None)


CASES: list[Case] = []


def case(label: str, reason: str) -> Callable[[Callable[[Case], None]], Callable[[Case], None]]:
    """Register a builder; the case's name is the function's, with dashes."""

    def register(build: Callable[[Case], None]) -> Callable[[Case], None]:
        built = Case(build.__name__.replace("_", "-"), label, reason)
        build(built)
        CASES.append(built)
        return build

    return register


def cycles(count: int) -> Iterator[int]:
    return iter(range(1, count + 1))


# Outputs reused by several cases.
PYTEST_FAIL = (
    "============ FAILURES ============\n___ test_parse_date ___\n"
    "    assert parse_date('2024-02-30') is None\nE   ValueError: day is out of range for month\n"
    "tests/test_dates.py:14: ValueError\n=== 1 failed, 11 passed in 0.42s ===\n[exit code: 1]"
)
PYTEST_PASS = "=== 12 passed in 0.39s ==="
CURL_REFUSED = "curl: (7) Failed to connect to {host} port {port} after 0 ms: Couldn't connect to server"
CURL_TIMEOUT = "curl: (28) Connection timed out after 30001 milliseconds"
CURL_DNS = "curl: (6) Could not resolve host: {host}"
