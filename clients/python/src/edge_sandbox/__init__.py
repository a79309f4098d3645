"""edge-sandbox for Python: sandboxes for AI backends and agents, over the service's ``/v1`` HTTP API.

``Sandbox`` (sync) and ``AsyncSandbox`` (asyncio) run commands (buffered, or streamed and resumed to
the byte after a dropped connection), background processes, files, code cells, sessions and preview
ports in one sandbox. Every error is a :class:`SandboxError` carrying the wire ``code``.
"""

from ._streams import RetryPolicy
from .async_sandbox import AsyncProcess, AsyncSandbox
from .errors import (
    ERROR_CODES,
    CodeContextBusyError,
    CodeContextNotFoundError,
    CodeExecutionNotFoundError,
    ContainerUnavailableError,
    ExecutionTimeoutError,
    InvalidRequestError,
    IsolationUnavailableError,
    PathOutsideWorkspaceError,
    ProcessAlreadyExistsError,
    ProcessNotFoundError,
    ProcessNotRunningError,
    SandboxAuthError,
    SandboxConnectionError,
    SandboxError,
    SandboxFileNotFoundError,
    SessionAlreadyExistsError,
    SessionNotFoundError,
    StaleProcessHandleError,
)
from .models import (
    CodeContext,
    ExecEvent,
    ExecResult,
    Execution,
    ExecutionError,
    ExposedPort,
    FileEntry,
    LogEvent,
    Logs,
    ProcessInfo,
    ProcessLogs,
    Result,
    SessionInfo,
)
from .files import AsyncFiles, Files
from .sandbox import Process, Sandbox
from .sessions import AsyncSessions, Sessions

__version__ = "0.1.0"

__all__ = [
    "ERROR_CODES",
    "AsyncFiles",
    "AsyncProcess",
    "AsyncSandbox",
    "AsyncSessions",
    "CodeContext",
    "CodeContextBusyError",
    "CodeContextNotFoundError",
    "CodeExecutionNotFoundError",
    "ContainerUnavailableError",
    "ExecEvent",
    "ExecResult",
    "Execution",
    "ExecutionError",
    "ExecutionTimeoutError",
    "ExposedPort",
    "FileEntry",
    "Files",
    "InvalidRequestError",
    "IsolationUnavailableError",
    "LogEvent",
    "Logs",
    "PathOutsideWorkspaceError",
    "Process",
    "ProcessAlreadyExistsError",
    "ProcessInfo",
    "ProcessLogs",
    "ProcessNotFoundError",
    "ProcessNotRunningError",
    "Result",
    "RetryPolicy",
    "Sandbox",
    "SandboxAuthError",
    "SandboxConnectionError",
    "SandboxError",
    "SandboxFileNotFoundError",
    "SessionAlreadyExistsError",
    "SessionInfo",
    "SessionNotFoundError",
    "Sessions",
    "StaleProcessHandleError",
]
