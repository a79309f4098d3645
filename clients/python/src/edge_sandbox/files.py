"""The sandbox's files, sync (``Sandbox.files``) and async (``AsyncSandbox.files``): whole files
as text or bytes, listings, and the rest of the file calls.
"""

from __future__ import annotations

from typing import Literal, overload

from . import _api
from ._api import Call
from ._transport import AsyncTransport, SyncTransport
from .models import FileEntry


class Files:
    """The sandbox's files (paths relative to its workspace, or absolute inside the sandbox)."""

    def __init__(self, transport: SyncTransport) -> None:
        self._t = transport

    def write(self, path: str, content: str | bytes, *, mode: int | None = None) -> None:
        """Writes a whole file (text as UTF-8, bytes as they are), making missing parent folders."""
        self._t.json(Call("POST", "/files/write", _api.file_write_body(path, content, mode)))

    @overload
    def read(self, path: str, format: Literal["text"] = "text") -> str: ...
    @overload
    def read(self, path: str, format: Literal["bytes"]) -> bytes: ...
    def read(self, path: str, format: Literal["text", "bytes"] = "text") -> str | bytes:
        """Reads a whole file as text (UTF-8) or bytes. SandboxFileNotFoundError when there is none."""
        encoding = "base64" if format == "bytes" else "utf8"
        return _api.file_content(self._t.json(Call("POST", "/files/read", {"path": path, "encoding": encoding})), format)

    def list(self, path: str | None = None, *, recursive: bool = False, include_hidden: bool = False) -> list[FileEntry]:
        """The entries of a directory (default: the workspace)."""
        body = _api.without_none(path=path, recursive=recursive or None, includeHidden=include_hidden or None)
        return [FileEntry.from_wire(f) for f in self._t.json(Call("POST", "/files/list", body))["files"]]

    def exists(self, path: str) -> bool:
        """Whether anything is at ``path``."""
        return bool(self._t.json(Call("POST", "/files/exists", {"path": path}))["exists"])

    def remove(self, path: str, *, recursive: bool = False) -> None:
        """Deletes a file (a directory with everything in it needs ``recursive``)."""
        self._t.json(Call("POST", "/files/delete", _api.without_none(path=path, recursive=recursive or None)))

    def mkdir(self, path: str, *, recursive: bool = False) -> bool:
        """Makes a directory (``recursive``: its parents too, and an existing one is fine); whether it was made."""
        return bool(self._t.json(Call("POST", "/files/mkdir", _api.without_none(path=path, recursive=recursive or None)))["created"])

    def rename(self, old_path: str, new_path: str, *, overwrite: bool = False) -> None:
        """Renames to exactly ``new_path`` (an existing target is an error unless ``overwrite``)."""
        self._t.json(Call("POST", "/files/rename", _api.without_none(oldPath=old_path, newPath=new_path, overwrite=overwrite or None)))


class AsyncFiles:
    """The sandbox's files, for asyncio (see :class:`Files`)."""

    def __init__(self, transport: AsyncTransport) -> None:
        self._t = transport

    async def write(self, path: str, content: str | bytes, *, mode: int | None = None) -> None:
        """Writes a whole file (text as UTF-8, bytes as they are), making missing parent folders."""
        await self._t.json(Call("POST", "/files/write", _api.file_write_body(path, content, mode)))

    @overload
    async def read(self, path: str, format: Literal["text"] = "text") -> str: ...
    @overload
    async def read(self, path: str, format: Literal["bytes"]) -> bytes: ...
    async def read(self, path: str, format: Literal["text", "bytes"] = "text") -> str | bytes:
        """Reads a whole file as text (UTF-8) or bytes."""
        encoding = "base64" if format == "bytes" else "utf8"
        return _api.file_content(await self._t.json(Call("POST", "/files/read", {"path": path, "encoding": encoding})), format)

    async def list(self, path: str | None = None, *, recursive: bool = False, include_hidden: bool = False) -> list[FileEntry]:
        """The entries of a directory (default: the workspace)."""
        body = _api.without_none(path=path, recursive=recursive or None, includeHidden=include_hidden or None)
        return [FileEntry.from_wire(f) for f in (await self._t.json(Call("POST", "/files/list", body)))["files"]]

    async def exists(self, path: str) -> bool:
        """Whether anything is at ``path``."""
        return bool((await self._t.json(Call("POST", "/files/exists", {"path": path})))["exists"])

    async def remove(self, path: str, *, recursive: bool = False) -> None:
        """Deletes a file (a directory with everything in it needs ``recursive``)."""
        await self._t.json(Call("POST", "/files/delete", _api.without_none(path=path, recursive=recursive or None)))

    async def mkdir(self, path: str, *, recursive: bool = False) -> bool:
        """Makes a directory; whether it was made."""
        return bool((await self._t.json(Call("POST", "/files/mkdir", _api.without_none(path=path, recursive=recursive or None))))["created"])

    async def rename(self, old_path: str, new_path: str, *, overwrite: bool = False) -> None:
        """Renames to exactly ``new_path`` (an existing target is an error unless ``overwrite``)."""
        await self._t.json(Call("POST", "/files/rename", _api.without_none(oldPath=old_path, newPath=new_path, overwrite=overwrite or None)))


__all__ = ["AsyncFiles", "Files"]
