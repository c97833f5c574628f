"""Settled answers (breaker/core/judging/settled.py): a command line whose output depends on nothing but
its own text, read conservatively: what ``echo``/``printf``/``seq``/``expr`` (``cal`` given numbers)
make of their arguments alone, alone or through text
filters, with nothing the shell expands, no redirection, no other operator, no file of a filter's
own."""

from __future__ import annotations

import pytest

from breaker.core.judging.settled import MAX_CHARS, is_settled, settled_command
from breaker.core.reading.fingerprints import ToolCall

SETTLED = [
    "echo \"hello world!\" | sed -e 's/^[[:space:]]*//' -e 's/[[:space:]]*$//'",
    'echo "Session closed."',
    "echo hello",
    "printf '%s\\n' b a | sort -r | uniq -c",
    "echo 'a $(date) `id` $HOME *' | tr a-z A-Z",  # inside single quotes nothing expands
    "echo x | grep -i X",  # grep's -i is no file
    "echo '{\"a\": 1}' | jq .a",
    "echo a b | awk '{print $2}'",
    "seq 1 10 | paste -sd+",
    "expr 6 '*' 7",
    "cal 12 2120",  # a calendar of a month named by numbers: the same every time
    'cal 2120 | grep -v "^$" | wc -l',  # a "$" that closes double quotes is only a dollar sign
    "echo hello | head -c 3 | od -A x -t x1",  # option values are no files
    "echo a,b | cut -d , -f 2 | tail -n1",
    "printf 'a\\nb\\n' | sed -n -e '/b/p' -e 's/a/c/g;2q' | tr -d x",
    "echo abc | grep -e a -e b -",  # "-" is the input
]

NOT_SETTLED = {
    "fly status -a acme-web": "a status query: its answer can change",
    "cat notes.txt | sed 's/a/b/'": "reads a file",
    "echo $HOME | tr a b": "a variable",
    'echo "now $(date)"': "a substitution inside double quotes",
    "echo `date`": "a backquote substitution",
    "echo *": "a glob lists the workspace",
    "echo ~": "a home directory",
    "echo hi > out.txt": "writes a file",
    "echo hi | sed -i s/a/b/ f.txt": "edits a file in place",
    "echo hi | sed -ni p f.txt": "an in-place flag in a cluster",
    "echo hi | grep -f patterns.txt": "patterns from a file",
    "echo hi | awk -f prog.awk": "a program from a file",
    "echo hi | sort -o out.txt": "an output file",
    "echo a; rm -rf build": "another operator runs another command",
    "echo a && ls": "another operator runs another command",
    "echo a | xargs rm": "xargs runs programs",
    "echo a | tee log.txt": "tee writes a file",
    "cat <<EOF | sed s/a/b/\nhello\nEOF": "a heredoc: read as not examined",
    "echo 'unterminated": "a quote never closed",
    "": "nothing",
    "cal": "the current month: the clock decides",
    "cal -3": "the months around today",
    "cal 12 $YEAR": "a variable",
    'echo "^$HOME"': "a dollar that starts a name inside double quotes",
    "echo x | grep foo /etc/passwd": "a filter given a file of its own to read",
    "echo x | tail -n1 app.log": "a file after an option's value",
    "echo x | sed 's/a/b/' notes.txt": "a file after the script",
    "echo x | grep -e foo notes.txt": "a file after a pattern given by -e",
    "echo x | grep -r foo": "a recursive grep reads the workspace",
    "echo x | sed --fil=script.sed": "an abbreviated long option (GNU reads --file)",
    "echo x | sort -R": "a random order",
    "echo 'abc  notes.txt' | md5sum -c": "checks the files its input names",
    "echo x | sed 'r /etc/hostname'": "a sed command that reads a file",
    "echo x | sed 's/x/date/e'": "a substitution run as a command",
    "echo x | sed -n 'w out.txt'": "a sed command that writes a file",
    "echo | awk '{system(\"date\")}'": "awk runs a program",
    "echo | awk '{\"date\" | getline d; print d}'": "awk reads a program's output",
    "echo | awk 'BEGIN{srand(); print srand()}'": "awk's seed is the clock",
    "echo | awk 'BEGIN{print rand()}'": "mawk seeds rand from the clock",
    "echo | awk '{print ENVIRON[\"HOME\"]}'": "awk reads the environment",
    "echo | awk 'BEGIN{ARGV[1]=\"notes.txt\"; ARGC=2} {print}'": "awk names a file to read",
    "echo 1 | jq now": "jq reads the clock",
    "echo 1 | jq -n env": "jq reads the environment",
    "echo 1 | jq '$ENV.HOME'": "jq reads the environment by $ENV",
    "echo 1 | jq input_filename": "jq names its input file",
    "printf '%(%H:%M:%S)T\\n' -1": "bash's printf prints the time",
}


@pytest.mark.parametrize("command", SETTLED)
def test_literal_text_through_text_filters_is_settled(command: str) -> None:
    assert settled_command(command)


@pytest.mark.parametrize("command", list(NOT_SETTLED), ids=list(NOT_SETTLED.values()))
def test_anything_that_reads_writes_or_expands_is_not(command: str) -> None:
    assert not settled_command(command)


def test_only_a_shell_tool_s_command_and_not_a_long_one() -> None:
    assert is_settled(ToolCall("bash", {"command": "echo hi | tr a-z A-Z"}, "c1"))
    assert not is_settled(ToolCall("web_fetch", {"command": "echo hi"}, "c1"))
    assert not is_settled(ToolCall("bash", "echo hi", "c1"))
    assert not is_settled(ToolCall("bash", {"command": "echo " + "a" * MAX_CHARS}, "c1"))
