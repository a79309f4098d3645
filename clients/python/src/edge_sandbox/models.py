"""What the calls return: plain dataclasses read from the service's JSON (names in snake_case).

Each keeps the answer it was read from in ``raw``, so a field the service adds later is reachable
before this client names it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

OutputStream = Literal["stdout", "stderr"]


@dataclass
class ExecResult:
    """A finished command.

    Attributes:
        stdout: Its whole stdout (text).
        stderr: Its whole stderr (text).
        exit_code: Its exit code (124 when it ran out of its time limit, 128+N when killed by signal N).
        success: Exit code 0 and not timed out.
        command: The command as it ran.
        duration_ms: Milliseconds from spawn to exit.
        process_id: The id it ran under (resumable streams, kills).
        timed_out: It ran out of its time limit and was killed.
        signal: Name of the signal that ended it, when one did.
    """

    stdout: str
    stderr: str
    exit_code: int
    success: bool
    command: str = ""
    duration_ms: float = 0.0
    process_id: str | None = None
    session_id: str | None = None
    timed_out: bool = False
    signal: str | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_wire(cls, wire: dict[str, Any]) -> ExecResult:
        return cls(
            stdout=wire.get("stdout", ""),
            stderr=wire.get("stderr", ""),
            exit_code=wire.get("exitCode", -1),
            success=bool(wire.get("success", False)),
            command=wire.get("command", ""),
            duration_ms=wire.get("duration", 0.0),
            process_id=wire.get("processId"),
            session_id=wire.get("sessionId"),
            timed_out=bool(wire.get("timedOut", False)),
            signal=wire.get("signal"),
            raw=wire,
        )


@dataclass
class ExecEvent:
    """One event of a streamed command, as it happens.

    Attributes:
        type: ``start``, ``stdout``, ``stderr``, ``truncated`` or ``complete``.
        data: The output (``stdout``/``stderr``), else ``""``. An event cut by a dropped connection
            comes as two events of the same ``seq`` whose data joins without a gap or overlap.
        seq: The event's id in the command's log.
        offset: Byte offset of the output's first byte within its stream.
        result: The command's result (``complete``): exit code, duration, ids; its ``stdout`` and
            ``stderr`` are empty, the output having come as events.
        process_id: The command's id (``start``).
    """

    type: str
    data: str = ""
    seq: int | None = None
    offset: int | None = None
    result: ExecResult | None = None
    process_id: str | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def exit_code(self) -> int | None:
        """The exit code (``complete``)."""
        return None if self.result is None else self.result.exit_code


@dataclass
class ProcessInfo:
    """A background process as the sandbox reports it.

    Attributes:
        status: ``starting``, ``running``, ``completed``, ``failed``, ``killed`` or ``error``.
        exit_code: Its exit code once it ended.
        generation: The container it runs in: calls on a handle from an earlier container fail
            with StaleProcessHandleError.
    """

    id: str
    command: str
    status: str
    pid: int | None = None
    exit_code: int | None = None
    signal: str | None = None
    timed_out: bool = False
    session_id: str | None = None
    start_time: str = ""
    end_time: str | None = None
    generation: str | None = None
    last_seq: int | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def finished(self) -> bool:
        """It has ended (completed, failed, killed, or error)."""
        return self.status in ("completed", "failed", "killed", "error")

    @classmethod
    def from_wire(cls, wire: dict[str, Any]) -> ProcessInfo:
        return cls(
            id=wire["id"],
            command=wire.get("command", ""),
            status=wire.get("status", "error"),
            pid=wire.get("pid"),
            exit_code=wire.get("exitCode"),
            signal=wire.get("signal"),
            timed_out=bool(wire.get("timedOut", False)),
            session_id=wire.get("sessionId"),
            start_time=wire.get("startTime", ""),
            end_time=wire.get("endTime"),
            generation=wire.get("generation"),
            last_seq=wire.get("lastSeq"),
            raw=wire,
        )


@dataclass
class ProcessLogs:
    """A process's output so far (what its log still retains)."""

    stdout: str
    stderr: str
    stdout_dropped: int = 0
    stderr_dropped: int = 0

    @classmethod
    def from_wire(cls, wire: dict[str, Any]) -> ProcessLogs:
        return cls(wire.get("stdout", ""), wire.get("stderr", ""), wire.get("stdoutDropped", 0), wire.get("stderrDropped", 0))


