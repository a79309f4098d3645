"""``AsyncSandbox``: the asyncio client of one sandbox, the same API as ``Sandbox`` (sandbox.py)
with coroutines and async iterators. Use it as an async context manager::

    async with AsyncSandbox("my-sandbox") as sandbox:
        async for event in sandbox.exec_stream("make"):
            print(event.data, end="")
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx

from . import _api
from ._api import Call, segment
from ._execution import ExecutionBuilder
from ._streams import RetryPolicy, StreamSpec, aiter_events
from ._transport import AsyncTransport
from .errors import SandboxConnectionError, error_from_code
from .models import (
    CodeContext,
    ExecEvent,
    ExecResult,
    Execution,
    ExecutionError,
    ExposedPort,
    LogEvent,
    ProcessInfo,
    ProcessLogs,
    Result,
    exec_event,
    log_event,
)
from .files import AsyncFiles
from .sandbox import _read_timeout
from .sessions import AsyncSessions


class AsyncSandbox:
    """One sandbox, by id, on an edge-sandbox service, for asyncio (see :class:`~edge_sandbox.Sandbox`).

    Args:
        id: The sandbox's id.
        url: The service's base URL (default: ``EDGE_SANDBOX_URL``).
        token: The service's API token (default: ``EDGE_SANDBOX_TOKEN``).
        retry: How broken streams (and lost answers of calls that name their run) are retried.
        http_client: An httpx.AsyncClient of your own (its lifetime is then yours).
        headers: Extra headers for every request.
    """

    def __init__(
        self,
        id: str,
        url: str | None = None,
        token: str | None = None,
        *,
        retry: RetryPolicy | None = None,
        http_client: httpx.AsyncClient | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        self.id = id
        self._t = AsyncTransport(id, url, token, retry, headers, http_client)
        self.files = AsyncFiles(self._t)
        self.sessions = AsyncSessions(self._t)

    async def __aenter__(self) -> AsyncSandbox:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        """Closes the client's connections (the sandbox itself goes on: see :meth:`destroy`)."""
        await self._t.close()

    def __repr__(self) -> str:
        return f"AsyncSandbox({self.id!r}, url={self._t.url!r})"

    async def exec(
        self,
        command: str,
        *,
        timeout: float | None = None,
        env: dict[str, str | None] | None = None,
        cwd: str | None = None,
        session_id: str | None = None,
        stdin: str | None = None,
    ) -> ExecResult:
        """Runs a command to its end and returns its result (a non-zero exit is no error).

        Raises:
            ExecutionTimeoutError: It ran out of its ``timeout`` (seconds); ``result`` has the output so far.
        """
        # Named up front, so a cancelled call can kill it, and a lost answer is asked again.
        pid = _api.new_command_id()
        body = _api.command_body(command, timeout=timeout, env=env, cwd=cwd, session_id=session_id, stdin=stdin, process_id=pid)
        try:
            return ExecResult.from_wire(await self._t.json(Call("POST", "/exec", body)))
        except asyncio.CancelledError:
            await self._give_up(_api.kill_call(pid))
            raise

    async def exec_stream(
        self,
        command: str,
        *,
        timeout: float | None = None,
        env: dict[str, str | None] | None = None,
        cwd: str | None = None,
        session_id: str | None = None,
        process_id: str | None = None,
    ) -> AsyncIterator[ExecEvent]:
        """Runs a command and yields its events as they happen (``start``, ``stdout``/``stderr``,
        ``complete``), resumed to the byte after a dropped connection.

        Raises:
            ExecutionTimeoutError: It ran out of its time limit (after the output it printed).
            SandboxConnectionError: The connection broke and every reconnect failed.
        """
        pid = process_id or _api.new_command_id()
        body = _api.command_body(command, timeout=timeout, env=env, cwd=cwd, session_id=session_id, process_id=pid)
        first = await self._t.send(Call("POST", "/exec/stream", body), stream=True)

        async def reopen(point: dict[str, int]) -> httpx.Response:
            return await self._t.send(_api.resume_call(f"/exec/{segment(pid)}/stream", point), stream=True)

        async for event in aiter_events(first, reopen, _api.exec_spec(command), self._t.retry):
            if event.get("type") == "error":
                raise error_from_code(event.get("code") or "INTERNAL_ERROR", event.get("error", ""), event.get("result"))
            yield exec_event(event)

    async def start_process(
        self,
        command: str,
        *,
        process_id: str | None = None,
        env: dict[str, str | None] | None = None,
        cwd: str | None = None,
        session_id: str | None = None,
        timeout: float | None = None,
    ) -> AsyncProcess:
        """Starts a command in the background and returns its handle at once."""
        body = _api.command_body(command, process_id=process_id, env=env, cwd=cwd, session_id=session_id, timeout=timeout)
        answer = await self._t.json(Call("POST", "/processes", body))
        return AsyncProcess(ProcessInfo.from_wire(answer["process"]), self._t)

    async def get_process(self, process_id: str) -> AsyncProcess:
        """A handle on a process by its id (ProcessNotFoundError when there is none)."""
        answer = await self._t.json(Call("GET", f"/processes/{segment(process_id)}"))
        return AsyncProcess(ProcessInfo.from_wire(answer["process"]), self._t)

    async def list_processes(self) -> list[AsyncProcess]:
        """Handles on the sandbox's processes, running and finished (until cleaned up)."""
        return [AsyncProcess(ProcessInfo.from_wire(p), self._t) for p in (await self._t.json(Call("GET", "/processes")))["processes"]]

    async def run_code(
        self,
        code: str,
        language: str = "python",
        context: CodeContext | str | None = None,
        *,
        on_stdout: Callable[[str], object] | None = None,
        on_stderr: Callable[[str], object] | None = None,
        on_result: Callable[[Result], object] | None = None,
        on_error: Callable[[ExecutionError], object] | None = None,
        timeout: float | None = None,
        env: dict[str, str] | None = None,
    ) -> Execution:
        """Runs a code cell in a stateful interpreter and returns its Execution; the callbacks are
        called as the cell runs. An error the code raises is the Execution's ``error``."""
        body = _api.run_code_body(code, language, context, timeout, env)
        builder = ExecutionBuilder()
        started: dict[str, str] = {}

        async def reopen(point: dict[str, int]) -> httpx.Response:
            if "id" not in started:
                raise SandboxConnectionError("code run stream broke before the run was accepted")
            return await self._t.send(_api.resume_call(f"/code/executions/{segment(started['id'])}/stream", point), stream=True)

        # Always over the event stream (see Sandbox.run_code): a cancelled call interrupts its cell.
        try:
            first = await self._t.send(Call("POST", "/code/run/stream", body), stream=True)
            async for event in aiter_events(first, reopen, _api.code_spec(), self._t.retry):
                if event.get("type") == "start":
                    started["id"] = event["executionId"]
                builder.add(event, on_stdout, on_stderr, on_result, on_error)
            return builder.execution()
        except BaseException:
            if "id" in started and not builder.complete:
                await self._give_up(_api.interrupt_call(started["id"]))
            raise

    async def _give_up(self, call: Call) -> None:
        """Stops a run its caller abandoned; best effort, and shielded from the cancellation that
        abandoned it (the caller's own error is what they see)."""
        try:
            await asyncio.shield(self._t.send(call, timeout=_api.GIVE_UP_TIMEOUT))
        except Exception:
            pass

    async def create_code_context(self, language: str = "python", cwd: str | None = None, env: dict[str, str] | None = None) -> CodeContext:
        """A new interpreter that keeps its state (variables, imports, cwd) between runs."""
        body = _api.without_none(language=language, cwd=cwd, env=env)
        return CodeContext.from_wire((await self._t.json(Call("POST", "/code/contexts", body)))["context"])

    async def list_code_contexts(self) -> list[CodeContext]:
        """The sandbox's code contexts."""
        return [CodeContext.from_wire(c) for c in (await self._t.json(Call("GET", "/code/contexts")))["contexts"]]

    async def delete_code_context(self, context: CodeContext | str) -> None:
        """Deletes a context (its interpreter ends)."""
        await self._t.json(Call("DELETE", f"/code/contexts/{segment(context if isinstance(context, str) else context.id)}"))

    async def expose_port(self, port: int, *, name: str | None = None, public: bool | None = None, token: str | None = None) -> ExposedPort:
        """Serves a port of the sandbox (1024–65535) at a preview URL of its own origin."""
        body = _api.without_none(port=port, name=name, public=public, token=token)
        return ExposedPort.from_wire(await self._t.json(Call("POST", "/ports", body)))

    async def unexpose_port(self, port: int) -> None:
        """Stops serving a port: its URL and token stop working."""
        await self._t.json(Call("DELETE", f"/ports/{segment(port)}"))

    async def list_exposed_ports(self) -> list[ExposedPort]:
        """The ports the running container serves."""
        return [ExposedPort.from_wire(p) for p in (await self._t.json(Call("GET", "/ports")))["ports"]]

    async def destroy(self) -> None:
        """Destroys the sandbox's container now (its processes, contexts and sessions end)."""
        await self._t.json(Call("DELETE", ""))


