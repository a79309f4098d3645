"""files: write, read (text and bytes), list, exists, remove, mkdir, rename, and their errors."""

from __future__ import annotations

import pytest

from edge_sandbox import Sandbox, SandboxError, SandboxFileNotFoundError

ALL_BYTES = bytes(range(256))


def test_write_and_read_text_and_bytes(sandbox: Sandbox) -> None:
    sandbox.files.write("notes/hello.txt", "héllo ✓\n")
    assert sandbox.files.read("notes/hello.txt") == "héllo ✓\n"
    assert sandbox.files.read("notes/hello.txt", format="bytes") == "héllo ✓\n".encode()
    sandbox.files.write("blob.bin", ALL_BYTES)
    assert sandbox.files.read("blob.bin", format="bytes") == ALL_BYTES
    # What the API wrote, a command reads.
    assert sandbox.exec("cat notes/hello.txt").stdout == "héllo ✓\n"


def test_list_exists_mkdir_rename_remove(sandbox: Sandbox) -> None:
    assert sandbox.files.mkdir("tree/a/b", recursive=True) is True
    sandbox.files.write("tree/one.txt", "1")
    entries = {entry.name: entry for entry in sandbox.files.list("tree")}
    assert set(entries) == {"a", "one.txt"}
    assert entries["a"].is_dir and entries["one.txt"].size == 1
    assert sandbox.files.exists("tree/one.txt")
    sandbox.files.rename("tree/one.txt", "tree/two.txt")
    assert not sandbox.files.exists("tree/one.txt") and sandbox.files.read("tree/two.txt") == "1"
    with pytest.raises(SandboxError) as raised:
        sandbox.files.remove("tree")
    assert raised.value.code == "IS_A_DIRECTORY"
    sandbox.files.remove("tree", recursive=True)
    assert not sandbox.files.exists("tree")


def test_missing_files_and_directories_read_as_files(sandbox: Sandbox) -> None:
    with pytest.raises(SandboxFileNotFoundError) as raised:
        sandbox.files.read("no/such/file")
    assert (raised.value.code, raised.value.http_status) == ("FILE_NOT_FOUND", 404)
    sandbox.files.mkdir("a-dir", recursive=True)
    with pytest.raises(SandboxError) as raised_dir:
        sandbox.files.read("a-dir")
    assert raised_dir.value.code == "IS_A_DIRECTORY"