@dataclass
class LogEvent:
    """One event of a process's log stream.

    Attributes:
        type: ``stdout``, ``stderr``, ``status`` or ``truncated``.
        data: The output (``stdout``/``stderr``), else ``""``.
        status: The new status (``status`` events); the stream ends after the final one.
        exit_code: The exit code (a final ``status`` event).
    """

    type: str
    data: str = ""
    seq: int | None = None
    offset: int | None = None
    status: str | None = None
    exit_code: int | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass
class FileEntry:
    """A directory entry.

    Attributes:
        name: The entry's name.
        path: Its path relative to the listed directory.
        type: ``file``, ``directory``, ``symlink`` or ``other``.
        size: Bytes (of the link itself for symlinks).
        mode: Permission bits, octal (``"0644"``).
    """

    name: str
    path: str
    type: str
    size: int
    mode: str = ""
    modified_at: str = ""
    absolute_path: str = ""

    @property
    def is_dir(self) -> bool:
        return self.type == "directory"

    @classmethod
    def from_wire(cls, wire: dict[str, Any]) -> FileEntry:
        return cls(
            name=wire["name"],
            path=wire.get("relativePath", wire["name"]),
            type=wire.get("type", "other"),
            size=wire.get("size", 0),
            mode=wire.get("mode", ""),
            modified_at=wire.get("modifiedAt", ""),
            absolute_path=wire.get("absolutePath", ""),
        )


@dataclass
class Result:
    """One output of a code cell, as a MIME bundle: each format it has.

    Attributes:
        text: text/plain.
        png: A PNG image, base64.
        chart: A matplotlib figure's structure (its type, title, axes and data), beside its png.
        is_main_result: The value of the cell's last expression (display() outputs are not).
    """

    text: str | None = None
    html: str | None = None
    markdown: str | None = None
    svg: str | None = None
    png: str | None = None
    jpeg: str | None = None
    json: Any = None
    latex: str | None = None
    javascript: str | None = None
    chart: dict[str, Any] | None = None
    is_main_result: bool = False
    raw: dict[str, Any] = field(default_factory=dict, repr=False)

    def formats(self) -> list[str]:
        """The formats this result has, e.g. ``["text", "png", "chart"]``."""
        names = ("text", "html", "markdown", "svg", "png", "jpeg", "json", "latex", "javascript", "chart")
        return [name for name in names if name in self.raw]

    @classmethod
    def from_wire(cls, wire: dict[str, Any]) -> Result:
        return cls(
            text=wire.get("text"),
            html=wire.get("html"),
            markdown=wire.get("markdown"),
            svg=wire.get("svg"),
            png=wire.get("png"),
            jpeg=wire.get("jpeg"),
            json=wire.get("json"),
            latex=wire.get("latex"),
            javascript=wire.get("javascript"),
            chart=wire.get("chart"),
            is_main_result=bool(wire.get("isMainResult", False)),
            raw=wire,
        )


@dataclass
class ExecutionError:
    """An error the cell's code raised.

    Attributes:
        name: e.g. ``ZeroDivisionError``, ``NameError``, ``KeyboardInterrupt``.
        value: The error's text.
        traceback: The lines the language prints for it.
    """

    name: str
    value: str
    traceback: list[str]

    @classmethod
    def from_wire(cls, wire: dict[str, Any]) -> ExecutionError:
        return cls(wire.get("name", ""), wire.get("value", wire.get("message", "")), list(wire.get("traceback", [])))


@dataclass
class Logs:
    """A cell's output chunks in the order they came."""

    stdout: list[str] = field(default_factory=list)
    stderr: list[str] = field(default_factory=list)


