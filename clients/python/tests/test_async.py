"""AsyncSandbox: each call of the sync tests, through asyncio."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import pytest

from edge_sandbox import (
    AsyncSandbox,
    ExecutionTimeoutError,
    ProcessNotFoundError,
    SandboxFileNotFoundError,
    SessionNotFoundError,
)


def run(service: dict[str, str], sandbox_id: str, body: Callable[[AsyncSandbox], Awaitable[None]]) -> None:
    async def main() -> None:
        async with AsyncSandbox(sandbox_id, service["url"], service["token"]) as sandbox:
            await body(sandbox)

    asyncio.run(main())


def test_exec_and_its_timeout(service: dict[str, str], async_sandbox_id: str) -> None:
    async def body(sandbox: AsyncSandbox) -> None:
        result = await sandbox.exec('echo "$A"; exit 5', env={"A": "async"})
        assert (result.stdout, result.exit_code, result.success) == ("async\n", 5, False)
        with pytest.raises(ExecutionTimeoutError) as raised:
            await sandbox.exec("echo partial; sleep 30", timeout=0.5)
        assert raised.value.stdout == "partial\n" and raised.value.exit_code == 124

    run(service, async_sandbox_id, body)


def test_exec_stream(service: dict[str, str], async_sandbox_id: str) -> None:
    async def body(sandbox: AsyncSandbox) -> None:
        events = [event async for event in sandbox.exec_stream("for i in 1 2; do echo $i; sleep 0.1; done; echo e >&2")]
        assert events[0].type == "start" and events[-1].type == "complete" and events[-1].exit_code == 0
        assert "".join(e.data for e in events if e.type == "stdout") == "1\n2\n"
        assert "".join(e.data for e in events if e.type == "stderr") == "e\n"

    run(service, async_sandbox_id, body)


def test_several_commands_at_once(service: dict[str, str], async_sandbox_id: str) -> None:
    async def body(sandbox: AsyncSandbox) -> None:
        results = await asyncio.gather(*(sandbox.exec(f"sleep 0.3; echo {i}") for i in range(5)))
        assert [r.stdout for r in results] == [f"{i}\n" for i in range(5)]

    run(service, async_sandbox_id, body)


def test_processes(service: dict[str, str], async_sandbox_id: str) -> None:
    async def body(sandbox: AsyncSandbox) -> None:
        process = await sandbox.start_process("echo a; sleep 0.2; echo b", process_id="async-proc")
        events = [event async for event in process.stream_logs()]
        assert "".join(e.data for e in events if e.type == "stdout") == "a\nb\n"
        final = await process.wait(timeout=20)
        assert (final.status, final.exit_code) == ("completed", 0)
        assert (await process.logs()).stdout == "a\nb\n"
        assert "async-proc" in [p.id for p in await sandbox.list_processes()]
        slow = await sandbox.start_process("sleep 30")
        with pytest.raises(ExecutionTimeoutError):
            await slow.wait(timeout=0.5)
        await slow.kill("SIGKILL")
        assert (await slow.wait(timeout=20)).status == "killed"
        with pytest.raises(ProcessNotFoundError):
            await sandbox.get_process("nope")

    run(service, async_sandbox_id, body)


def test_files(service: dict[str, str], async_sandbox_id: str) -> None:
    async def body(sandbox: AsyncSandbox) -> None:
        await sandbox.files.write("d/f.txt", "text ✓")
        await sandbox.files.write("d/b.bin", bytes(range(256)))
        assert await sandbox.files.read("d/f.txt") == "text ✓"
        assert await sandbox.files.read("d/b.bin", format="bytes") == bytes(range(256))
        assert sorted(e.name for e in await sandbox.files.list("d")) == ["b.bin", "f.txt"]
        assert await sandbox.files.mkdir("d/e") is True
        await sandbox.files.rename("d/f.txt", "d/g.txt")
        assert not await sandbox.files.exists("d/f.txt") and await sandbox.files.exists("d/g.txt")
        await sandbox.files.remove("d", recursive=True)
        with pytest.raises(SandboxFileNotFoundError):
            await sandbox.files.read("d/g.txt")

    run(service, async_sandbox_id, body)


def test_run_code_with_callbacks_and_contexts(service: dict[str, str], async_sandbox_id: str) -> None:
    async def body(sandbox: AsyncSandbox) -> None:
        out: list[str] = []
        execution = await sandbox.run_code("print('hi')\n21 * 2", on_stdout=out.append)
        assert out == ["hi\n"] and execution.text == "42"
        context = await sandbox.create_code_context()
        await sandbox.run_code("y = 'kept'", context=context)
        assert (await sandbox.run_code("y", context=context)).text == "'kept'"
        assert context.id in [c.id for c in await sandbox.list_code_contexts()]
        await sandbox.delete_code_context(context)

    run(service, async_sandbox_id, body)


def test_sessions_ports_and_destroy(service: dict[str, str], async_sandbox_id: str) -> None:
    async def body(sandbox: AsyncSandbox) -> None:
        await sandbox.sessions.create("s", env={"K": "v"})
        assert (await sandbox.exec('echo "$K"', session_id="s")).stdout == "v\n"
        assert "s" in [s.id for s in await sandbox.sessions.list()]
        await sandbox.sessions.delete("s")
        with pytest.raises(SessionNotFoundError):
            await sandbox.sessions.get("s")
        exposed = await sandbox.expose_port(8124)
        assert exposed.port == 8124 and exposed.url.startswith("http")
        await sandbox.unexpose_port(8124)
        await sandbox.start_process("sleep 60", process_id="doomed")
        await sandbox.destroy()
        assert "doomed" not in [p.id for p in await sandbox.list_processes()]

    run(service, async_sandbox_id, body)
