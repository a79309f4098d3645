"""Where a broken stream picks up again, to the byte, as ``protocol/resume.ts`` and
``protocol/partial-event.ts`` decide it for every client.

A stream's position is the id of the last whole event (sent back as ``Last-Event-ID``) and, per
output stream, the byte offset after the output that came: whole events, and the part of an event
the connection broke in the middle of. That part is handed on at once and the stream resumes from
the byte after it, so the two parts carry the same id and join without a gap or an overlap.
"""

from __future__ import annotations

import base64
import json
import re
from typing import Any

from ._error_codes import ERROR_CODES

# `{` then flat string or integer fields, each followed by a comma, then `"data":"`: output events
# put every field before their data, so a frame cut short still says where its data belongs.
_HEAD = re.compile(r'^\{((?:"[A-Za-z]+":(?:"(?:[^"\\]|\\.)*"|-?\d+),)*)"data":"')


def utf8_length(text: str) -> int:
    """Bytes of ``text`` in UTF-8."""
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def base64_length(text: str) -> int:
    """Bytes that base64 text (whole groups of four) decodes to."""
    padding = 2 if text.endswith("==") else 1 if text.endswith("=") else 0
    return (len(text) // 4) * 3 - padding


def output_length(event: dict[str, Any]) -> int:
    """Bytes of output an output event (or the part of one that came) stands for."""
    if isinstance(event.get("bytes"), int):
        return event["bytes"]
    data = event.get("data", "")
    return base64_length(data) if event.get("encoding") == "base64" else utf8_length(data)


def _string_prefix(body: str) -> str | None:
    """The text of a JSON string literal's body that may be cut anywhere, up to its last whole escape."""
    end = 0
    length = len(body)
    while end < length:
        quote = body.find('"', end)
        slash = body.find("\\", end)
        if slash == -1 or (quote != -1 and quote < slash):
            end = length if quote == -1 else quote
            break
        step = 6 if body[slash + 1 : slash + 2] == "u" else 2
        if slash + step > length:
            end = slash
            break
        end = slash + step
    try:
        text = json.loads('"' + body[:end] + '"')
    except ValueError:
        return None
    # An escaped high surrogate whose pair did not come is left for the resumed stream.
    if text and 0xD800 <= ord(text[-1]) <= 0xDBFF:
        text = text[:-1]
    return text


def partial_output_event(data: str) -> dict[str, Any] | None:
    """The output event a cut message's data begins, as far as it is usable (with ``byteLength``)."""
    head = _HEAD.match(data)
    if head is None:
        return None
    try:
        fields = json.loads("{" + head.group(1)[:-1] + "}")
    except ValueError:
        return None
    kind, offset = fields.get("type"), fields.get("offset")
    if kind not in ("stdout", "stderr") or not isinstance(offset, int) or "bytes" in fields:
        return None
    text = _string_prefix(data[head.end() :])
    if text is None:
        return None
    if fields.get("encoding") == "base64":
        text = text[: len(text) - len(text) % 4]
        return {**fields, "data": text, "byteLength": base64_length(text)}
    return {**fields, "data": text, "byteLength": utf8_length(text)}


def is_stream_end(event: dict[str, Any]) -> bool:
    """An ``error`` event outside any log (no ``seq``) with a code: the stream cannot go on."""
    return event.get("type") == "error" and "seq" not in event and event.get("code") in ERROR_CODES


class ResumeCursor:
    """The reader's side of a resume point: the last whole event's id and each stream's byte position.

    Lengths are counted only when a position is asked for, so following a fast stream costs nothing
    per event.
    """

    __slots__ = ("since", "_marks")

    def __init__(self, since: int | None = None, stdout_offset: int | None = None, stderr_offset: int | None = None) -> None:
        self.since = since
        from_start = since is None or since == 0

        def mark(offset: int | None) -> list[Any] | None:
            # [offset, last event not yet counted]
            return [offset, None] if offset is not None else [0, None] if from_start else None

        self._marks: dict[str, list[Any] | None] = {"stdout": mark(stdout_offset), "stderr": mark(stderr_offset)}

    def position(self, stream: str) -> int | None:
        """A stream's byte position (``None`` while unknown)."""
        mark = self._marks[stream]
        if mark is None:
            return None
        if mark[1] is not None:
            mark[0] += output_length(mark[1])
            mark[1] = None
        return mark[0]

    def point(self) -> dict[str, int]:
        """Where to resume: ``since``, ``stdoutOffset``, ``stderrOffset`` (the known ones)."""
        point: dict[str, int] = {}
        if self.since is not None:
            point["since"] = self.since
        for stream, name in (("stdout", "stdoutOffset"), ("stderr", "stderrOffset")):
            position = self.position(stream)
            if position is not None:
                point[name] = position
        return point

    def passed(self, event: dict[str, Any]) -> None:
        """An event arrived whole."""
        seq = event.get("seq")
        if seq is not None:
            self.since = seq
        kind = event.get("type")
        if kind in ("stdout", "stderr") and isinstance(event.get("offset"), int) and isinstance(event.get("data"), str):
            self._marks[kind] = [event["offset"], event]
        elif kind == "truncated":
            self._skip("stdout", event.get("stdoutDropped") or 0)
            self._skip("stderr", event.get("stderrDropped") or 0)

    def passed_part(self, event: dict[str, Any]) -> None:
        """Part of an output event arrived (its id stays unpassed: the rest comes again under it)."""
        self._marks[event["type"]] = [event["offset"], event]

    def _skip(self, stream: str, dropped: int) -> None:
        position = self.position(stream)
        if position is not None:
            self._marks[stream] = [position + dropped, None]


def decode_output(event: dict[str, Any]) -> str:
    """An output event's data as text (base64 output decoded as UTF-8)."""
    data = event.get("data", "")
    if event.get("encoding") == "base64":
        return base64.b64decode(data).decode("utf-8", "replace")
    return data
