"""Background processes: start, wait, kill, logs, stream_logs, list."""

from __future__ import annotations

import pytest

from edge_sandbox import ExecutionTimeoutError, ProcessAlreadyExistsError, ProcessNotFoundError, Sandbox


def test_start_process_wait_and_logs(sandbox: Sandbox) -> None:
    process = sandbox.start_process("echo one; sleep 0.3; echo two >&2; exit 2", process_id="waited")
    assert process.id == "waited" and process.pid
    final = process.wait(timeout=20)
    assert (final.status, final.exit_code) == ("failed", 2)
    logs = process.logs()
    assert (logs.stdout, logs.stderr) == ("one\n", "two\n")


def test_wait_past_its_timeout_raises_and_the_process_runs_on(sandbox: Sandbox) -> None:
    process = sandbox.start_process("sleep 30", process_id="slow")
    with pytest.raises(ExecutionTimeoutError):
        process.wait(timeout=0.5)
    assert process.refresh().status == "running"
    process.kill()
    assert process.wait(timeout=20).status == "killed"


def test_kill_with_a_signal(sandbox: Sandbox) -> None:
    process = sandbox.start_process("trap 'echo got INT; exit 9' INT; echo ready; while :; do sleep 0.05; done", process_id="trapper")
    for event in process.stream_logs():
        if event.data == "ready\n":
            break
    process.kill("SIGINT")
    final = process.wait(timeout=20)
    assert final.exit_code == 9
    assert process.logs().stdout == "ready\ngot INT\n"


def test_stream_logs_follows_output_up_to_the_final_status(sandbox: Sandbox) -> None:
    process = sandbox.start_process("for i in 1 2 3; do echo line $i; sleep 0.1; done")
    events = list(process.stream_logs())
    assert "".join(e.data for e in events if e.type == "stdout") == "line 1\nline 2\nline 3\n"
    assert events[-1].type == "status" and events[-1].status == "completed" and events[-1].exit_code == 0


def test_list_processes_and_ids_in_use(sandbox: Sandbox) -> None:
    sandbox.start_process("sleep 30", process_id="listed")
    assert "listed" in [p.id for p in sandbox.list_processes()]
    with pytest.raises(ProcessAlreadyExistsError) as raised:
        sandbox.start_process("sleep 1", process_id="listed")
    assert raised.value.code == "PROCESS_EXISTS"
    sandbox.get_process("listed").kill("SIGKILL")


def test_an_unknown_process_is_process_not_found(sandbox: Sandbox) -> None:
    with pytest.raises(ProcessNotFoundError) as raised:
        sandbox.get_process("never-started")
    assert (raised.value.code, raised.value.http_status) == ("PROCESS_NOT_FOUND", 404)


def test_stdin_of_a_background_process(sandbox: Sandbox) -> None:
    process = sandbox.start_process("read line; echo got $line", process_id="reader")
    process.send_stdin("hello\n")
    process.wait(timeout=20)
    assert process.logs().stdout == "got hello\n"
