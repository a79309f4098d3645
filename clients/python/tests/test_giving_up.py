"""A caller who gives up takes their run with them: Ctrl-C (a real SIGINT) in the sync client,
cancellation in the async one. The cell is interrupted (its context keeps its state and is free
again) and the command is killed, rather than either running on to its end."""

from __future__ import annotations

import asyncio
import os
import signal
import threading

import pytest

from edge_sandbox import AsyncSandbox, Sandbox

#: A cell that would hold its context for a long time, and notes in it that it was interrupted.
LONG_CELL = "import time\ntry:\n    time.sleep(40)\nexcept KeyboardInterrupt:\n    given_up = True\n    raise"


def ctrl_c_after(seconds: float) -> threading.Timer:
    """A SIGINT to this process after a while, as a terminal's Ctrl-C sends it."""
    timer = threading.Timer(seconds, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    return timer


def running(sandbox: Sandbox, marker: str) -> bool:
    """Whether a command with this marker in its command line runs in the sandbox (the pattern's
    first letter in brackets, so the pattern does not find the command that looks for it)."""
    return sandbox.exec(f"pgrep -f '[{marker[0]}]{marker[1:]}' >/dev/null && echo yes || echo no").stdout.strip() == "yes"


def test_ctrl_c_interrupts_the_cell_and_frees_its_context(sandbox: Sandbox) -> None:
    context = sandbox.create_code_context()
    timer = ctrl_c_after(1.0)
    try:
        with pytest.raises(KeyboardInterrupt):
            sandbox.run_code(LONG_CELL, context=context)
    finally:
        timer.cancel()
    # Had the cell run on, this would wait for it, then fail on the name it never set.
    assert sandbox.run_code("given_up", context=context).text == "True"


def test_ctrl_c_kills_the_command(sandbox: Sandbox) -> None:
    timer = ctrl_c_after(1.0)
    try:
        with pytest.raises(KeyboardInterrupt):
            sandbox.exec("sleep 41.5")
    finally:
        timer.cancel()
    assert not running(sandbox, "sleep 41.5")


def test_a_cancelled_call_interrupts_the_cell_and_kills_the_command(service: dict[str, str], async_sandbox_id: str) -> None:
    async def main() -> str:
        async with AsyncSandbox(async_sandbox_id, service["url"], service["token"]) as box:
            context = await box.create_code_context()
            with pytest.raises(asyncio.TimeoutError):
                await asyncio.wait_for(box.run_code(LONG_CELL, context=context), 1.0)
            with pytest.raises(asyncio.TimeoutError):
                await asyncio.wait_for(box.exec("sleep 42.5"), 1.0)
            after = await box.exec("pgrep -f '[s]leep 42.5' >/dev/null && echo yes || echo no")
            assert after.stdout.strip() == "no"
            return (await box.run_code("given_up", context=context)).text or ""

    assert asyncio.run(main()) == "True"
