# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""systemd's unit-file and environment-file syntax, as systemd reads them to build a service's argv.

Pure, stdlib only, Python >= 3.9 (systemd.unit(5), systemd.service(5), systemd.exec(5)): unit lines with
continuations and comments, ``Environment=`` assignments with systemd quoting, ``EnvironmentFile=`` files,
``ExecStart=`` words (unquoted, C-unescaped) and the expansion of ``$NAME``, ``${NAME}`` and ``%`` specifiers.
Which files are read, and in which order, is :mod:`_kubelet.systemd`.
"""

from __future__ import annotations

import re
from typing import Dict, List, Optional, Sequence, Tuple

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.record import Record

__all__ = [
    "Arg",
    "parse_unit_lines",
    "split_words",
    "parse_environment_assignments",
    "parse_env_file",
    "parse_env_lines",
    "expand_specifiers",
    "expand_command",
]

_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_BRACED = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_BARE = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")
_C_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v", "s": " ",
              "\\": "\\", '"': '"', "'": "'", " ": " "}


class Arg(Record, frozen=True):
    """One word of a command line and where it came from (for reports)."""

    value: str
    origin: str


def parse_unit_lines(text: str, path: str) -> Tuple[List[Tuple[str, str, str, int]], List[str]]:
    """``(section, key, value, line number)`` for every assignment; problems name ``path:line``."""
    settings = []
    problems = []
    section = ""
    pending = ""
    start = 0
    # A continuation still open at the end of the file ends there (k3s' installer writes one).
    for number, line in enumerate(text.splitlines() + [""], 1):
        stripped = line.strip()
        if not pending and (not stripped or stripped[0] in "#;"):
            continue
        if pending and stripped[:1] in ("#", ";"):
            continue  # systemd skips comment lines inside a continuation
        if not pending:
            start = number
        if stripped.endswith("\\"):
            pending += stripped[:-1] + " "
            continue
        logical, pending = pending + stripped, ""
        if logical.startswith("[") and logical.endswith("]"):
            section = logical[1:-1].strip()
            continue
        key, equals, value = logical.partition("=")
        if not equals:
            problems.append("%s:%d: not a section header or Key=Value assignment: %r" % (path, start, logical[:80]))
            continue
        settings.append((section, key.strip(), value.strip(), start))
    return settings, problems


def _unescape(text: str, index: int) -> Tuple[str, int]:
    """One C escape after the backslash at ``text[index]``: ``(characters, next index)``."""
    if index + 1 >= len(text):
        return "\\", index + 1
    char = text[index + 1]
    if char in _C_ESCAPES:
        return _C_ESCAPES[char], index + 2
    if char == "x" and re.match(r"[0-9a-fA-F]{2}", text[index + 2:index + 4]):
        return chr(int(text[index + 2:index + 4], 16)), index + 4
    if re.match(r"[0-7]{3}", text[index + 1:index + 4]):
        return chr(int(text[index + 1:index + 4], 8)), index + 4
    return "\\" + char, index + 2  # relaxed: an unknown escape is kept as written


def split_words(value: str) -> Tuple[List[str], Optional[str]]:
    """systemd's ``extract_first_word`` with unquoting and C escapes; ``(words, problem)``."""
    words: List[str] = []
    current: List[str] = []
    in_word = False
    quote = ""
    index = 0
    while index < len(value):
        char = value[index]
        if char == "\\":
            text, index = _unescape(value, index)
            current.append(text)
            in_word = True
            continue
        if quote:
            if char == quote:
                quote = ""
            else:
                current.append(char)
        elif char in "\"'":
            quote = char
            in_word = True
        elif char.isspace():
            if in_word:
                words.append("".join(current))
                current, in_word = [], False
        else:
            current.append(char)
            in_word = True
        index += 1
    if quote:
        return words, "unterminated %s quote" % quote
    if in_word:
        words.append("".join(current))
    return words, None


def parse_environment_assignments(value: str) -> Tuple[List[Tuple[str, str]], List[str]]:
    """The ``KEY=value`` words of one ``Environment=`` line (invalid words are skipped, as systemd does)."""
    words, problem = split_words(value)
    assignments = []
    problems = [problem] if problem else []
    for word in words:
        key, equals, item = word.partition("=")
        if not equals or not _ENV_NAME.match(key):
            problems.append("ignoring invalid environment assignment %r" % word[:80])
            continue
        assignments.append((key, item))
    return assignments, problems


