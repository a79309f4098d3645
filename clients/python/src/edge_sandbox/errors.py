"""Errors of the client: every one is a :class:`SandboxError` carrying the wire ``code``.

The service answers a failed call with ``{code, message, httpStatus, context}``; a stream ends with
an ``error`` event carrying a ``code``. Either way the client raises the class of that code (the
classes the TypeScript client has, by the same codes), or a plain :class:`SandboxError` with the
code for the rest. The codes themselves are ``protocol/errors.ts``'s (see ``_error_codes.py``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from ._error_codes import ERROR_CODES

if TYPE_CHECKING:
    from .models import ExecResult

__all__ = [
    "ERROR_CODES",
    "CodeContextBusyError",
    "CodeContextNotFoundError",
    "CodeExecutionNotFoundError",
    "ContainerUnavailableError",
    "ExecutionTimeoutError",
    "InvalidRequestError",
    "IsolationUnavailableError",
    "PathOutsideWorkspaceError",
    "ProcessAlreadyExistsError",
    "ProcessNotFoundError",
    "ProcessNotRunningError",
    "SandboxAuthError",
    "SandboxConnectionError",
    "SandboxError",
    "SandboxFileNotFoundError",
    "SessionAlreadyExistsError",
    "SessionNotFoundError",
    "StaleProcessHandleError",
    "error_from_code",
]


class SandboxError(Exception):
    """An error of the sandbox service or of reaching it.

    Attributes:
        code: The wire code (a key of ``ERROR_CODES``), e.g. ``"PROCESS_NOT_FOUND"``.
        http_status: The HTTP status that code has.
        message: What went wrong, as the service said it.
        context: Details the service attached (ids, paths, a timed-out command's result so far).
    """

    #: The code a subclass stands for (``None``: the code is given to the constructor).
    default_code: ClassVar[str | None] = None

    def __init__(self, message: str, code: str | None = None, context: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        resolved = code or self.default_code or "INTERNAL_ERROR"
        self.code: str = resolved if resolved in ERROR_CODES else "INTERNAL_ERROR"
        self.http_status: int = ERROR_CODES[self.code]
        self.message: str = message
        self.context: dict[str, Any] = dict(context or {})
        if resolved != self.code:
            # A code this client does not know (a newer service): kept, not lost.
            self.context.setdefault("code", resolved)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.message!r}, code={self.code!r})"


class ProcessNotFoundError(SandboxError):
    """No process (or command) by that id: never started, cleaned up, or gone with its container."""

    default_code = "PROCESS_NOT_FOUND"


class ProcessAlreadyExistsError(SandboxError):
    """A process id that a running process already has."""

    default_code = "PROCESS_EXISTS"


class ProcessNotRunningError(SandboxError):
    """The process has exited (stdin to it, or a wait for output it never printed)."""

    default_code = "PROCESS_NOT_RUNNING"


class StaleProcessHandleError(SandboxError):
    """A handle from before the container restarted: its process is gone, whatever shares its id now."""

    default_code = "STALE_PROCESS_HANDLE"


class ExecutionTimeoutError(SandboxError):
    """Something ran out of its time limit.

    From ``exec`` (buffered or streamed) the command was killed, and :attr:`result` is its result so
    far: the output up to the kill, exit code 124, ``timed_out``. From a wait on the caller's side
    (``Process.wait``) there is no result.
    """

    default_code = "EXECUTION_TIMEOUT"

    @property
    def result(self) -> ExecResult | None:
        """The timed-out command's result so far (``None`` when a wait ran out, not a command)."""
        from .models import ExecResult

        context = self.context
        if isinstance(context.get("exitCode"), int) and isinstance(context.get("command"), str):
            return ExecResult.from_wire(context)
        return None

    @property
    def stdout(self) -> str | None:
        """The command's stdout up to the kill."""
        result = self.result
        return None if result is None else result.stdout

    @property
    def stderr(self) -> str | None:
        """The command's stderr up to the kill."""
        result = self.result
        return None if result is None else result.stderr

    @property
    def exit_code(self) -> int | None:
        """124 for a command killed at its time limit."""
        result = self.result
        return None if result is None else result.exit_code


class ContainerUnavailableError(SandboxError):
    """The sandbox's container could not be started or reached."""

    default_code = "CONTAINER_UNAVAILABLE"


class SessionNotFoundError(SandboxError):
    """No session by that id."""

    default_code = "SESSION_NOT_FOUND"


class SessionAlreadyExistsError(SandboxError):
    """A session id already in use."""

    default_code = "SESSION_EXISTS"


class SandboxFileNotFoundError(SandboxError):
    """No file or directory at that path in the sandbox (named apart from Python's own FileNotFoundError)."""

    default_code = "FILE_NOT_FOUND"


class PathOutsideWorkspaceError(SandboxError):
    """A path that leads out of what the sandbox may touch."""

    default_code = "PATH_OUTSIDE_WORKSPACE"


class IsolationUnavailableError(SandboxError):
    """An isolation the machine running the sandbox does not offer."""

    default_code = "ISOLATION_UNAVAILABLE"


class CodeContextNotFoundError(SandboxError):
    """A code context the sandbox does not know (deleted, or gone with a restarted container)."""

    default_code = "CODE_CONTEXT_NOT_FOUND"


class CodeContextBusyError(SandboxError):
    """The context was running a cell and the run asked not to wait."""

    default_code = "CODE_CONTEXT_BUSY"


class CodeExecutionNotFoundError(SandboxError):
    """A run that finished while its stream was disconnected, and whose record has expired."""

    default_code = "CODE_EXECUTION_NOT_FOUND"


class SandboxConnectionError(SandboxError):
    """The service could not be reached, or a stream was lost and every reconnect failed."""

    default_code = "CONNECTION_FAILED"


class SandboxAuthError(SandboxError):
    """The token was refused (``UNAUTHORIZED``), or the service has none set (``AUTH_NOT_CONFIGURED``)."""

    default_code = "UNAUTHORIZED"


class InvalidRequestError(SandboxError):
    """A request the service refused as malformed (bad JSON, a bad field, a bad signal or port, too large)."""

    default_code = "INVALID_REQUEST"


_CLASSES: dict[str, type[SandboxError]] = {
    cls.default_code: cls  # type: ignore[misc]
    for cls in (
        ProcessNotFoundError,
        ProcessAlreadyExistsError,
        ProcessNotRunningError,
        StaleProcessHandleError,
        ExecutionTimeoutError,
        ContainerUnavailableError,
        SessionNotFoundError,
        SessionAlreadyExistsError,
        SandboxFileNotFoundError,
        PathOutsideWorkspaceError,
        IsolationUnavailableError,
        CodeContextNotFoundError,
        CodeContextBusyError,
        CodeExecutionNotFoundError,
        SandboxConnectionError,
    )
}
_CLASSES["AUTH_NOT_CONFIGURED"] = SandboxAuthError
_CLASSES["UNAUTHORIZED"] = SandboxAuthError
for _code in ("INVALID_JSON", "INVALID_REQUEST", "INVALID_SIGNAL", "INVALID_SANDBOX_ID", "INVALID_PORT", "PAYLOAD_TOO_LARGE", "UNSUPPORTED_MEDIA_TYPE"):
    _CLASSES[_code] = InvalidRequestError


def error_from_code(code: str, message: str, context: dict[str, Any] | None = None) -> SandboxError:
    """The error a wire code stands for: its class, or a plain SandboxError with that code."""
    return _CLASSES.get(code, SandboxError)(message, code, context)


def error_from_body(body: Any, status: int) -> SandboxError:
    """The error of a failed HTTP answer: its ``{code, message, context}``, else its status and text."""
    if isinstance(body, dict) and body.get("success") is False and isinstance(body.get("code"), str):
        context = body.get("context")
        return error_from_code(body["code"], str(body.get("message", "")), context if isinstance(context, dict) else None)
    code = "UNAUTHORIZED" if status == 401 else "NOT_FOUND" if status == 404 else "INTERNAL_ERROR"
    return error_from_code(code, f"HTTP {status}: {str(body)[:500]}")
