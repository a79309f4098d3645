"""Sessions, preview ports, destroy, the URL and token from the environment, and refused tokens."""

from __future__ import annotations

import urllib.request

import pytest

from conftest import unique_id
from edge_sandbox import InvalidRequestError, RetryPolicy, Sandbox, SandboxAuthError, SandboxConnectionError, SessionNotFoundError


def test_sessions_carry_their_own_state(sandbox: Sandbox) -> None:
    sandbox.files.mkdir("work", recursive=True)
    created = sandbox.sessions.create("build", cwd="work", env={"MODE": "release"})
    assert created.id == "build" and created.cwd.endswith("/work")
    sandbox.exec("export STEP=2", session_id="build")
    assert sandbox.exec('echo "$MODE $STEP"; basename "$PWD"', session_id="build").stdout == "release 2\nwork\n"
    assert sandbox.exec('echo "${STEP:-none}"').stdout == "none\n"
    assert "build" in [s.id for s in sandbox.sessions.list()]
    assert sandbox.sessions.get("build").env["MODE"] == "release"
    sandbox.sessions.delete("build")
    with pytest.raises(SessionNotFoundError):
        sandbox.sessions.get("build")


def test_expose_port_serves_a_server_of_the_sandbox(sandbox: Sandbox) -> None:
    server = sandbox.start_process("python3 -m http.server 8123 --bind 127.0.0.1", process_id="web")
    sandbox.files.write("index.html", "<h1>from the sandbox</h1>")
    sandbox.exec("for i in $(seq 100); do python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", 8123))' 2>/dev/null && break; sleep 0.1; done")
    exposed = sandbox.expose_port(8123)
    assert exposed.port == 8123 and "token=" in exposed.url
    assert [p.port for p in sandbox.list_exposed_ports()] == [8123]
    # The preview URL is served on the service's own port, under a host name of its own.
    request = urllib.request.Request(exposed.url.replace(exposed.url.split("/")[2].split(":")[0], "127.0.0.1", 1))
    request.add_header("host", exposed.url.split("/")[2])
    with urllib.request.urlopen(request, timeout=20) as response:
        assert b"from the sandbox" in response.read()
    sandbox.unexpose_port(8123)
    assert sandbox.list_exposed_ports() == []
    server.kill()


def test_destroy_ends_the_sandboxs_processes(service: dict[str, str]) -> None:
    with Sandbox(unique_id("destroy"), service["url"], service["token"]) as sandbox:
        sandbox.start_process("sleep 60", process_id="doomed")
        sandbox.destroy()
        assert "doomed" not in [p.id for p in sandbox.list_processes()]
        sandbox.destroy()


def test_url_and_token_from_the_environment(service: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EDGE_SANDBOX_URL", service["url"])
    monkeypatch.setenv("EDGE_SANDBOX_TOKEN", service["token"])
    with Sandbox(unique_id("env")) as sandbox:
        assert sandbox.exec("echo from env").stdout == "from env\n"
        sandbox.destroy()
    monkeypatch.delenv("EDGE_SANDBOX_URL")
    with pytest.raises(InvalidRequestError):
        Sandbox("no-url")


def test_a_wrong_token_is_refused(service: dict[str, str]) -> None:
    with Sandbox(unique_id("auth"), service["url"], "not-the-token") as sandbox:
        with pytest.raises(SandboxAuthError) as raised:
            sandbox.exec("true")
    assert (raised.value.code, raised.value.http_status) == ("UNAUTHORIZED", 401)


def test_an_unreachable_service_is_a_connection_error() -> None:
    # Port 9 (discard) on loopback: nothing listens there on a machine running these tests.
    with Sandbox(unique_id("unreachable"), "http://127.0.0.1:9", "token", retry=RetryPolicy(attempts=2, base_delay=0.01)) as sandbox:
        with pytest.raises(SandboxConnectionError) as raised:
            sandbox.exec("true")
        with pytest.raises(SandboxConnectionError):
            sandbox.start_process("true", process_id="named")
    assert (raised.value.code, raised.value.http_status) == ("CONNECTION_FAILED", 502)