class _EnvFileScanner:
    """systemd's ``parse_env_file`` state machine for one ``EnvironmentFile=``."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.index = 0
        self.line = 1

    def peek(self) -> str:
        return self.text[self.index] if self.index < len(self.text) else ""

    def take(self) -> str:
        char = self.peek()
        self.index += 1
        if char == "\n":
            self.line += 1
        return char

    def skip_line(self) -> None:
        while self.peek() and self.take() != "\n":
            pass

    def value(self) -> Tuple[str, Optional[str]]:
        out: List[str] = []
        trailing = 0  # unquoted trailing white space is dropped
        while self.peek() and self.peek() != "\n":
            char = self.take()
            if char == "'":
                out.extend(self._until("'"))
                trailing = 0
            elif char == '"':
                chunk, problem = self._double_quoted()
                if problem:
                    return "", problem
                out.extend(chunk)
                trailing = 0
            elif char == "\\":
                following = self.take()
                if following not in ("\n", ""):
                    out.append(following)
                trailing = 0
            else:
                out.append(char)
                trailing = trailing + 1 if char.isspace() else 0
        if self.peek() == "\n":
            self.take()
        return "".join(out[:len(out) - trailing] if trailing else out), None

    def _until(self, end: str) -> List[str]:
        out = []
        while self.peek() and self.peek() != end:
            out.append(self.take())
        self.take()
        return out

    def _double_quoted(self) -> Tuple[List[str], Optional[str]]:
        out: List[str] = []
        start = self.line
        while True:
            char = self.take()
            if char == "":
                return out, "line %d: unterminated double quote" % start
            if char == '"':
                return out, None
            if char == "\\":
                following = self.take()
                if following == "\n":
                    continue  # a continued line inside quotes
                out.append(following if following in '"\\`$' else "\\" + following)
            else:
                out.append(char)


def parse_env_file(text: str) -> Tuple[Dict[str, str], List[str]]:
    """``KEY=value`` assignments of an ``EnvironmentFile=`` (shell-like quotes, ``\\`` continuation).

    Problems carry line numbers; a malformed line is skipped, an unterminated quote ends the file.
    """
    variables, problems = parse_env_lines(text)
    return {key: value for key, (value, _line) in variables.items()}, problems


def parse_env_lines(text: str) -> Tuple[Dict[str, Tuple[str, int]], List[str]]:
    """:func:`parse_env_file` with the line each assignment starts on: ``{KEY: (value, line)}``."""
    scanner = _EnvFileScanner(text)
    variables: Dict[str, Tuple[str, int]] = {}
    problems = []
    while scanner.peek():
        while scanner.peek() in (" ", "\t", "\n", "\r"):
            scanner.take()
        if not scanner.peek():
            break
        if scanner.peek() in "#;":
            scanner.skip_line()
            continue
        line = scanner.line
        key_chars = []
        while scanner.peek() not in ("=", "\n", ""):
            key_chars.append(scanner.take())
        key = "".join(key_chars).strip()
        if key.startswith("export "):
            key = key[len("export "):].strip()
        if scanner.peek() != "=" or not _ENV_NAME.match(key):
            problems.append("line %d: not a KEY=value assignment: %r" % (line, "".join(key_chars)[:80]))
            scanner.skip_line()
            continue
        scanner.take()
        while scanner.peek() in (" ", "\t"):
            scanner.take()
        value, problem = scanner.value()
        if problem:
            problems.append(problem)
            break
        variables[key] = (value, line)
    return variables, problems


def _expand_braced(word: str, environment: Dict[str, Arg], used: List[str]) -> str:
    def value_of(match: "re.Match[str]") -> str:
        name = match.group(1)
        used.append(name)
        found = environment.get(name)
        return found.value if found else ""

    parts = word.split("$$")
    expanded = [_BARE.sub(value_of, _BRACED.sub(value_of, part)) for part in parts]
    return "$".join(expanded)


def _origin(base: str, used: Sequence[str], environment: Dict[str, Arg]) -> str:
    sources = sorted({"%s from %s" % (name, environment[name].origin) for name in used if name in environment})
    return base + ("" if not sources else " (" + ", ".join(sources) + ")")


def expand_specifiers(text: str, unit_name: str) -> str:
    """``%n`` (full unit name), ``%N`` (without the type suffix) and ``%%`` (systemd.unit(5) "Specifiers").

    Other specifiers are kept as written. k3s' and RKE2's units name ``EnvironmentFile=-/etc/default/%N``.
    """
    values = {"n": unit_name, "N": unit_name.rsplit(".", 1)[0], "%": "%"}
    return re.sub(r"%([nN%])", lambda match: values[match.group(1)], text)


def expand_command(words: Sequence[str], environment: Dict[str, Arg], origin: str, unit_name: str = "") -> List[Arg]:
    """systemd's variable and specifier expansion of ``ExecStart=`` words (systemd.service(5))."""
    result = []
    for word in words:
        word = expand_specifiers(word, unit_name)
        whole = re.match(r"^\$([A-Za-z_][A-Za-z0-9_]*)$", word)
        if whole:
            found = environment.get(whole.group(1))
            if found:
                result.extend(Arg(part, "%s from %s" % (whole.group(1), found.origin)) for part in found.value.split())
            continue
        used: List[str] = []
        result.append(Arg(_expand_braced(word, environment, used), _origin(origin, used, environment)))
    return result
