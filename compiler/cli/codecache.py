"""The code attrs and cattrs generate, and the regular expressions every module compiles,
compiled once and kept between runs of `hostc`.

Installed by `hostc/__main__.py` alone (a process decides its own `compile`; a program
embedding `hostc.api` is left as it is).  Why and what it earns: the docstring there.
"""

import __future__

import builtins
import contextlib
import importlib
import importlib.util
import marshal
import os
import re
import sys
from types import CodeType, ModuleType
from typing import Any, Self

#: re's compiler (private, as stable as the interpreter it ships with: its format is
#: `_sre.MAGIC`, which the file records) and the C module it hands the compiled code to.
_RE_COMPILER: Any = importlib.import_module("re._compiler")
_SRE: Any = importlib.import_module("_sre")

#: The `from __future__` flags a caller passes on to `compile` when it does not say
#: dont_inherit (CPython's PyCF_MASK; nested_scopes' flag is obsolete and ignored).
FUTURE_FLAGS = 0
for _feature in __future__.all_feature_names:
    FUTURE_FLAGS |= getattr(__future__, _feature).compiler_flag
FUTURE_FLAGS &= ~__future__.nested_scopes.compiler_flag

#: Past this many entries a save keeps only what its own run used: the cache follows
#: the commands run here instead of growing with every version of hostc installed.
LIMIT = 4096


def _plain(value: Any) -> Any:
    """An int subclass (re's named opcodes), or a list of them, as plain ints."""
    if isinstance(value, int) and type(value) is not bool:
        return int(value)
    if type(value) is list and all(isinstance(v, int) for v in value):
        return [int(v) for v in value]
    return value


def _made(compiled: Any, args: tuple[Any, ...]) -> bool:
    """Whether `args` are what `_sre.compile` made `compiled` from: its pattern object,
    final flags and group count (and not another thread's call in between, nor an
    interpreter whose `_sre.compile` takes its arguments in another order: then the
    pattern is simply not kept)."""
    return (
        len(args) >= 4
        and args[0] is compiled.pattern
        and args[1] == compiled.flags
        and args[3] == compiled.groups
    )


