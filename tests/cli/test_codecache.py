"""The generated-code cache (hostc/cli/codecache.py): what attrs and cattrs compile is
kept between runs, and that must never change what `compile` returns, what a command
prints or writes, or where a file may be written."""

from __future__ import annotations

import _sre
import ast
import builtins
import functools
import importlib.util
import marshal
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from hostc.cli import codecache
from hostc.cli.codecache import GeneratedCode
from hostc.knowledge.charsets import CONTROL

from conftest import EXAMPLES, PLAIN, ROOT

DGX = EXAMPLES / "dgx-h100-inference" / "node.toml"
BIN = Path(sys.executable).parent / "hostc"
SOURCE = "def f(x: NotDefinedAnywhere) -> int:\n    return 1\n"


def hostc(args: list[str], prefix: Path, **env: str) -> subprocess.CompletedProcess[bytes]:
    """The console script, keeping bytecode (and the cache) under `prefix`."""
    if not BIN.exists():
        pytest.skip(f"no hostc console script beside {sys.executable} (pip install -e .)")
    base = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    if not prefix.exists():  # every module's bytecode, without the cache: no test pays it
        shutil.copytree(modules_bytecode(), prefix)
    return subprocess.run(
        [str(BIN), *args],
        capture_output=True,
        cwd=ROOT,
        timeout=120,
        env={**base, "PYTHONPYCACHEPREFIX": str(prefix), **env},
    )


@functools.cache
def modules_bytecode() -> Path:
    """A bytecode tree of every module a build and a plan load (the cache file removed)."""
    prefix = Path(tempfile.mkdtemp(prefix="hostc-pyc-"))
    base = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    for args in (["build", str(DGX), "-t", "all", "-o", str(prefix / "out")], ["plan", str(DGX)]):
        subprocess.run(
            [sys.executable, "-m", "hostc", *args],
            capture_output=True,
            cwd=ROOT,
            timeout=120,
            env={**base, "PYTHONPYCACHEPREFIX": str(prefix / "pyc")},
            check=True,
        )
    for path in (prefix / "pyc").rglob("generated.*"):
        path.unlink()
    return prefix / "pyc"


def cache_file(prefix: Path) -> Path:
    found = list(prefix.rglob("generated.*.marshal"))
    assert len(found) <= 1, found
    return found[0] if found else prefix / "none"


def kept_file(path: Path) -> dict[str, object]:
    data = path.read_bytes()
    assert data.startswith(importlib.util.MAGIC_NUMBER)
    doc = marshal.loads(data[len(importlib.util.MAGIC_NUMBER) :])
    assert isinstance(doc, dict) and doc["sre"] == _sre.MAGIC
    return doc


def kept(path: Path) -> dict[tuple[str, str, str, int], object]:
    codes = kept_file(path)["compile"]
    assert isinstance(codes, dict)
    return codes


def kept_patterns(path: Path) -> dict[tuple[str | bytes, int], object]:
    patterns = kept_file(path)["re"]
    assert isinstance(patterns, dict)
    return patterns


def tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_a_build_from_the_cache_is_the_plain_interpreters(tmp_path: Path) -> None:
    """The first run keeps attrs' and cattrs' code; the second reads it, compiles nothing
    new (the file is not rewritten) and writes and prints what the plain run does."""
    prefix = tmp_path / "pycache"

    def args(out: str) -> list[str]:
        return ["build", str(DGX), "--target", "all", "--out", str(tmp_path / out)]

    first = hostc(args("first"), prefix)
    assert first.returncode == 0, first.stderr.decode()
    path = cache_file(prefix)
    codes = kept(path)
    names = {filename.split(" ")[0] for _, filename, _, _ in codes}
    assert {"<attrs", "<cattrs"} <= names, names
    assert not any(Path(filename).is_file() for _, filename, _, _ in codes)  # no file's code
    patterns = kept_patterns(path)
    assert (CONTROL.pattern, CONTROL.flags & ~re.UNICODE) in patterns  # hostc's own
    assert len(patterns) > 50, len(patterns)  # and the libraries'
    before = path.stat().st_mtime_ns
    second = hostc(args("out"), prefix)
    (tmp_path / "out").rename(tmp_path / "second")
    plain = subprocess.run(
        [sys.executable, "-c", PLAIN, *args("out")], capture_output=True, cwd=ROOT, timeout=120
    )
    assert (second.returncode, second.stdout, second.stderr) == (
        plain.returncode,
        plain.stdout,
        plain.stderr,
    )
    assert tree(tmp_path / "second") == tree(tmp_path / "out") == tree(tmp_path / "first")
    assert path.stat().st_mtime_ns == before


def test_nothing_is_written_where_python_writes_no_bytecode(tmp_path: Path) -> None:
    r = hostc(["plan", str(DGX)], tmp_path, PYTHONDONTWRITEBYTECODE="1")
    assert r.returncode == 0, r.stderr.decode()
    assert not list(tmp_path.rglob("generated.*"))


