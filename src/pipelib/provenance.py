"""Which code made a result: digests of a workflow script and of the pipelib code it runs.

Snakemake's code trigger sees a rule's script but not the package the script imports, so a rule
passes ``code_digest(script)`` as a param: editing any pipelib module the script imports, directly
or through other modules, changes the param and re-runs exactly those rules.  A resume checkpoint
carries the same digest (``Job.code``) so a run is never continued by other code; ``package_digest()``
stands in for it outside a workflow job.

Modules are named by their dotted path inside the package (``privacy.nfdp``, ``privacy`` for
``privacy/__init__.py``, ``__init__`` for the package's own ``__init__.py``); importing a module
also runs the ``__init__`` of every package above it.
"""

import ast
import atexit
import contextlib
import hashlib
import json
import os
from functools import cache
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent
ROOT = "__init__"


def module_file(name: str, package: Path = PACKAGE) -> Path | None:
    """The file of module ``name`` (``a.b`` -> a/b.py or a/b/__init__.py), or None if it is not one."""
    if name == ROOT:
        return package / "__init__.py"
    base = package.joinpath(*name.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


def _with_parents(name: str) -> set[str]:
    """``a.b.c`` -> {__init__, a, a.b, a.b.c}: importing a module runs every package above it."""
    parts = name.split(".")
    return {ROOT} | {".".join(parts[:i]) for i in range(1, len(parts) + 1)}


def imported_modules(source: str, package: Path = PACKAGE, module: str = "") -> set[str]:
    """The pipelib modules that ``source`` (the module ``module``, '' for a script) imports, anywhere in it."""
    is_package = module and module_file(module, package) and module_file(module, package).name == "__init__.py"
    here = module.split(".") if module and module != ROOT else []
    if not is_package:
        here = here[:-1]  # a plain module's relative imports start from its package
    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            full = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                up = here[: len(here) - (node.level - 1)] if node.level - 1 <= len(here) else None
                if up is None:
                    continue
                base = ".".join(["pipelib", *up, *([node.module] if node.module else [])])
            else:
                base = node.module or ""
            full = [base] + [f"{base}.{alias.name}" for alias in node.names]
        else:
            continue
        for name in full:
            parts = name.split(".")
            if parts[0] != "pipelib":
                continue
            inner = ".".join(parts[1:]) or ROOT
            if module_file(inner, package) is not None:
                names |= {n for n in _with_parents(inner) if module_file(n, package) is not None}
    return names


def _module(name: str, package: Path) -> tuple[bytes, frozenset, frozenset]:
    """A pipelib module's bytes, the pipelib modules it imports and its code strings: parsed once per
    process and version of the file (a Snakemake start digests some 60 scripts whose closures share most
    modules), and across processes through the workflow's disk cache (:func:`use_disk_cache`)."""
    path = module_file(name, package)
    st = path.stat()
    return _parsed(path, st.st_mtime_ns, st.st_size, name, package)


@cache
def _parsed(path: Path, mtime_ns: int, size: int, name: str, package: Path) -> tuple[bytes, frozenset, frozenset]:
    text = path.read_bytes()
    key = hashlib.sha256(b"\0".join([text, name.encode(), str(package).encode(), _listing(package)])).hexdigest()
    if key not in _DISK["entries"]:
        source = text.decode()
        _DISK["entries"][key] = [sorted(imported_modules(source, package, name)), sorted(code_strings(source))]
        _DISK["dirty"] = True
    imports, strings = _DISK["entries"][key]
    return text, frozenset(imports), frozenset(strings)


@cache
def _listing(package: Path) -> bytes:
    """The package's module files (what an import can resolve to): part of a parse's cache key."""
    return "\n".join(sorted(str(p.relative_to(package)) for p in package.rglob("*.py"))).encode()


_DISK: dict = {"path": None, "entries": {}, "dirty": False}


def use_disk_cache(path) -> None:
    """Keep the modules' parses in ``path`` (JSON, keyed by each module's content and the package's file
    list) between processes: the workflow's no-op starts skip parsing (written at exit, atomically)."""
    path = Path(path)
    try:
        _DISK["entries"] = json.loads(path.read_text())
    except (FileNotFoundError, ValueError):
        _DISK["entries"] = {}
    if _DISK["path"] is None:
        atexit.register(_save_disk_cache)
    _DISK["path"] = path


def _save_disk_cache() -> None:
    if not (_DISK["path"] and _DISK["dirty"]):
        return
    path = _DISK["path"]
    with contextlib.suppress(OSError):  # a cache: a read-only folder only costs the next start its parses
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(_DISK["entries"]))
        os.replace(tmp, path)


def module_closure(script: Path, package: Path = PACKAGE, also: tuple[str, ...] = ()) -> list[str]:
    """The pipelib modules ``script`` runs: those it imports and, transitively, those they import;
    ``also``: modules it imports by name at run time (``pipelib.report.tables``; others are skipped)."""
    todo, seen = imported_modules(Path(script).read_text(), package), set()
    for name in also:
        todo |= imported_modules(f"import {name}", package)
    while todo:
        name = todo.pop()
        seen.add(name)
        todo |= _module(name, package)[1] - seen
    return sorted(seen)


def _data_files(package: Path) -> list[Path]:
    return sorted(
        p
        for p in package.rglob("*")
        if p.is_file()
        and p.suffix not in (".py", ".pyc")
        and "__pycache__" not in p.parts
        and not p.name.startswith(".")
    )


def code_strings(source: str) -> set[str]:
    """The string constants of a module's code, docstrings left out: a data file counts as used when
    one of these names it (a docstring that mentions it does not make it an input)."""
    tree = ast.parse(source)
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return {
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
    }


def code_digest(script, package: Path = PACKAGE, also: tuple[str, ...] = ()) -> str:
    """A 16-hex-digit digest of ``script``, the pipelib modules it runs (with ``also``, those it imports by
    name: :func:`module_closure`) and the package data files (schema, checksums) those modules name."""
    digest = hashlib.sha256(Path(script).read_bytes())
    modules = module_closure(Path(script), package, also)
    for name in modules:
        digest.update(f"\0{name}\0".encode() + _module(name, package)[0])
    named = set().union(*(_module(name, package)[2] for name in modules))
    for data in _data_files(package):
        if any(data.name in string for string in named):
            digest.update(f"\0{data.relative_to(package).as_posix()}\0".encode() + data.read_bytes())
    return digest.hexdigest()[:16]


@cache
def package_digest(package: Path = PACKAGE) -> str:
    """A 16-hex-digit digest of every pipelib source and data file (cached: read once per process)."""
    digest = hashlib.sha256()
    files = sorted(p for p in package.rglob("*.py") if "__pycache__" not in p.parts) + _data_files(package)
    for path in files:
        digest.update(f"\0{path.relative_to(package).as_posix()}\0".encode() + path.read_bytes())
    return digest.hexdigest()[:16]
