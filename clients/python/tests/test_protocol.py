"""The client's reading of the wire, without a service: SSE framing, cut events, error classes."""

from __future__ import annotations

import json

import pytest

import edge_sandbox
from edge_sandbox import ERROR_CODES, ExecutionTimeoutError, InvalidRequestError, SandboxError
from edge_sandbox._resume import ResumeCursor, partial_output_event, utf8_length
from edge_sandbox._sse import SseParser, utf8_decoder
from edge_sandbox.errors import error_from_body, error_from_code


def frame(event: dict[str, object]) -> bytes:
    return f"id: {event['seq']}\nevent: {event['type']}\ndata: {json.dumps(event, ensure_ascii=False, separators=(',', ':'))}\n\n".encode()


EVENTS = [
    {"type": "stdout", "timestamp": "t", "seq": 1, "offset": 0, "data": 'żółw 🐢 "quoted"\t\\ \n'},
    {"type": "stdout", "timestamp": "t", "seq": 2, "offset": 30, "data": "x" * 50},
]


def test_sse_in_any_chunking_gives_the_same_messages() -> None:
    stream = b"".join(frame(e) for e in EVENTS) + b": keepalive\n\n"
    whole = SseParser().push(stream.decode())
    for size in (1, 2, 3, 7, 64):
        parser, decoder = SseParser(), utf8_decoder()
        messages = [m for i in range(0, len(stream), size) for m in parser.push(decoder.decode(stream[i : i + size]))]
        assert messages == whole
    assert [json.loads(m.data) for m in whole] == EVENTS


@pytest.mark.parametrize("cut", range(1, 120))
def test_an_event_cut_anywhere_keeps_the_part_that_came(cut: int) -> None:
    stream = frame(EVENTS[0])
    parser, decoder = SseParser(), utf8_decoder()
    parser.push(decoder.decode(stream[:cut]))
    partial = parser.partial()
    part = partial_output_event(partial.data) if partial else None
    data = part["data"] if part else ""
    # What came is a prefix of the data, and its byte length says where the rest starts.
    assert EVENTS[0]["data"].startswith(data)  # type: ignore[union-attr]
    if part:
        assert part["byteLength"] == utf8_length(data)
        cursor = ResumeCursor()
        cursor.passed_part(part)
        assert cursor.point() == {"stdoutOffset": utf8_length(data), "stderrOffset": 0}


def test_every_error_class_carries_a_wire_code() -> None:
    exported = [getattr(edge_sandbox, name) for name in edge_sandbox.__all__]
    classes = [obj for obj in exported if isinstance(obj, type) and issubclass(obj, BaseException)]
    assert len(classes) >= 15 and all(issubclass(cls, SandboxError) for cls in classes)
    for cls in classes:
        error = cls("x")
        assert error.code in ERROR_CODES and error.http_status == ERROR_CODES[error.code]
    for code, status in ERROR_CODES.items():
        error = error_from_code(code, "m")
        assert (error.code, error.http_status) == (code, status)


def test_error_bodies_become_their_classes() -> None:
    body = {"success": False, "code": "EXECUTION_TIMEOUT", "message": "m", "httpStatus": 422, "context": {"command": "c", "exitCode": 124, "stdout": "so far"}}
    error = error_from_body(body, 422)
    assert isinstance(error, ExecutionTimeoutError) and error.stdout == "so far"
    assert isinstance(error_from_body({"success": False, "code": "INVALID_PORT", "message": "m"}, 400), InvalidRequestError)
    unknown = error_from_body({"success": False, "code": "SOMETHING_NEW", "message": "m"}, 418)
    assert (unknown.code, unknown.context["code"]) == ("INTERNAL_ERROR", "SOMETHING_NEW")
    assert error_from_body("<html>bad gateway</html>", 502).code == "INTERNAL_ERROR"
