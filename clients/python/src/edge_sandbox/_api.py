"""The requests of each call, the same for the sync and the async client: verb, path under
``/v1/sandboxes/{id}``, JSON body and query, as the service's method bindings declare them
(src/rpc/bindings/ in the repository; test/protocol/python-client-contract.test.ts checks every
request's verb and path against them). Times are seconds here and milliseconds on the wire.
"""

from __future__ import annotations

import base64
import secrets
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import httpx

from ._resume import ResumeCursor
from ._streams import StreamSpec

TERMINAL_STATUSES = ("completed", "failed", "killed", "error")


@dataclass(frozen=True)
class Call:
    """One request: verb, path (under the sandbox), JSON body, query, headers."""

    method: str
    path: str
    body: Any = None
    query: dict[str, Any] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)

    @property
    def names_its_run(self) -> bool:
        """A body naming its run (a process id, an idempotency key): sending it again cannot start a second run."""
        return isinstance(self.body, dict) and (isinstance(self.body.get("processId"), str) or isinstance(self.body.get("idempotencyKey"), str))


def segment(value: str | int) -> str:
    """A path segment, escaped."""
    return quote(str(value), safe="")


def milliseconds(seconds: float | None) -> int | None:
    """A time limit in seconds as the wire's whole milliseconds (at least 1)."""
    return None if seconds is None else max(1, round(seconds * 1000))


def new_command_id() -> str:
    """A command id made up on the caller's side, so a stream that breaks before its start event resumes too."""
    return "proc_" + secrets.token_urlsafe(12)


def command_body(command: str, **options: Any) -> dict[str, Any]:
    """A command's body: the options given, named as on the wire, the rest left out."""
    names = {"session_id": "sessionId", "process_id": "processId", "timeout": "timeout", "env": "env", "cwd": "cwd", "stdin": "stdin", "args": "args"}
    body: dict[str, Any] = {"command": command}
    for name, value in options.items():
        if value is None:
            continue
        body[names[name]] = milliseconds(value) if name == "timeout" else value
    return body


#: How long stopping an abandoned run may take before the caller gets their own error back.
GIVE_UP_TIMEOUT = httpx.Timeout(5.0)


def kill_call(process_id: str) -> Call:
    """Killing a command its caller gave up on (it was named up front, so it can be found)."""
    return Call("DELETE", f"/processes/{segment(process_id)}", query={"signal": "SIGKILL"})


def interrupt_call(execution_id: str) -> Call:
    """Interrupting a cell its caller gave up on (the context keeps its state)."""
    return Call("POST", f"/code/executions/{segment(execution_id)}/interrupt")


def resume_call(path: str, point: dict[str, int], extra: dict[str, Any] | None = None) -> Call:
    """Reopening a stream: after the last event id (Last-Event-ID), from the byte offsets."""
    query = {name: point[name] for name in ("stdoutOffset", "stderrOffset") if name in point}
    query.update(extra or {})
    headers = {"last-event-id": str(point["since"])} if "since" in point else {}
    return Call("GET", path, query=query, headers=headers)


def exec_spec(command: str) -> StreamSpec:
    return StreamSpec(f'exec stream of "{command}"', lambda event: event.get("type") in ("complete", "error"), ResumeCursor())


def log_spec(process_id: str, since: int | None) -> StreamSpec:
    return StreamSpec(
        f'log stream of process "{process_id}"',
        lambda event: event.get("type") == "status" and event.get("status") in TERMINAL_STATUSES,
        ResumeCursor(since=since),
    )


def code_spec() -> StreamSpec:
    return StreamSpec("code run stream", lambda event: event.get("type") == "complete", ResumeCursor())


def run_code_body(code: str, language: str | None, context: Any, timeout: float | None, env: dict[str, str] | None) -> dict[str, Any]:
    # Should the caller vanish before it can say so (a killed process), the service interrupts the
    # cell when the stream's reader goes.
    body: dict[str, Any] = {"code": code, "interruptOnDisconnect": True}
    if context is not None:
        body["contextId"] = context if isinstance(context, str) else context.id
    elif language is not None:
        body["language"] = language
    if timeout is not None:
        body["timeout"] = milliseconds(timeout)
    if env is not None:
        body["env"] = env
    return body


def file_write_body(path: str, content: str | bytes, mode: int | None) -> dict[str, Any]:
    body: dict[str, Any] = {"path": path}
    if isinstance(content, bytes):
        body.update(content=base64.b64encode(content).decode("ascii"), encoding="base64")
    else:
        body["content"] = content
    if mode is not None:
        body["mode"] = mode
    return body


def file_content(answer: dict[str, Any], format: str) -> str | bytes:
    content = answer["content"]
    if format == "bytes":
        return base64.b64decode(content) if answer.get("encoding") == "base64" else content.encode("utf-8")
    return base64.b64decode(content).decode("utf-8", "replace") if answer.get("encoding") == "base64" else content


def without_none(**fields: Any) -> dict[str, Any]:
    return {name: value for name, value in fields.items() if value is not None}