@dataclass
class Execution:
    """A finished code cell.

    Attributes:
        results: Its outputs (the last expression's value, display() calls, figures).
        logs: Its stdout and stderr chunks.
        error: The error its code raised, if any (an error of the code is not an error of the call).
        execution_count: The cell's number in its context.
    """

    results: list[Result] = field(default_factory=list)
    logs: Logs = field(default_factory=Logs)
    error: ExecutionError | None = None
    execution_count: int = 0
    execution_id: str = ""
    context_id: str = ""
    language: str = "python"
    duration_ms: float = 0.0
    timed_out: bool = False
    interrupted: bool = False

    @property
    def text(self) -> str | None:
        """The main result's text/plain, if the cell has one."""
        for result in self.results:
            if result.is_main_result:
                return result.text
        return None

    @classmethod
    def from_wire(cls, wire: dict[str, Any]) -> Execution:
        logs = wire.get("logs") or {}
        error = wire.get("error")
        return cls(
            results=[Result.from_wire(result) for result in wire.get("results", [])],
            logs=Logs(list(logs.get("stdout", [])), list(logs.get("stderr", []))),
            error=None if error is None else ExecutionError.from_wire(error),
            execution_count=wire.get("executionCount", 0),
            execution_id=wire.get("executionId", ""),
            context_id=wire.get("contextId", ""),
            language=wire.get("language", "python"),
            duration_ms=wire.get("duration", 0.0),
            timed_out=bool(wire.get("timedOut", False)),
            interrupted=bool(wire.get("interrupted", False)),
        )


@dataclass
class CodeContext:
    """A code context: an interpreter that keeps its state (variables, imports, cwd) between runs."""

    id: str
    language: str
    cwd: str
    is_default: bool = False
    raw: dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_wire(cls, wire: dict[str, Any]) -> CodeContext:
        return cls(wire["id"], wire.get("language", "python"), wire.get("cwd", ""), bool(wire.get("isDefault", False)), wire)


@dataclass
class ExposedPort:
    """A port of the sandbox served at a preview URL.

    Attributes:
        url: The preview URL; a private port's carries its token (``?token=``).
    """

    port: int
    url: str
    public: bool = False
    name: str | None = None

    @classmethod
    def from_wire(cls, wire: dict[str, Any]) -> ExposedPort:
        return cls(wire["port"], wire["url"], bool(wire.get("public", False)), wire.get("name"))


@dataclass
class SessionInfo:
    """A session: shell state (cwd, env, functions, aliases, options) carried between its commands."""

    id: str
    cwd: str
    env: dict[str, str] = field(default_factory=dict)
    is_default: bool = False
    running_processes: int = 0
    raw: dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_wire(cls, wire: dict[str, Any]) -> SessionInfo:
        return cls(wire["id"], wire.get("cwd", ""), dict(wire.get("env", {})), bool(wire.get("isDefault", False)), wire.get("runningProcesses", 0), wire)


def exec_event(wire: dict[str, Any]) -> ExecEvent:
    """An exec stream's event (complete: its result with the output that was streamed, set by the reader)."""
    from ._resume import decode_output

    kind = wire.get("type", "")
    if kind in ("stdout", "stderr"):
        return ExecEvent(kind, decode_output(wire), wire.get("seq"), wire.get("offset"), raw=wire)
    if kind == "complete":
        return ExecEvent(kind, "", wire.get("seq"), result=ExecResult.from_wire(wire.get("result") or {}), raw=wire)
    return ExecEvent(kind, "", wire.get("seq"), process_id=wire.get("processId"), raw=wire)


def log_event(wire: dict[str, Any]) -> LogEvent:
    """A process log stream's event."""
    from ._resume import decode_output

    kind = wire.get("type", "")
    data = decode_output(wire) if kind in ("stdout", "stderr") else ""
    return LogEvent(kind, data, wire.get("seq"), wire.get("offset"), wire.get("status"), wire.get("exitCode"), wire)
