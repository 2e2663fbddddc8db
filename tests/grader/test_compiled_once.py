"""A submission is compiled once per sandbox, not once per server (grader/hosts/zygote.py:
`send_compiled` in an unprivileged child, `parse_compiled` and `read_capped` in the zygote,
which keeps the bytecode without unmarshalling it). Whatever the child sends is the
submission's: malformed frames, names outside its folder or too much data leave the servers
compiling for themselves."""

import hashlib
import marshal
import os
import struct
import threading

import pytest

from grader.hosts import zygote


def frames(folder):
    read_end, write_end = os.pipe()
    assert zygote.send_compiled(folder, write_end) == 0  # it closes write_end
    with os.fdopen(read_end, "rb") as pipe:
        return pipe.read()


def frame(name, data, digest=b"\0" * 32):
    encoded = name.encode()
    return (struct.pack("<I", len(encoded)) + encoded + digest +
            struct.pack("<I", len(data)) + data)


def test_every_py_file_that_compiles_is_sent_with_its_sources_digest(tmp_path):
    (tmp_path / "ejercicio2.py").write_text("X = 2\n")
    (tmp_path / "roto.py").write_text("def f(:\n")
    (tmp_path / "notas.txt").write_text("X = 3\n")
    found = zygote.parse_compiled(frames(str(tmp_path)), str(tmp_path))
    path = str(tmp_path / "ejercicio2.py")
    assert list(found) == [path]
    digest, data = found[path]
    assert digest == hashlib.sha256(b"X = 2\n").digest()
    namespace = {}
    exec(marshal.loads(data), namespace)
    assert namespace["X"] == 2


@pytest.mark.parametrize("data", [
    frame("../fuera.py", b"x"),
    frame("sub/dentro.py", b"x"),
    frame("nul\0.py", b"x"),
    frame("notas.txt", b"x"),
    frame("a.py", b"x") + frame("a.py", b"y"),
    frame("a.py", b"xyz")[:-1],                       # cut short
    frame("a.py", b"x")[:10],
    b"\xff\xff\xff\xff",
    struct.pack("<I", 2) + b"\xff\xfe" + b"\0" * 32 + struct.pack("<I", 0),  # not UTF-8
], ids=["parent", "subfolder", "nul", "not_py", "twice", "short_data", "short_frame",
        "huge_length", "not_utf8"])
def test_frames_that_name_anything_else_or_are_malformed_give_nothing(tmp_path, data):
    assert zygote.parse_compiled(frame("bien.py", b"x") + data, str(tmp_path)) == {}


def test_well_formed_frames_are_kept_as_sent_without_being_read(tmp_path):
    data = b"not marshal data at all"  # the zygote never unmarshals: the servers do
    found = zygote.parse_compiled(frame("a.py", data, b"d" * 32), str(tmp_path))
    assert found == {str(tmp_path / "a.py"): (b"d" * 32, data)}


def test_too_much_data_or_a_child_that_never_ends_gives_nothing():
    read_end, write_end = os.pipe()
    with os.fdopen(read_end, "rb") as pipe:
        writer = threading.Thread(target=lambda: (os.write(write_end, b"x" * 5000),
                                                  os.close(write_end)))
        writer.start()
        assert zygote.read_capped(pipe, 4096, 5) is None
        writer.join()
    read_end, write_end = os.pipe()
    with os.fdopen(read_end, "rb") as pipe:
        os.write(write_end, b"x" * 100)
        assert zygote.read_capped(pipe, 4096, 0.2) is None  # still open: not the end
        os.close(write_end)
    read_end, write_end = os.pipe()
    with os.fdopen(read_end, "rb") as pipe:
        os.write(write_end, b"x" * 100)
        os.close(write_end)
        assert zygote.read_capped(pipe, 4096, 5) == b"x" * 100