@pytest.mark.parametrize(
    "content",
    [b"", b"garbage", importlib.util.MAGIC_NUMBER + b"\xff\x00garbage", b"\x00\x00\r\n" + b"x"],
    ids=["empty", "foreign", "corrupt", "other-python"],
)
def test_a_corrupt_or_foreign_file_is_ignored_and_replaced(tmp_path: Path, content: bytes) -> None:
    args = ["plan", str(DGX)]
    first = hostc(args, tmp_path)
    path = cache_file(tmp_path)
    path.write_bytes(content)
    again = hostc(args, tmp_path)
    assert (again.returncode, again.stdout, again.stderr) == (0, first.stdout, first.stderr)
    assert kept(path)


def test_compile_returns_what_the_builtin_returns() -> None:
    """Inherited `from __future__` flags (this module has annotations), a miss and a hit
    give the builtin's code; an AST request, bytes and a file's source pass through."""
    cache = GeneratedCode(None)
    real = cache.real
    want = real(SOURCE, "<test>", "exec")
    assert want.co_flags & codecache.FUTURE_FLAGS  # the future import was inherited
    for _ in range(2):  # a miss, then a hit
        assert cache.compile(SOURCE, "<test>", "exec") == want
    assert cache.compile(SOURCE, "<test>", "exec", dont_inherit=True) == real(
        SOURCE, "<test>", "exec", dont_inherit=True
    )
    assert len(cache.codes) == 2
    tree = cache.compile(SOURCE, "<test>", "exec", ast.PyCF_ONLY_AST)
    assert isinstance(tree, ast.Module)
    assert cache.compile(SOURCE.encode(), "<test>", "exec") == want
    assert cache.compile(SOURCE, str(ROOT / "x.py"), "exec").co_filename == str(ROOT / "x.py")
    assert len(cache.codes) == 2


def test_an_entry_is_found_by_its_whole_source_and_name() -> None:
    """A kept code is never served for another source or another file name."""
    cache = GeneratedCode(None)
    one = cache.compile("x = 1\n", "<a>", "exec")
    assert cache.compile("x = 2\n", "<a>", "exec").co_consts != one.co_consts
    assert cache.compile("x = 1\n", "<b>", "exec").co_filename == "<b>"
    assert cache.compile("x = 1\n", "<a>", "exec") is one


def test_a_save_past_the_limit_keeps_only_this_runs_codes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "pycache" / "generated.test.marshal"
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    old = GeneratedCode(str(path))
    for i in range(5):
        old.compile(f"x = {i}\n", "<old>", "exec")
    old.save()
    assert len(kept(path)) == 5
    monkeypatch.setattr(codecache, "LIMIT", 5)
    new = GeneratedCode(str(path))
    assert len(new.codes) == 5
    new.compile("x = 0\n", "<old>", "exec")  # a hit: nothing to write
    new.save()
    assert len(kept(path)) == 5
    new.compile("y = 1\n", "<new>", "exec")
    new.save()
    assert sorted(key[:2] for key in kept(path)) == [("x = 0\n", "<old>"), ("y = 1\n", "<new>")]
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # nothing staged is left


def test_a_planted_link_at_the_staging_name_is_not_followed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The staging file is created exclusively: a link an attacker put at its name in a
    shared cache folder is neither written through nor removed, and the run stays
    uncached."""
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    path = tmp_path / "generated.test.marshal"
    victim = tmp_path / "victim"
    victim.write_bytes(b"root's file")
    link = tmp_path / f"{path.name}.{os.getpid()}.tmp"
    link.symlink_to(victim)
    cache = GeneratedCode(str(path))
    cache.compile("x = 1\n", "<planted>", "exec")
    cache.save()
    assert victim.read_bytes() == b"root's file"
    assert link.is_symlink() and not path.exists()


#: patterns of every kind the cache keeps: str and bytes, flags, named groups, a look-
#: behind, a possessive repeat, an atomic group, a Unicode class
PATTERNS: list[tuple[str | bytes, int]] = [
    (r"(?P<key>[a-z_.]+)\s*=\s*(?P<value>.*)$", re.MULTILINE.value),
    (rb"^[\x00-\x1f]+(?<=\n)x*+", 0),
    (r"(?>ab|a)c[\u2028\u2029\x85]", re.IGNORECASE.value),
    (rb"caf\xe9", (re.IGNORECASE | re.LOCALE).value),
]  # flags as re hands them to its compiler: plain ints
SUBJECTS = ["vm.swappiness = 10\nkernel.x=1", "AC\u2028", "abc\x85", "x"]


@pytest.fixture
def cache(monkeypatch: pytest.MonkeyPatch) -> GeneratedCode:
    """A cache with no file, re's compiler handing its code through it (as `install`)."""
    made = GeneratedCode(None)
    monkeypatch.setattr(codecache._RE_COMPILER, "_sre", made.sre)
    return made


