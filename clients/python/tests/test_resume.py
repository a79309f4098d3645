"""Streams through a proxy that cuts their connections at random bytes (in the middle of an event,
of a character, of an escape): every stream goes on where it broke off, with no byte lost or repeated.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Iterator

import pytest

from conftest import unique_id
from edge_sandbox import AsyncSandbox, RetryPolicy, Sandbox

# Lines of multi-byte characters, escapes (tab, quote, backslash) and stderr between them, slowly
# enough that the output comes as many events.
LINES = 400
COMMAND = (
    f"for i in $(seq {LINES}); do "
    "printf 'line %04d żółw ✓ 🐢 tab\\t quote\" back\\\\ %s\\n' \"$i\" \"$(printf x%.0s $(seq $((i % 40))))\"; "
    "[ $((i % 50)) -eq 0 ] && echo \"err $i\" >&2; "
    "[ $((i % 20)) -eq 0 ] && sleep 0.02; "
    "done; exit 0"
)
# Quick reconnects: the proxy cuts every stream many times.
RETRY = RetryPolicy(attempts=8, base_delay=0.01, max_delay=0.2)


def expected() -> tuple[str, str]:
    out = "".join(f'line {i:04d} żółw ✓ 🐢 tab\t quote" back\\ {"x" * max(1, i % 40)}\n' for i in range(1, LINES + 1))
    err = "".join(f"err {i}\n" for i in range(50, LINES + 1, 50))
    return out, err


@pytest.fixture(scope="module")
def through_proxy(cut_url: str, service: dict[str, str]) -> Iterator[Sandbox]:
    with Sandbox(unique_id("resume"), cut_url, service["token"], retry=RETRY) as sandbox:
        yield sandbox
        sandbox.destroy()


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def test_exec_stream_survives_cuts_to_the_byte(through_proxy: Sandbox) -> None:
    events = list(through_proxy.exec_stream(COMMAND))
    out = "".join(e.data for e in events if e.type == "stdout")
    err = "".join(e.data for e in events if e.type == "stderr")
    assert (digest(out), digest(err)) == tuple(digest(part) for part in expected())
    assert events[-1].type == "complete" and events[-1].exit_code == 0
    # Cut events came in parts: the proxy did cut, and the parts joined.
    seqs = [e.seq for e in events if e.type == "stdout"]
    assert len(seqs) > len(set(seqs)), "no event was cut: the proxy did not break the stream"
    offsets = [(e.offset, len(e.data.encode())) for e in events if e.type == "stdout"]
    assert all(offset == before + size for (before, size), (offset, _) in zip(offsets, offsets[1:]))


def test_async_exec_stream_survives_cuts_to_the_byte(through_proxy: Sandbox, cut_url: str, service: dict[str, str]) -> None:
    async def main() -> tuple[str, str]:
        async with AsyncSandbox(through_proxy.id, cut_url, service["token"], retry=RETRY) as sandbox:
            events = [event async for event in sandbox.exec_stream(COMMAND)]
            assert events[-1].type == "complete"
            return "".join(e.data for e in events if e.type == "stdout"), "".join(e.data for e in events if e.type == "stderr")

    assert tuple(map(digest, asyncio.run(main()))) == tuple(map(digest, expected()))


def test_process_log_stream_survives_cuts(through_proxy: Sandbox) -> None:
    process = through_proxy.start_process(COMMAND)
    events = list(process.stream_logs())
    assert digest("".join(e.data for e in events if e.type == "stdout")) == digest(expected()[0])
    assert events[-1].status == "completed"
    assert process.wait(timeout=30).exit_code == 0


def test_run_code_stream_survives_cuts(through_proxy: Sandbox) -> None:
    chunks: list[str] = []
    code = "for i in range(2000):\n    print(f'cell {i:05d} żółw 🐢', flush=(i % 100 == 0))\n'done'"
    execution = through_proxy.run_code(code, on_stdout=chunks.append)
    assert "".join(chunks) == "".join(f"cell {i:05d} żółw 🐢\n" for i in range(2000))
    assert execution.text == "'done'"


def test_async_process_log_stream_survives_cuts(through_proxy: Sandbox, cut_url: str, service: dict[str, str]) -> None:
    async def main() -> str:
        async with AsyncSandbox(through_proxy.id, cut_url, service["token"], retry=RETRY) as sandbox:
            process = await sandbox.start_process(COMMAND)
            return "".join([event.data async for event in process.stream_logs() if event.type == "stdout"])

    assert digest(asyncio.run(main())) == digest(expected()[0])


def test_a_lost_answer_of_a_named_run_is_sent_again_and_runs_once(losing_url: str, service: dict[str, str]) -> None:
    sandbox_id = unique_id("lost")
    with Sandbox(sandbox_id, losing_url, service["token"], retry=RETRY) as through, Sandbox(sandbox_id, service["url"], service["token"]) as direct:
        process = through.start_process("echo run >> runs.txt; sleep 30", process_id="named-once")
        assert process.id == "named-once"
        assert [p.id for p in direct.list_processes() if p.id == "named-once"] == ["named-once"]
        assert direct.exec("wc -l < runs.txt").stdout == "1\n"
        direct.destroy()
