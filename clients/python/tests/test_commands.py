"""exec and exec_stream against the real service: results, exit codes, env, cwd, stdin, timeouts."""

from __future__ import annotations

import pytest

from edge_sandbox import ExecEvent, ExecutionTimeoutError, Sandbox, SandboxError


def test_exec_returns_output_and_exit_code(sandbox: Sandbox) -> None:
    result = sandbox.exec("echo out; echo err >&2; exit 3")
    assert (result.stdout, result.stderr, result.exit_code, result.success) == ("out\n", "err\n", 3, False)
    assert sandbox.exec("true").success is True


def test_exec_passes_env_cwd_and_stdin(sandbox: Sandbox) -> None:
    sandbox.files.mkdir("sub", recursive=True)
    result = sandbox.exec('echo "$GREETING"; pwd; cat', env={"GREETING": "żółw ✓"}, cwd="sub", stdin="from stdin")
    greeting, cwd, stdin = result.stdout.split("\n", 2)
    assert greeting == "żółw ✓"
    assert cwd.endswith("/sub")
    assert stdin == "from stdin"


def test_exec_runs_in_the_default_session_so_state_carries(sandbox: Sandbox) -> None:
    sandbox.exec("export CARRIED=yes; cd /tmp")
    assert sandbox.exec('echo "$CARRIED $PWD"').stdout == "yes /tmp\n"


def test_exec_past_its_timeout_raises_with_the_result_so_far(sandbox: Sandbox) -> None:
    with pytest.raises(ExecutionTimeoutError) as raised:
        sandbox.exec("echo started; sleep 30", timeout=0.5)
    error = raised.value
    assert isinstance(error, SandboxError)
    assert error.code == "EXECUTION_TIMEOUT"
    assert error.http_status == 422
    assert error.result is not None and error.result.timed_out
    assert error.exit_code == 124
    assert error.stdout == "started\n"


def test_exec_stream_yields_events_as_they_happen(sandbox: Sandbox) -> None:
    events: list[ExecEvent] = list(sandbox.exec_stream("for i in 1 2 3; do echo tick $i; sleep 0.1; done; echo bad >&2; exit 4"))
    assert events[0].type == "start" and events[0].process_id
    assert events[-1].type == "complete" and events[-1].exit_code == 4
    stdout = "".join(e.data for e in events if e.type == "stdout")
    stderr = "".join(e.data for e in events if e.type == "stderr")
    assert (stdout, stderr) == ("tick 1\ntick 2\ntick 3\n", "bad\n")
    # Output arrives as it is printed, not all at the end.
    assert len([e for e in events if e.type == "stdout"]) >= 2


def test_exec_stream_timeout_raises_after_the_output(sandbox: Sandbox) -> None:
    seen: list[str] = []
    with pytest.raises(ExecutionTimeoutError):
        for event in sandbox.exec_stream("echo before; sleep 30", timeout=0.5):
            seen.append(event.data)
    assert "".join(seen) == "before\n"


def test_exec_stream_by_process_id_can_be_killed_from_outside(sandbox: Sandbox) -> None:
    events = sandbox.exec_stream("echo up; sleep 30", process_id="stream-to-kill")
    assert next(events).type == "start"
    assert next(events).data == "up\n"
    sandbox.get_process("stream-to-kill").kill("SIGKILL")
    rest = list(events)
    assert rest[-1].type == "complete" and rest[-1].exit_code == 137