class GeneratedCode:
    """The code objects `compile` made from source strings, kept between runs.

    attrs writes each class's `__init__` as Python source and cattrs each structure
    hook, and both compile it on every start: over a quarter of what hostc adds to a
    cold build's start (callgrind, a DGX build: 121 M of the 426 M instructions it
    adds). The result of `compile(source, filename, mode, flags)` depends on its
    arguments and the interpreter alone, so it is kept under exactly those arguments,
    the whole source text included (a changed class or library misses and compiles
    afresh; nothing is ever matched by a name or a version). The file lives where Python
    keeps this package's bytecode, with the same trust: `__pycache__` beside the
    modules, or under `PYTHONPYCACHEPREFIX`; named by the interpreter's cache tag and
    optimization level and headed by its bytecode magic number; never written under
    `PYTHONDONTWRITEBYTECODE` (or -B). An unreadable, foreign or corrupt file is ignored
    and replaced; a file that cannot be written leaves the run uncached.

    A run rewrites the file only where it compiled code under a name the file does not
    hold yet (a new class, a first run) or missed more than a quarter of its look-ups
    (a library upgraded): attrs salts each generated `__hash__` with the string hash of
    its name, which `PYTHONHASHSEED` changes in every process, so the code of ~20
    classes (most of them attrs' own validators) differs in every run; it is compiled
    afresh rather than rewriting the file each time.

    Regular expressions are kept the same way: `re` parses a pattern and generates its
    code in Python, then hands that code to the C module `_sre`; what it hands over
    depends on the pattern, its flags and the interpreter alone, so it is kept under
    the pattern and flags (and the file under `_sre.MAGIC`, the code's format), and a
    later run gives `_sre` the same arguments, which checks the code as it always does.
    The ~100 patterns a build's libraries and modules compile cost ~23 ms of its ~240.
    """

    def __init__(self, path: str | None) -> None:
        self.path = path
        self.codes: dict[tuple[str, str, str, int], Any] = {}
        self.used: set[tuple[str, str, str, int]] = set()
        #: (pattern, flags) → the arguments re's compiler gave `_sre.compile` for it
        self.patterns: dict[tuple[str | bytes, int], tuple[Any, ...]] = {}
        self.used_patterns: set[tuple[str | bytes, int]] = set()
        self.misses = 0
        self.new_name = False
        self.real = builtins.compile
        self.real_pattern = _RE_COMPILER.compile
        #: re's compiler sees `_sre` through this copy, whose `compile` keeps its arguments
        self.sre = ModuleType(_SRE.__name__)
        self.sre.__dict__.update(_SRE.__dict__)
        self.sre.__dict__["compile"] = self._sre_compile
        self.handed: tuple[Any, ...] | None = None
        if path is not None:
            self.codes, self.patterns = self.read(path)
        self.names = {key[1] for key in self.codes}

    @staticmethod
    def location() -> str | None:
        """Where this interpreter keeps the file (None: it keeps no bytecode)."""
        tag = sys.implementation.cache_tag
        if tag is None:
            return None
        level = sys.flags.optimize
        name = f"generated.{tag}{f'.opt-{level}' if level else ''}.marshal"
        package = os.path.dirname(os.path.abspath(__file__))
        if sys.pycache_prefix:
            return os.path.join(sys.pycache_prefix, package.lstrip(os.sep), name)
        return os.path.join(package, "__pycache__", name)

    @staticmethod
    def read(
        path: str,
    ) -> tuple[dict[tuple[str, str, str, int], Any], dict[tuple[str | bytes, int], Any]]:
        """The kept codes and patterns, or none where the file is missing, foreign or
        corrupt (and no patterns where another `_sre` wrote them)."""
        magic = importlib.util.MAGIC_NUMBER
        try:
            with open(path, "rb") as f:
                data = f.read()
            doc = marshal.loads(data[len(magic) :]) if data.startswith(magic) else {}
        except (OSError, EOFError, ValueError, TypeError):
            return {}, {}
        if type(doc) is not dict or type(doc.get("compile")) is not dict:
            return {}, {}
        patterns = doc.get("re")
        if doc.get("sre") != _SRE.MAGIC or type(patterns) is not dict:
            patterns = {}
        return doc["compile"], patterns

    def compile(
        self,
        source: Any,
        filename: Any,
        mode: str,
        flags: int = 0,
        dont_inherit: bool = False,
        optimize: int = -1,
        **kwargs: Any,
    ) -> Any:
        """`compile` with the same arguments and result, from the kept code where the
        source is generated: a string named `<...>` (or ""), as Python names code no
        file holds (a template or a file has its own cache; an AST, bytes, a non-default
        optimization level or feature version compile as they would)."""
        if not dont_inherit:  # the caller's `from __future__` imports, as compile takes them
            flags |= sys._getframe(1).f_code.co_flags & FUTURE_FLAGS
        if (
            type(source) is not str
            or type(filename) is not str
            or filename[:1] not in ("<", "")  # "<...>" or "": no file holds it
            or flags & ~FUTURE_FLAGS
            or optimize != -1
            or kwargs
        ):
            return self.real(source, filename, mode, flags, True, optimize, **kwargs)
        key = (source, filename, mode, flags)
        self.used.add(key)
        code = self.codes.get(key)
        if type(code) is not CodeType:
            code = self.codes[key] = self.real(source, filename, mode, flags, True)
            self.misses += 1
            self.new_name = self.new_name or filename not in self.names
        return code

    def pattern(self, p: Any, flags: Any = 0) -> Any:
        """`re._compiler.compile` with the same result, from the kept arguments of its
        `_sre.compile` call where the pattern is a str or bytes (a parsed pattern, a
        debug flag compile as they would).  Parsing a pattern and generating its code
        is Python code in `re`: the ~100 patterns a build's modules and libraries compile
        at import cost about a tenth of a cold build (~23 ms of ~240)."""
        if type(p) not in (str, bytes) or type(flags) is not int or flags & re.DEBUG:
            return self.real_pattern(p, flags)
        key = (p, flags)
        self.used_patterns.add(key)
        args = self.patterns.get(key)
        if type(args) is tuple and args[:1] == (p,):  # kept for this very pattern
            try:  # `_sre` checks the code; a file that passed marshal but not that misses
                return _SRE.compile(*args)
            except Exception:  # any refusal of `_sre`: compile afresh
                del self.patterns[key]
        self.handed = None
        compiled = self.real_pattern(p, flags)
        if self.handed is not None and _made(compiled, self.handed):
            # re's opcodes are named int subclasses: kept as the ints `_sre` reads
            args = tuple(_plain(a) for a in self.handed)
            with contextlib.suppress(ValueError):  # not marshallable: compiled each run
                marshal.dumps(args)
                self.patterns[key] = args
                self.misses += 1
                self.new_name = True  # a pattern's code has no per-process salt
        return compiled

    def _sre_compile(self, *args: Any) -> Any:
        self.handed = args
        return _SRE.compile(*args)

    def save(self) -> None:
        """Write the codes back where this run compiled something new (the class docstring
        says when that is)."""
        worth = self.new_name or self.misses * 4 > len(self.used) + len(self.used_patterns)
        if not worth or self.path is None or sys.dont_write_bytecode:
            return
        codes, patterns = self.codes, self.patterns
        if len(codes) + len(patterns) > LIMIT:
            codes = {key: codes[key] for key in self.used}
            patterns = {key: patterns[key] for key in self.used_patterns if key in patterns}
        doc = {"compile": codes, "re": patterns, "sre": _SRE.MAGIC}
        # created exclusively, as Python writes bytecode: a name already taken (a link
        # planted in a shared cache folder) is never followed, truncated or removed
        staged = f"{self.path}.{os.getpid()}.tmp"
        try:
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            fd = os.open(staged, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
        except OSError:  # a read-only install, or the name is taken: this run stays uncached
            return
        try:
            with open(fd, "wb") as f:
                f.write(importlib.util.MAGIC_NUMBER + marshal.dumps(doc))
            os.replace(staged, self.path)
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(staged)
            return
        self.misses, self.new_name = 0, False
        self.names = {key[1] for key in codes}

    @classmethod
    def install(cls) -> Self:
        """The kept codes and patterns of this interpreter, serving every `compile` and
        every regular expression compiled from here on."""
        cache = cls(cls.location())
        builtins.compile = cache.compile
        _RE_COMPILER._sre = cache.sre
        _RE_COMPILER.compile = cache.pattern
        return cache
