"""Event streams that survive broken connections, sync and async, as the TypeScript client's
``resumableEvents`` (src/rpc/resumable-stream.ts) reads them.

A stream keeps a cursor (``_resume.ResumeCursor``). When its connection drops, or the stream ends
before its final event, the part of an output event that came is handed on and the stream is
opened again from the cursor: no byte lost, none repeated. Reconnects are bounded: a failed one
counts against ``attempts`` (with a doubling delay), one that succeeds resets the count. Answers of
the service (404, 410, …) are final, and so is a stream that ends with the coded ``error`` event
saying its container stopped.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Any

import httpx

from ._resume import ResumeCursor, is_stream_end, partial_output_event
from ._sse import SseParser, utf8_decoder
from .errors import ExecutionTimeoutError, SandboxConnectionError, SandboxError, error_from_code


@dataclass
class RetryPolicy:
    """How a broken stream is reconnected.

    Attributes:
        attempts: Failed reconnects in a row before giving up with SandboxConnectionError.
        base_delay: Seconds before the first reconnect; doubles per failed attempt.
        max_delay: The longest delay between attempts, in seconds.
    """

    attempts: int = 5
    base_delay: float = 0.1
    max_delay: float = 2.0

    def delay(self, failures: int) -> float:
        return min(self.max_delay, self.base_delay * 2 ** (failures - 1))


@dataclass
class StreamSpec:
    """What a stream is: how to tell its last event, its cursor, and a name for errors.

    ``deadline`` (``time.monotonic()``), with ``timeout_message``: past it, reading stops with
    ExecutionTimeoutError (a wait on the caller's side).
    """

    describe: str
    is_final: Callable[[dict[str, Any]], bool]
    cursor: ResumeCursor
    deadline: float | None = None
    timeout_message: str = ""

    def check_deadline(self) -> None:
        if self.deadline is not None and time.monotonic() >= self.deadline:
            raise ExecutionTimeoutError(self.timeout_message)


def _retryable(error: SandboxError) -> bool:
    return isinstance(error, SandboxConnectionError) or error.code == "CONTAINER_UNAVAILABLE"


class _Connection:
    """One connection's reading: bytes in, whole events out; what came of a cut event at the end."""

    __slots__ = ("spec", "parser", "decoder", "events")

    def __init__(self, spec: StreamSpec) -> None:
        self.spec = spec
        self.parser = SseParser()
        self.decoder = utf8_decoder()
        self.events = 0

    def feed(self, chunk: bytes) -> list[dict[str, Any]]:
        out = []
        for message in self.parser.push(self.decoder.decode(chunk)):
            self.events += 1
            try:
                event = json.loads(message.data)
            except ValueError as error:
                raise SandboxError(f"Malformed event in a stream: {message.data[:200]}", "INTERNAL_ERROR") from error
            if is_stream_end(event):
                raise error_from_code(event["code"], f"{self.spec.describe}: {event.get('error', '')}", self.spec.cursor.point())
            out.append(event)
        return out

    def cut_part(self) -> dict[str, Any] | None:
        """The part of an output event the break cut off, as an event (the cursor moved past it)."""
        cut = self.parser.partial()
        part = partial_output_event(cut.data) if cut is not None else None
        if part is None or part["byteLength"] == 0:
            return None
        del part["byteLength"]
        self.spec.cursor.passed_part(part)
        return part


class _Budget:
    """Failed reconnects and event-less clean ends in a row, against the policy."""

    def __init__(self, spec: StreamSpec, retry: RetryPolicy) -> None:
        self.spec = spec
        self.retry = retry
        self.failures = 0
        self.empty_ends = 0

    def ended(self, connection: _Connection, cleanly: bool) -> None:
        self.empty_ends = self.empty_ends + 1 if cleanly and connection.events == 0 else 0
        if self.empty_ends > self.retry.attempts:
            raise SandboxConnectionError(f"{self.spec.describe}: the stream ends again and again without its final event", context=self.spec.cursor.point())

    def next_delay(self, cause: object) -> float:
        self.failures += 1
        if self.failures > self.retry.attempts:
            raise SandboxConnectionError(
                f"{self.spec.describe}: connection lost and {self.retry.attempts} reconnects failed ({cause})", context=self.spec.cursor.point()
            )
        return self.retry.delay(self.failures)


def iter_events(
    first: httpx.Response, reopen: Callable[[dict[str, int]], httpx.Response], spec: StreamSpec, retry: RetryPolicy
) -> Iterator[dict[str, Any]]:
    """The JSON events of ``first`` and, after a break, of the streams ``reopen`` gives, as one sequence."""
    response = first
    budget = _Budget(spec, retry)
    cursor = spec.cursor
    while True:
        connection = _Connection(spec)
        cause: object = "the stream ended before its final event"
        cleanly = False
        try:
            for chunk in response.iter_bytes():
                spec.check_deadline()
                for event in connection.feed(chunk):
                    cursor.passed(event)
                    yield event
                    if spec.is_final(event):
                        return
            cleanly = True
        except httpx.TransportError as error:
            cause = error
        finally:
            response.close()
        budget.ended(connection, cleanly)
        part = connection.cut_part()
        if part is not None:
            yield part
        while True:
            time.sleep(budget.next_delay(cause))
            spec.check_deadline()
            try:
                response = reopen(cursor.point())
                budget.failures = 0
                break
            except SandboxError as error:
                if not _retryable(error):
                    raise
                cause = error


async def aiter_events(
    first: httpx.Response, reopen: Callable[[dict[str, int]], Awaitable[httpx.Response]], spec: StreamSpec, retry: RetryPolicy
) -> AsyncIterator[dict[str, Any]]:
    """The async twin of :func:`iter_events`."""
    response = first
    budget = _Budget(spec, retry)
    cursor = spec.cursor
    while True:
        connection = _Connection(spec)
        cause: object = "the stream ended before its final event"
        cleanly = False
        try:
            async for chunk in response.aiter_bytes():
                spec.check_deadline()
                for event in connection.feed(chunk):
                    cursor.passed(event)
                    yield event
                    if spec.is_final(event):
                        return
            cleanly = True
        except httpx.TransportError as error:
            cause = error
        finally:
            await response.aclose()
        budget.ended(connection, cleanly)
        part = connection.cut_part()
        if part is not None:
            yield part
        while True:
            await asyncio.sleep(budget.next_delay(cause))
            spec.check_deadline()
            try:
                response = await reopen(cursor.point())
                budget.failures = 0
                break
            except SandboxError as error:
                if not _retryable(error):
                    raise
                cause = error