class AsyncProcess:
    """A background process (see :class:`~edge_sandbox.Process`), for asyncio."""

    def __init__(self, info: ProcessInfo, transport: AsyncTransport) -> None:
        self.info = info
        self._t = transport

    @property
    def id(self) -> str:
        return self.info.id

    @property
    def pid(self) -> int | None:
        return self.info.pid

    @property
    def status(self) -> str:
        """Its status when the handle was made or last refreshed."""
        return self.info.status

    @property
    def exit_code(self) -> int | None:
        return self.info.exit_code

    def __repr__(self) -> str:
        return f"AsyncProcess({self.id!r}, status={self.status!r})"

    @property
    def _query(self) -> dict[str, Any]:
        return {"generation": self.info.generation}

    async def refresh(self) -> ProcessInfo:
        """Asks the sandbox how the process stands now (and keeps the answer in ``info``)."""
        answer = await self._t.json(Call("GET", f"/processes/{segment(self.id)}", query=self._query))
        self.info = ProcessInfo.from_wire(answer["process"])
        return self.info

    async def wait(self, timeout: float | None = None) -> ProcessInfo:
        """Waits until the process ends and returns its final record.

        Raises:
            ExecutionTimeoutError: It had not ended after ``timeout`` seconds (it goes on running).
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        info = await self.refresh()
        if info.finished:
            return info
        async for event in self._log_events(info.last_seq, deadline, timeout):
            if event.get("type") == "status" and event.get("status") in _api.TERMINAL_STATUSES:
                break
        return await self.refresh()

    async def kill(self, signal: str | int = "SIGTERM") -> None:
        """Signals the process's group (then SIGKILL after a grace period, if it lingers)."""
        await self._t.json(Call("DELETE", f"/processes/{segment(self.id)}", query={**self._query, "signal": signal}))

    async def logs(self) -> ProcessLogs:
        """Its output so far (``stdout``, ``stderr``)."""
        return ProcessLogs.from_wire(await self._t.json(Call("GET", f"/processes/{segment(self.id)}/logs", query=self._query)))

    async def stream_logs(self, since: int | None = None) -> AsyncIterator[LogEvent]:
        """Its log as it happens, up to its final status; resumed by itself after a dropped connection."""
        async for event in self._log_events(since, None, None):
            yield log_event(event)

    async def send_stdin(self, data: str) -> None:
        """Writes text to the process's stdin."""
        await self._t.json(Call("POST", f"/processes/{segment(self.id)}/stdin", {"data": data}, query=self._query))

    async def close_stdin(self) -> None:
        """Closes the process's stdin (end of file)."""
        await self._t.json(Call("POST", f"/processes/{segment(self.id)}/stdin", {"close": True}, query=self._query))

    async def _log_events(self, since: int | None, deadline: float | None, timeout: float | None) -> AsyncIterator[dict[str, Any]]:
        spec: StreamSpec = _api.log_spec(self.id, since)
        if deadline is not None:
            spec.deadline = deadline
            spec.timeout_message = f'Process "{self.id}" did not exit within {timeout} s'
        path = f"/processes/{segment(self.id)}/logs/stream"

        async def open_at(point: dict[str, int]) -> httpx.Response:
            spec.check_deadline()
            return await self._t.send(_api.resume_call(path, point, self._query), stream=True, timeout=_read_timeout(deadline))

        async for event in aiter_events(await open_at(spec.cursor.point()), open_at, spec, self._t.retry):
            yield event


__all__ = ["AsyncProcess", "AsyncSandbox"]