def same(a: re.Pattern[str] | re.Pattern[bytes], b: re.Pattern[str] | re.Pattern[bytes]) -> None:
    assert (a.pattern, a.flags, a.groups, a.groupindex) == (
        b.pattern,
        b.flags,
        b.groups,
        b.groupindex,
    )
    for text in SUBJECTS:
        subject = text.encode("latin-1", "replace") if isinstance(a.pattern, bytes) else text
        assert [m.span() for m in a.finditer(subject)] == [m.span() for m in b.finditer(subject)]


def test_a_kept_pattern_is_the_one_re_compiles(
    cache: GeneratedCode, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A miss keeps what re's compiler handed `_sre`; a hit gives `_sre` the same and
    compiles nothing in Python: the same pattern, flags, groups and matches."""
    real = codecache._RE_COMPILER.compile
    first = [cache.pattern(p, f) for p, f in PATTERNS]
    assert set(cache.patterns) == set(PATTERNS)
    marshal.dumps(cache.patterns)  # keepable as it is

    def refused(p: object, flags: int = 0) -> object:
        raise AssertionError(f"compiled again: {p!r}")

    monkeypatch.setattr(cache, "real_pattern", refused)
    for (p, f), one in zip(PATTERNS, first, strict=True):
        again = cache.pattern(p, f)
        same(again, one)
        same(again, real(p, f))


def test_arguments_another_call_handed_are_not_kept(
    cache: GeneratedCode, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another thread's pattern compiled between this call's start and end hands `_sre`
    other arguments: they are never kept under this call's pattern."""
    real = cache.real_pattern
    other = PATTERNS[2]

    def interleaved(p: object, flags: int = 0) -> object:
        compiled = real(p, flags)
        real(*other)  # the other call's arguments are the last handed
        return compiled

    monkeypatch.setattr(cache, "real_pattern", interleaved)
    same(cache.pattern(*PATTERNS[0]), re.compile(*PATTERNS[0]))
    assert not cache.patterns


def test_a_pattern_re_does_not_compile_is_its_error(cache: GeneratedCode) -> None:
    with pytest.raises(re.error):
        cache.pattern("(unclosed", 0)
    assert not cache.patterns


def test_kept_code_that_sre_refuses_is_compiled_afresh(cache: GeneratedCode) -> None:
    """A file that passed marshal but holds code `_sre` rejects: the pattern is compiled
    as re compiles it, never served from the file."""
    pattern, flags = PATTERNS[0]
    cache.pattern(pattern, flags)
    args = list(cache.patterns[(pattern, flags)])
    args[2] = [999999, 1, 2]  # not SRE code
    cache.patterns[(pattern, flags)] = tuple(args)
    same(cache.pattern(pattern, flags), re.compile(pattern, flags))
    assert cache.patterns[(pattern, flags)][2] != [999999, 1, 2]


def test_arguments_kept_for_another_pattern_are_not_served(cache: GeneratedCode) -> None:
    """A file whose entries were swapped (the arguments of one pattern under another's
    key) serves neither: each pattern is compiled as re compiles it."""
    (one, f1), (two, f2) = PATTERNS[0], PATTERNS[2]
    cache.pattern(one, f1)
    cache.pattern(two, f2)
    cache.patterns[(one, f1)], cache.patterns[(two, f2)] = (
        cache.patterns[(two, f2)],
        cache.patterns[(one, f1)],
    )
    same(cache.pattern(one, f1), re.compile(one, f1))
    same(cache.pattern(two, f2), re.compile(two, f2))


def test_patterns_another_sre_kept_are_ignored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    path = tmp_path / "generated.test.marshal"
    one = GeneratedCode(str(path))
    monkeypatch.setattr(codecache._RE_COMPILER, "_sre", one.sre)
    one.pattern(*PATTERNS[0])
    one.save()
    assert set(kept_patterns(path)) == {PATTERNS[0]}
    assert GeneratedCode(str(path)).patterns
    monkeypatch.setattr(_sre, "MAGIC", _sre.MAGIC + 1)
    assert not GeneratedCode(str(path)).patterns


def test_install_is_left_to_the_process() -> None:
    """Importing hostc, its API or its CLI does not touch `compile`; only the process's
    own start (hostc/__main__.py) does."""
    probe = (
        "import builtins, re._compiler as rc; real = builtins.compile; real_re = rc.compile; "
        "import hostc.api, hostc.cli.main; "
        "assert builtins.compile is real and rc.compile is real_re; "
        "import hostc.__main__ as m; "
        "assert builtins.compile == m.GENERATED.compile and rc.compile == m.GENERATED.pattern"
    )
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert builtins.compile.__module__ == "builtins"
