"""Sessions, sync (``Sandbox.sessions``) and async (``AsyncSandbox.sessions``): named shell state
that commands run in and carry on.
"""

from __future__ import annotations

from . import _api
from ._api import Call, segment
from ._transport import AsyncTransport, SyncTransport
from .models import SessionInfo


class Sessions:
    """Sessions: named shell state (cwd, env, functions, aliases, options) that commands run in
    (``exec(..., session_id=...)``) and carry on."""

    def __init__(self, transport: SyncTransport) -> None:
        self._t = transport

    def create(self, id: str | None = None, *, cwd: str | None = None, env: dict[str, str] | None = None) -> SessionInfo:
        """Makes a session (SessionAlreadyExistsError for an id in use)."""
        return SessionInfo.from_wire(self._t.json(Call("POST", "/sessions", _api.without_none(id=id, cwd=cwd, env=env)))["session"])

    def get(self, id: str) -> SessionInfo:
        """A session by id (SessionNotFoundError when there is none)."""
        return SessionInfo.from_wire(self._t.json(Call("GET", f"/sessions/{segment(id)}"))["session"])

    def list(self) -> list[SessionInfo]:
        """The sandbox's sessions."""
        return [SessionInfo.from_wire(s) for s in self._t.json(Call("GET", "/sessions"))["sessions"]]

    def delete(self, id: str) -> None:
        """Deletes a session, killing its processes."""
        self._t.json(Call("DELETE", f"/sessions/{segment(id)}"))


class AsyncSessions:
    """Sessions, for asyncio (see :class:`Sessions`)."""

    def __init__(self, transport: AsyncTransport) -> None:
        self._t = transport

    async def create(self, id: str | None = None, *, cwd: str | None = None, env: dict[str, str] | None = None) -> SessionInfo:
        """Makes a session (SessionAlreadyExistsError for an id in use)."""
        return SessionInfo.from_wire((await self._t.json(Call("POST", "/sessions", _api.without_none(id=id, cwd=cwd, env=env))))["session"])

    async def get(self, id: str) -> SessionInfo:
        """A session by id (SessionNotFoundError when there is none)."""
        return SessionInfo.from_wire((await self._t.json(Call("GET", f"/sessions/{segment(id)}")))["session"])

    async def list(self) -> list[SessionInfo]:
        """The sandbox's sessions."""
        return [SessionInfo.from_wire(s) for s in (await self._t.json(Call("GET", "/sessions")))["sessions"]]

    async def delete(self, id: str) -> None:
        """Deletes a session, killing its processes."""
        await self._t.json(Call("DELETE", f"/sessions/{segment(id)}"))


__all__ = ["AsyncSessions", "Sessions"]
