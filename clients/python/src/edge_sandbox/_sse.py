"""Server-Sent Events, read incrementally, as ``protocol/sse.ts`` reads them.

A frame is ``id: <seq>\\nevent: <type>\\ndata: <json>\\n\\n``; ``: keepalive`` comments keep idle
streams open. The parser takes decoded text as it arrives and returns the messages it completes;
``partial()`` gives the message a broken connection cut off, so its output is not lost.
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass


@dataclass
class SseMessage:
    """One message: its id (``None`` when it has none), event name and data."""

    id: str | None
    event: str
    data: str


class SseParser:
    """Incremental SSE parser (CRLF, CR and LF line ends, comments, multi-line data)."""

    __slots__ = ("_pending", "_id", "_event", "_data")

    def __init__(self) -> None:
        # Text after the last line end, in the pieces it came in: a long data line arriving in many
        # chunks is joined once, not once per chunk.
        self._pending: list[str] = []
        self._id: str | None = None
        self._event = ""
        self._data: list[str] | None = None

    def push(self, text: str) -> list[SseMessage]:
        """Feeds decoded text; returns the messages it completed."""
        if "\n" not in text and "\r" not in text and not (self._pending and self._pending[-1].endswith("\r")):
            if text:
                self._pending.append(text)
            return []
        buffer = "".join(self._pending) + text if self._pending else text
        self._pending = []
        out: list[SseMessage] = []
        start = 0
        length = len(buffer)
        cr = buffer.find("\r")
        while True:
            if cr != -1 and cr < start:
                cr = buffer.find("\r", start)
            lf = buffer.find("\n", start)
            if cr != -1 and (lf == -1 or cr < lf):
                if cr == length - 1:
                    break  # maybe the first half of CRLF: wait for more
                end = cr
                nxt = cr + 2 if buffer[cr + 1] == "\n" else cr + 1
            elif lf != -1:
                end = lf
                nxt = lf + 1
            else:
                break
            message = self._line(buffer[start:end])
            if message is not None:
                out.append(message)
            start = nxt
        if start < length:
            self._pending.append(buffer[start:])
        return out

    def partial(self) -> SseMessage | None:
        """The message being received, as far as it came (its unfinished last data line included)."""
        data = list(self._data or [])
        pending = "".join(self._pending)
        if pending.startswith("data:"):
            data.append(pending[6:] if pending.startswith("data: ") else pending[5:])
        elif self._data is None:
            return None
        return SseMessage(self._id, self._event or "message", "\n".join(data))

    def _line(self, line: str) -> SseMessage | None:
        if not line:
            return self._dispatch()
        if line[0] == ":":
            return None
        colon = line.find(":")
        field = line if colon == -1 else line[:colon]
        value = "" if colon == -1 else line[colon + 1 :]
        if value.startswith(" "):
            value = value[1:]
        if field == "data":
            if self._data is None:
                self._data = [value]
            else:
                self._data.append(value)
        elif field == "event":
            self._event = value
        elif field == "id" and "\0" not in value:
            self._id = value
        return None

    def _dispatch(self) -> SseMessage | None:
        message = None if self._data is None else SseMessage(self._id, self._event or "message", "\n".join(self._data))
        self._id = None
        self._event = ""
        self._data = None
        return message


def utf8_decoder() -> codecs.IncrementalDecoder:
    """A decoder that keeps a character split between chunks until its last byte comes."""
    return codecs.getincrementaldecoder("utf-8")(errors="replace")
