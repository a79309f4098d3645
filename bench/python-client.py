"""The Python client's figures, driven by bench/python-client.ts against a running stack.

Beside raw httpx in the same run, interleaved (in turns that alternate which goes first) so drift
in machine load hits both alike:
- an exec round trip (``Sandbox.exec``) against a bare ``httpx.Client.post`` of the same body;
- streamed output (``Sandbox.exec_stream``, every event parsed) against httpx reading the same
  stream's bytes and nothing more.
Each also in this process's CPU time, which the service's own speed (and the load of a shared
machine) does not move: what the client itself costs.

Usage: python3 bench/python-client.py URL TOKEN SANDBOX_ID; prints one JSON object.
"""

from __future__ import annotations

import json
import statistics
import sys
import time

import httpx

from edge_sandbox import Sandbox

EXEC_ROUNDS = 200
STREAM_ROUNDS = 8
STREAM_BYTES = 32 * 1024 * 1024
LINE = ("0123456789abcdef" * 64)[:1023]
WRITER = f"yes {LINE} | head -c {STREAM_BYTES}"


def main(url: str, token: str, sandbox_id: str) -> None:
    base = f"{url}/v1/sandboxes/{sandbox_id}"
    headers = {"authorization": f"Bearer {token}"}
    with Sandbox(sandbox_id, url, token) as sandbox, httpx.Client(timeout=httpx.Timeout(None, connect=10.0), headers=headers) as raw:

        def ours_exec() -> None:
            assert sandbox.exec("true").exit_code == 0

        def raw_exec() -> None:
            response = raw.post(f"{base}/exec", json={"command": "true"})
            assert response.json()["exitCode"] == 0

        def ours_stream() -> int:
            received = 0
            for event in sandbox.exec_stream(WRITER):
                if event.type == "stdout":
                    received += len(event.data)
                elif event.type == "complete":
                    assert event.exit_code == 0
            return received

        def raw_stream() -> int:
            received = 0
            # The same request as the client's: a command named by a fresh id.
            body = {"command": WRITER, "processId": f"proc_raw{time.time_ns()}"}
            with raw.stream("POST", f"{base}/exec/stream", json=body, headers={"accept": "text/event-stream"}) as response:
                for chunk in response.iter_bytes():
                    received += len(chunk)
            return received

        def timed(work):  # type: ignore[no-untyped-def]
            """Wall and CPU milliseconds of one call, and what it returned."""
            start, cpu = time.perf_counter(), time.process_time()
            value = work()
            return (time.perf_counter() - start) * 1000, (time.process_time() - cpu) * 1000, value

        def rounds(count, ours, raw):  # type: ignore[no-untyped-def]
            """Each side ``count`` times, in turns whose first side alternates."""
            samples = {"ours": [], "raw": []}
            for i in range(count):
                pair = [("ours", ours), ("raw", raw)]
                for name, work in pair if i % 2 == 0 else pair[::-1]:
                    samples[name].append(timed(work))
            return samples["ours"], samples["raw"]

        # One unmeasured round of each first.
        ours_exec(), raw_exec(), ours_stream(), raw_stream()
        exec_ours, exec_raw = rounds(EXEC_ROUNDS, ours_exec, raw_exec)
        stream_ours, stream_raw = rounds(STREAM_ROUNDS, ours_stream, raw_stream)
        assert all(received == STREAM_BYTES for _, _, received in stream_ours)
        sandbox.destroy()

    mbps = lambda samples: statistics.median(STREAM_BYTES / 1e6 / (wall / 1000) for wall, _, _ in samples)  # noqa: E731
    cpu_per_mb = lambda samples: statistics.median(cpu / (STREAM_BYTES / 1e6) for _, cpu, _ in samples)  # noqa: E731

    print(
        json.dumps(
            {
                "execRounds": EXEC_ROUNDS,
                "execOursMs": statistics.median(wall for wall, _, _ in exec_ours),
                "execRawMs": statistics.median(wall for wall, _, _ in exec_raw),
                "execOursCpuMs": statistics.median(cpu for _, cpu, _ in exec_ours),
                "execRawCpuMs": statistics.median(cpu for _, cpu, _ in exec_raw),
                "streamRounds": STREAM_ROUNDS,
                "streamBytes": STREAM_BYTES,
                "streamOursMBps": mbps(stream_ours),
                "streamRawMBps": mbps(stream_raw),
                "streamOursCpuMsPerMB": cpu_per_mb(stream_ours),
                "streamRawCpuMsPerMB": cpu_per_mb(stream_raw),
            }
        )
    )


if __name__ == "__main__":
    main(*sys.argv[1:4])
