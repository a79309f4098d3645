"""How a streamed code cell's events add up to its Execution (as ``protocol/code-execution.ts``
builds it on the service's side), calling the caller's callbacks as they come.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .errors import SandboxConnectionError
from .models import Execution, ExecutionError, Result


class ExecutionBuilder:
    """Collects one run's events; :meth:`execution` once ``complete`` came."""

    def __init__(self) -> None:
        self._execution = Execution()
        self._complete = False

    def add(
        self,
        event: dict[str, Any],
        on_stdout: Callable[[str], object] | None = None,
        on_stderr: Callable[[str], object] | None = None,
        on_result: Callable[[Result], object] | None = None,
        on_error: Callable[[ExecutionError], object] | None = None,
    ) -> None:
        kind = event.get("type")
        execution = self._execution
        if kind == "start":
            execution.execution_id = event.get("executionId", "")
            execution.context_id = event.get("contextId", "")
            execution.language = event.get("language", execution.language)
        elif kind == "stdout":
            execution.logs.stdout.append(event["data"])
            if on_stdout:
                on_stdout(event["data"])
        elif kind == "stderr":
            execution.logs.stderr.append(event["data"])
            if on_stderr:
                on_stderr(event["data"])
        elif kind == "result":
            result = Result.from_wire(event["result"])
            execution.results.append(result)
            if on_result:
                on_result(result)
        elif kind == "error":
            error = ExecutionError.from_wire(event["error"])
            execution.error = error
            if on_error:
                on_error(error)
        elif kind == "complete":
            execution.execution_count = event.get("executionCount", 0)
            execution.duration_ms = event.get("duration", 0.0)
            execution.timed_out = bool(event.get("timedOut", False))
            execution.interrupted = bool(event.get("interrupted", False))
            self._complete = True

    @property
    def complete(self) -> bool:
        """Whether the run's ``complete`` event came."""
        return self._complete

    def execution(self) -> Execution:
        if not self._complete:
            raise SandboxConnectionError("The event stream of a run ended before the run completed")
        return self._execution
