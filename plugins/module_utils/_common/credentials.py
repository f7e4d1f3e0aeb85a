# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""No credential leaves a node: which files are never read, and which values are redacted (docs/safety.md).

Both rules apply to every file read as text (what kubelet and systemd read: units, drop-ins, environment
files, k3s/RKE2 ``config.yaml``, MicroK8s' args, kubelet's configuration), by the node reader before anything
crosses and by the engine on the node alike (``_common.node_files``), so both see the same text:

* **withheld**: a file whose path or content marks it as a key, certificate, kubeconfig, token file or
  encryption configuration is not read at all (:func:`withheld_name`, :func:`withheld_content`);
* **redacted**: in the files that must be read, the value of every setting whose name says it is a
  credential (``K3S_TOKEN=``, ``token:``, ``--agent-token``, ``etcd-s3-secret-key``, ``datastore-endpoint``,
  ``*_PASSWORD``, ...), the password of a URL (``postgres://user:REDACTED@db``) and a bearer or basic
  authorization becomes :data:`PLACEHOLDER`, quotes and line structure kept (:func:`redact`). No kubelet
  setting the probe uses is a credential, so no verdict depends on a redacted value.

Line by line, linear in the text. Stdlib only, Python >= 3.9, nothing of this collection is imported (the
node reader carries this file's text).
"""

from __future__ import annotations

import re

TYPE_CHECKING = False  # the node reader imports no more than it runs: typing is for the annotations only
if TYPE_CHECKING:
    from typing import List, Optional, Tuple

__all__ = ["PLACEHOLDER", "is_credential_name", "withheld_name", "withheld_content", "redact"]

PLACEHOLDER = "REDACTED"

# Words of a setting's name (split at -, _, . and camelCase) that make its value a credential.
_CREDENTIAL_WORDS = frozenset((
    "token", "tokens", "secret", "secrets", "password", "passwords", "passwd", "passphrase", "credential",
    "credentials", "auth", "key", "keys", "apikey", "privatekey", "bearer", "datastore", "dsn", "cookie",
))
_WORD = re.compile(r"[A-Z]{2,}(?=[A-Z][a-z]|[^A-Za-z]|$)|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")

# Files never read: key and certificate material, kubeconfigs, token files (by the file's name), and what lives
# under the directories that hold them.
_SECRET_SUFFIXES = (".key", ".pem", ".crt", ".cer", ".cert", ".csr", ".der", ".p12", ".pfx", ".jks", ".keytab",
                    ".kubeconfig", ".token", ".gpg")
_SECRET_NAME = re.compile(r"(kubeconfig|token|secret|passw|credential|encryption|^id_(rsa|dsa|ecdsa|ed25519)|^shadow$)",
                          re.IGNORECASE)
_SECRET_DIRS = frozenset(("pki", "tls", "ssl", "secrets", ".ssh", "private", "cred", "credentials"))

# Content that marks a file as key material or a kubeconfig whatever its name.
_PEM = re.compile(r"-----BEGIN [A-Z0-9 ]+-----")
_KUBECONFIG_KEYS = re.compile(r"""^[ \t-]*["']?(client-key-data|client-certificate-data|certificate-authority-data|"""
                              r"""client-key|client-certificate|auth-provider|exec)["']?[ \t]*:""", re.MULTILINE)
_KIND = re.compile(r"""["']?\bkind["']?[ \t]*:[ \t]*["']?(Config|EncryptionConfiguration|Secret|AdmissionConfiguration)\b"""
                   r"""["']?[ \t]*(?:$|[,}#])""", re.MULTILINE)

# name<sep>value forms: a YAML/JSON key at the start of a line (its value: the rest of the line, or the lines
# indented below it), an assignment at the start of a line (env files: the rest of the line), and forms inside a
# line: a flag (--name=v, --name v), NAME=v (in a quoted Environment= word), a quoted key ("name": v), a key in a
# flow mapping ({name: v}).
_KEY_LINE = re.compile(r"""^([ \t]*(?:-[ \t]+)?)(["']?)([A-Za-z_][\w.-]*)\2([ \t]*:)(?=[ \t]|$)""")
_ASSIGNMENT_LINE = re.compile(r"^([ \t]*(?:export[ \t]+)?)([A-Za-z_][A-Za-z0-9_]*)(=)")
_INLINE = re.compile(
    r"""(?<![\w.-])(?P<flag>--?[A-Za-z][\w.-]*)(?:=|[ \t]+(?=[^ \t-]))"""
    r"""|(?<![\w.-])(?P<name>[A-Za-z_][\w.-]*)="""
    r"""|(?P<quote>["'])(?P<quoted>[A-Za-z_][\w.-]*)(?P=quote)[ \t]*:[ \t]*"""
    r"""|(?<=[{,])[ \t]*(?P<flow>[A-Za-z_][\w.-]*)[ \t]*:[ \t]+"""
)
_URL_PASSWORD = re.compile(r"""\b([a-zA-Z][a-zA-Z0-9+.-]*://[^/\s:@'"]*:)([^@/\s'"]+)@""")
_AUTHORIZATION = re.compile(r"""\b(Bearer|Basic)([ \t]+)([^\s"',;\]}]+)""", re.IGNORECASE)
_WORD_END = " \t\"',;]}"
# A value that is one of Go's strconv.ParseBool literals is never a credential: --anonymous-auth=false and
# --authentication-token-webhook=true are kept, so kubelet's command line still parses as kubelet parses it.
_BOOLEAN = re.compile(r"^(?:1|t|T|TRUE|true|True|0|f|F|FALSE|false|False)$")
_FLOW_PUNCTUATION = "[]{}, \t"


def _words(name: str) -> List[str]:
    return [word.lower() for word in _WORD.findall(name)]


def is_credential_name(name: str) -> bool:
    """Whether a setting named ``name`` holds a credential (``K3S_TOKEN``, ``--agent-token``, ``etcd-s3-secret-key``)."""
    words = _words(name.lstrip("-"))
    return any(word in _CREDENTIAL_WORDS for word in words) or "privatekey" in "".join(words)


def withheld_name(node_path: str) -> Optional[str]:
    """Why the file at ``node_path`` is never read, by its name, or None."""
    parts = [part for part in node_path.split("/") if part]
    if not parts:
        return None
    name = parts[-1]
    if name.lower().endswith(_SECRET_SUFFIXES) or _SECRET_NAME.search(name):
        return "its name marks a key, certificate, kubeconfig or token"
    if any(part.lower() in _SECRET_DIRS for part in parts[:-1]):
        return "it is under a directory of keys and certificates"
    return None


def withheld_content(text: str) -> Optional[str]:
    """Why a file holding ``text`` is not read, by its content, or None."""
    if _PEM.search(text):
        return "it holds a PEM block (a key or certificate)"
    if _KUBECONFIG_KEYS.search(text):
        return "it is a kubeconfig"
    kind = _KIND.search(text)
    if kind:
        return "it is a %s" % ("kubeconfig" if kind.group(1) == "Config" else kind.group(1))
    return None


def _quoted_end(line: str, start: int) -> int:
    """The index after the quote closing the one at ``line[start]`` (``\\`` escapes in double quotes), or -1."""
    quote = line[start]
    index = start + 1
    while index < len(line):
        char = line[index]
        if char == "\\" and quote == '"':
            index += 2
            continue
        if char == quote:
            return index + 1
        index += 1
    return -1


def _flow_value(line: str, start: int) -> Tuple[str, int, str]:
    """A flow value (``[a, "b"]``, ``{k: v}``) with each scalar redacted, brackets, commas and colons kept."""
    out: List[str] = []
    depth = 0
    index = start
    while index < len(line):
        char = line[index]
        if char in "\"'":
            end = _quoted_end(line, index)
            if end < 0:
                return "".join(out) + char + PLACEHOLDER, len(line), char
            out.append(char + PLACEHOLDER + char)
            index = end
            continue
        if char == "#" and line[index - 1] in " \t":
            break
        if char == ":" and line[index + 1:index + 2] in ("", " ", "\t", ",", "]", "}"):
            out.append(char)
            index += 1
            continue
        if char in _FLOW_PUNCTUATION:
            depth += {"[": 1, "{": 1, "]": -1, "}": -1}.get(char, 0)
            out.append(char)
            index += 1
            if depth <= 0:
                break
            continue
        end = index + 1
        while end < len(line) and line[end] not in _FLOW_PUNCTUATION and not (
                line[end] == ":" and line[end + 1:end + 2] in ("", " ", "\t", ",", "]", "}")):
            end += 1
        out.append(PLACEHOLDER)
        index = end
    return "".join(out), index, ""


def _redacted_value(line: str, start: int, to_end: bool) -> Tuple[str, int, str]:
    """``(replacement, end, open quote)`` for the value starting at ``line[start]``: a quoted value up to its closing
    quote (``open quote``: the quote when it runs past the line), a flow collection, else a word (``to_end``: the
    rest of the line but a trailing comment and comma)."""
    if start >= len(line):
        return "", start, ""
    first = line[start]
    if first in "\"'":
        end = _quoted_end(line, start)
        if end < 0:  # the value goes on below: its closing quote is kept where it is
            return first + PLACEHOLDER, len(line), first
        if _BOOLEAN.match(line[start + 1:end - 1]):
            return line[start:end], end, ""
        return first + PLACEHOLDER + first, end, ""
    if first in "[{":
        return _flow_value(line, start)
    end = start
    if to_end:
        comment = line.find(" #", start)
        end = len(line) if comment < 0 else comment
        while end > start and line[end - 1] in " \t,":
            end -= 1
    else:
        while end < len(line) and line[end] not in _WORD_END:
            end += 1
    if _BOOLEAN.match(line[start:end]):
        return line[start:end], end, ""
    return (PLACEHOLDER if end > start else ""), end, ""


def _redact_inline(line: str) -> Tuple[str, str]:
    """Credential values inside a line (flags, ``NAME=value`` words, quoted and flow keys), URL passwords and
    authorizations; the open quote, if a redacted value runs past the line."""
    out: List[str] = []
    index = 0
    open_quote = ""
    for match in _INLINE.finditer(line):
        name = match.group("flag") or match.group("name") or match.group("quoted") or match.group("flow")
        if match.start() < index or not is_credential_name(name):
            continue
        replacement, end, open_quote = _redacted_value(line, match.end(), to_end=False)
        out.append(line[index:match.end()] + replacement)
        index = end
    line = "".join(out) + line[index:]
    line = _URL_PASSWORD.sub(lambda match: match.group(1) + PLACEHOLDER + "@", line)
    return _AUTHORIZATION.sub(lambda match: match.group(1) + match.group(2) + PLACEHOLDER, line), open_quote


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def _nested_scalar(line: str) -> str:
    """A line inside a redacted block value: its scalar redacted, its structure (indentation, ``-``, keys) kept."""
    key = _KEY_LINE.match(line)
    head = key.end() if key else len(line) - len(line.lstrip(" \t-"))
    start = head + len(line[head:]) - len(line[head:].lstrip(" \t"))
    if start >= len(line) or line[start] in "]}#":
        return line
    replacement, end, _open = _redacted_value(line, start, to_end=True)
    return line[:start] + replacement + line[end:]


class _Redactor(object):
    """The line-by-line state: a redacted value may go on below its line (an open quote, a block)."""

    def __init__(self) -> None:
        self.open_quote = ""  # a redacted quoted value goes on until this quote closes
        self.block_indent = -1  # a redacted block value goes on over the lines indented deeper than its key
        self.block_scalar = False  # ... and they are the text of a block scalar (|, >)

    def line(self, line: str) -> str:
        if self.open_quote:
            return self._quoted_continuation(line)
        if self.block_indent >= 0:
            if not line.strip() or _indent(line) > self.block_indent:
                if not line.strip():
                    return line
                return line[:_indent(line)] + PLACEHOLDER if self.block_scalar else _nested_scalar(line)
            self.block_indent, self.block_scalar = -1, False
        key = _KEY_LINE.match(line)
        if key and is_credential_name(key.group(3)):
            return self._key_value(line, key.end())
        assignment = _ASSIGNMENT_LINE.match(line)
        if assignment and is_credential_name(assignment.group(2)):
            replacement, end, self.open_quote = _redacted_value(line, assignment.end(), to_end=True)
            return line[:assignment.end()] + replacement + line[end:]
        redacted, self.open_quote = _redact_inline(line)
        return redacted

    def _quoted_continuation(self, line: str) -> str:
        closing = line.find(self.open_quote)
        if closing < 0:
            return PLACEHOLDER if line.strip() else line
        self.open_quote = ""
        return line[closing:]

    def _key_value(self, line: str, after_key: int) -> str:
        start = after_key + len(line[after_key:]) - len(line[after_key:].lstrip(" \t"))
        value = line[start:]
        if not value or value.startswith("#"):
            self.block_indent = _indent(line)  # a nested block below: its scalars
            return line
        if value[0] in "|>":
            self.block_indent, self.block_scalar = _indent(line), True  # a block scalar: its text
            return line
        replacement, end, self.open_quote = _redacted_value(line, start, to_end=True)
        if replacement[:1] in "[{" and replacement.count("[") + replacement.count("{") > replacement.count("]") + replacement.count("}"):
            self.block_indent = _indent(line)  # a flow collection going on below
        return line[:start] + replacement + line[end:]


def redact(text: str) -> str:
    """``text`` with every credential value replaced by :data:`PLACEHOLDER`, quotes, indentation and lines kept."""
    redactor = _Redactor()
    return "\n".join(redactor.line(line) for line in text.split("\n"))
