"""``Sandbox``: the sync client of one sandbox over the service's ``/v1`` HTTP API.

Commands (buffered, or streamed and resumed by themselves after a dropped connection), background
processes, files (``files.py``), code cells, sessions (``sessions.py``), preview ports.
``async_sandbox.py`` is the same API for asyncio; both build their requests in ``_api.py`` and read
streams with ``_streams.py``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx

from . import _api
from ._api import Call, segment
from ._execution import ExecutionBuilder
from ._streams import RetryPolicy, StreamSpec, iter_events
from ._transport import SyncTransport
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
from .files import Files
from .sessions import Sessions


class Sandbox:
    """One sandbox, by id, on an edge-sandbox service (it is created on first use).

    Use it as a context manager to close its connections::

        with Sandbox("my-sandbox") as sandbox:
            print(sandbox.exec("echo hi").stdout)

    Args:
        id: The sandbox's id (lowercase letters, digits and ``-`` make the best preview URLs).
        url: The service's base URL, e.g. ``http://127.0.0.1:8787`` (default: ``EDGE_SANDBOX_URL``).
        token: The service's API token (default: ``EDGE_SANDBOX_TOKEN``).
        retry: How broken streams (and lost answers of calls that name their run) are retried.
        http_client: An httpx.Client of your own (its lifetime is then yours).
        headers: Extra headers for every request.
    """

    def __init__(
        self,
        id: str,
        url: str | None = None,
        token: str | None = None,
        *,
        retry: RetryPolicy | None = None,
        http_client: httpx.Client | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        self.id = id
        self._t = SyncTransport(id, url, token, retry, headers, http_client)
        self.files = Files(self._t)
        self.sessions = Sessions(self._t)

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Closes the client's connections (the sandbox itself goes on: see :meth:`destroy`)."""
        self._t.close()

    def __repr__(self) -> str:
        return f"Sandbox({self.id!r}, url={self._t.url!r})"

    # ── commands ────────────────────────────────────────────────────────────

    def exec(
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

        Args:
            command: Run by bash, in the session's state (cwd, exports, functions).
            timeout: Seconds before the command is killed; then ExecutionTimeoutError, whose
                ``result`` has the output so far.
            env: Variables for this command (``None`` as a value unsets one).
            cwd: Its working directory (relative: against the session's).
            session_id: The session to run in (default: the sandbox's default session).
            stdin: Text fed to its stdin, then end of file.

        Raises:
            ExecutionTimeoutError: It ran out of its time limit.
        """
        # Named up front, so a caller who gives up (Ctrl-C) can kill it, and a lost answer is asked again.
        pid = _api.new_command_id()
        body = _api.command_body(command, timeout=timeout, env=env, cwd=cwd, session_id=session_id, stdin=stdin, process_id=pid)
        try:
            return ExecResult.from_wire(self._t.json(Call("POST", "/exec", body)))
        except KeyboardInterrupt:
            self._give_up(_api.kill_call(pid))
            raise

    def exec_stream(
        self,
        command: str,
        *,
        timeout: float | None = None,
        env: dict[str, str | None] | None = None,
        cwd: str | None = None,
        session_id: str | None = None,
        process_id: str | None = None,
    ) -> Iterator[ExecEvent]:
        """Runs a command and yields its events as they happen: ``start``, ``stdout``/``stderr``
        (``data``), then ``complete`` (``result``, ``exit_code``).

        A dropped connection is resumed where it broke off, to the byte: no output lost or
        repeated (an event cut in the middle comes as two events of the same ``seq``). Leaving the
        loop early leaves the command running (kill it by its ``process_id``).

        Raises:
            ExecutionTimeoutError: It ran out of its time limit (after the output it printed).
            SandboxConnectionError: The connection broke and every reconnect failed.
        """
        pid = process_id or _api.new_command_id()
        body = _api.command_body(command, timeout=timeout, env=env, cwd=cwd, session_id=session_id, process_id=pid)
        first = self._t.send(Call("POST", "/exec/stream", body), stream=True)
        reopen = lambda point: self._t.send(_api.resume_call(f"/exec/{segment(pid)}/stream", point), stream=True)  # noqa: E731
        yield from _exec_events(iter_events(first, reopen, _api.exec_spec(command), self._t.retry))

    # ── processes ───────────────────────────────────────────────────────────

    def start_process(
        self,
        command: str,
        *,
        process_id: str | None = None,
        env: dict[str, str | None] | None = None,
        cwd: str | None = None,
        session_id: str | None = None,
        timeout: float | None = None,
    ) -> Process:
        """Starts a command in the background and returns its handle at once.

        Args:
            process_id: Its id (default: one the sandbox makes); starting the same id again while
                it runs is ProcessAlreadyExistsError.
            timeout: Seconds before it is killed.
        """
        body = _api.command_body(command, process_id=process_id, env=env, cwd=cwd, session_id=session_id, timeout=timeout)
        answer = self._t.json(Call("POST", "/processes", body))
        return Process(ProcessInfo.from_wire(answer["process"]), self._t)

    def get_process(self, process_id: str) -> Process:
        """A handle on a process by its id (ProcessNotFoundError when there is none)."""
        return Process(ProcessInfo.from_wire(self._t.json(Call("GET", f"/processes/{segment(process_id)}"))["process"]), self._t)

    def list_processes(self) -> list[Process]:
        """Handles on the sandbox's processes, running and finished (until cleaned up)."""
        return [Process(ProcessInfo.from_wire(p), self._t) for p in self._t.json(Call("GET", "/processes"))["processes"]]

    # ── code ────────────────────────────────────────────────────────────────

    def run_code(
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
        """Runs a code cell in a stateful interpreter and returns its Execution.

        The callbacks are called as the cell runs (its output streamed, resumed after a dropped
        connection). An error the code raises is the Execution's ``error``, not an exception.
        Ctrl-C while it runs interrupts the cell before the ``KeyboardInterrupt`` reaches you.

        Args:
            language: ``python`` (default), ``javascript``, ``typescript`` or ``bash``; runs in that
                language's default context unless ``context`` is given.
            context: A context from :meth:`create_code_context` (or its id).
            timeout: Seconds before the cell is interrupted.
            env: Variables for this cell only.
        """
        body = _api.run_code_body(code, language, context, timeout, env)
        builder = ExecutionBuilder()
        # Always over the event stream: it resumes after a dropped connection, and it names the run
        # early, so a caller who gives up (Ctrl-C, a callback that raises) interrupts the cell.
        started: dict[str, str] = {}
        try:
            for event in self._code_events(body, started):
                builder.add(event, on_stdout, on_stderr, on_result, on_error)
            return builder.execution()
        except BaseException:
            if "id" in started and not builder.complete:
                self._give_up(_api.interrupt_call(started["id"]))
            raise

    def _code_events(self, body: dict[str, Any], started: dict[str, str]) -> Iterator[dict[str, Any]]:
        first = self._t.send(Call("POST", "/code/run/stream", body), stream=True)

        def reopen(point: dict[str, int]) -> httpx.Response:
            if "id" not in started:
                raise SandboxConnectionError("code run stream broke before the run was accepted")
            return self._t.send(_api.resume_call(f"/code/executions/{segment(started['id'])}/stream", point), stream=True)

        for event in iter_events(first, reopen, _api.code_spec(), self._t.retry):
            if event.get("type") == "start":
                started["id"] = event["executionId"]
            yield event

    def _give_up(self, call: Call) -> None:
        """Stops a run its caller abandoned; best effort (the caller's own error is what they see)."""
        try:
            self._t.send(call, timeout=_api.GIVE_UP_TIMEOUT)
        except Exception:
            pass

    def create_code_context(self, language: str = "python", cwd: str | None = None, env: dict[str, str] | None = None) -> CodeContext:
        """A new interpreter that keeps its state (variables, imports, cwd) between runs."""
        body = _api.without_none(language=language, cwd=cwd, env=env)
        return CodeContext.from_wire(self._t.json(Call("POST", "/code/contexts", body))["context"])

    def list_code_contexts(self) -> list[CodeContext]:
        """The sandbox's code contexts (its default ones too, once made)."""
        return [CodeContext.from_wire(c) for c in self._t.json(Call("GET", "/code/contexts"))["contexts"]]

    def delete_code_context(self, context: CodeContext | str) -> None:
        """Deletes a context (its interpreter ends)."""
        self._t.json(Call("DELETE", f"/code/contexts/{segment(context if isinstance(context, str) else context.id)}"))

    # ── ports, lifecycle ────────────────────────────────────────────────────

    def expose_port(self, port: int, *, name: str | None = None, public: bool | None = None, token: str | None = None) -> ExposedPort:
        """Serves a port of the sandbox (1024–65535) at a preview URL of its own origin.

        Args:
            public: Anyone with the URL may use it (default: the URL's token is needed).
            token: The URL's token (1–16 of a-z, 0-9, _) instead of a random one.
        """
        body = _api.without_none(port=port, name=name, public=public, token=token)
        return ExposedPort.from_wire(self._t.json(Call("POST", "/ports", body)))

    def unexpose_port(self, port: int) -> None:
        """Stops serving a port: its URL and token stop working."""
        self._t.json(Call("DELETE", f"/ports/{segment(port)}"))

    def list_exposed_ports(self) -> list[ExposedPort]:
        """The ports the running container serves."""
        return [ExposedPort.from_wire(p) for p in self._t.json(Call("GET", "/ports"))["ports"]]

    def destroy(self) -> None:
        """Destroys the sandbox's container now (its processes, contexts and sessions end)."""
        self._t.json(Call("DELETE", ""))


def _exec_events(events: Iterator[dict[str, Any]]) -> Iterator[ExecEvent]:
    for event in events:
        if event.get("type") == "error":
            raise error_from_code(event.get("code") or "INTERNAL_ERROR", event.get("error", ""), event.get("result"))
        yield exec_event(event)


class Process:
    """A background process: its record from when the handle was made, and calls on it.

    Every call carries the handle's container generation: after a container restart it fails with
    StaleProcessHandleError instead of touching whatever process has the same id now.
    """

    def __init__(self, info: ProcessInfo, transport: SyncTransport) -> None:
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
        return f"Process({self.id!r}, status={self.status!r})"

    @property
    def _query(self) -> dict[str, Any]:
        return {"generation": self.info.generation}

    def refresh(self) -> ProcessInfo:
        """Asks the sandbox how the process stands now (and keeps the answer in ``info``)."""
        answer = self._t.json(Call("GET", f"/processes/{segment(self.id)}", query=self._query))
        self.info = ProcessInfo.from_wire(answer["process"])
        return self.info

    def wait(self, timeout: float | None = None) -> ProcessInfo:
        """Waits until the process ends and returns its final record (``exit_code``, ``status``).

        Raises:
            ExecutionTimeoutError: It had not ended after ``timeout`` seconds (it goes on running).
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        info = self.refresh()
        if info.finished:
            return info
        for event in self._log_events(info.last_seq, deadline, timeout):
            if event.get("type") == "status" and event.get("status") in _api.TERMINAL_STATUSES:
                break
        return self.refresh()

    def kill(self, signal: str | int = "SIGTERM") -> None:
        """Signals the process's group (then SIGKILL after a grace period, if it lingers)."""
        self._t.json(Call("DELETE", f"/processes/{segment(self.id)}", query={**self._query, "signal": signal}))

    def logs(self) -> ProcessLogs:
        """Its output so far (``stdout``, ``stderr``)."""
        return ProcessLogs.from_wire(self._t.json(Call("GET", f"/processes/{segment(self.id)}/logs", query=self._query)))

    def stream_logs(self, since: int | None = None) -> Iterator[LogEvent]:
        """Its log as it happens: output events and status changes, up to its final status;
        resumed by itself after a dropped connection.

        Args:
            since: Only events after this ``seq`` (default: all that are retained).
        """
        return (log_event(event) for event in self._log_events(since, None, None))

    def send_stdin(self, data: str) -> None:
        """Writes text to the process's stdin."""
        self._t.json(Call("POST", f"/processes/{segment(self.id)}/stdin", {"data": data}, query=self._query))

    def close_stdin(self) -> None:
        """Closes the process's stdin (end of file)."""
        self._t.json(Call("POST", f"/processes/{segment(self.id)}/stdin", {"close": True}, query=self._query))

    def _log_events(self, since: int | None, deadline: float | None, timeout: float | None) -> Iterator[dict[str, Any]]:
        spec: StreamSpec = _api.log_spec(self.id, since)
        if deadline is not None:
            spec.deadline = deadline
            spec.timeout_message = f'Process "{self.id}" did not exit within {timeout} s'
        path = f"/processes/{segment(self.id)}/logs/stream"

        def open_at(point: dict[str, int]) -> httpx.Response:
            spec.check_deadline()
            return self._t.send(_api.resume_call(path, point, self._query), stream=True, timeout=_read_timeout(deadline))

        return iter_events(open_at(spec.cursor.point()), open_at, spec, self._t.retry)


def _read_timeout(deadline: float | None) -> httpx.Timeout | None:
    """For a wait with a deadline: reads give up within a second, so the deadline is kept to it."""
    if deadline is None:
        return None
    return httpx.Timeout(None, connect=10.0, read=max(0.05, min(1.0, deadline - time.monotonic())))


__all__ = ["Process", "Sandbox"]
