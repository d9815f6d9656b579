"""Which code made a result: digests of a workflow script and of the pipelib code it runs.

Snakemake's code trigger sees a rule's script but not the package the script imports, so a rule
passes ``code_digest(script)`` as a param: editing any pipelib module the script imports, directly
or through other modules, changes the param and re-runs exactly those rules.  Resume checkpoints
carry ``package_digest()`` so a run is never continued by other code.
"""
import ast
import hashlib
from functools import lru_cache
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent


def imported_modules(source: str, package: Path = PACKAGE) -> set[str]:
    """Names of the pipelib modules (files ``package/<name>.py``) that ``source`` imports, anywhere in it."""
    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            full = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = ("pipelib" + (f".{node.module}" if node.module else "")) if node.level else (node.module or "")
            full = [base] + [f"{base}.{alias.name}" for alias in node.names]
        else:
            continue
        for name in full:
            parts = name.split(".")
            if parts[0] == "pipelib":
                names.add("__init__")  # importing any submodule runs the package's __init__
                if len(parts) > 1:
                    names.add(parts[1])
    return {name for name in names if (package / f"{name}.py").is_file()}


def module_closure(script: Path, package: Path = PACKAGE) -> list[str]:
    """The pipelib modules ``script`` runs: those it imports and, transitively, those they import."""
    todo, seen = imported_modules(Path(script).read_text(), package), set()
    while todo:
        name = todo.pop()
        seen.add(name)
        todo |= imported_modules((package / f"{name}.py").read_text(), package) - seen
    return sorted(seen)


def _data_files(package: Path) -> list[Path]:
    return sorted(p for p in package.iterdir() if p.is_file() and p.suffix not in (".py", ".pyc"))


def code_digest(script, package: Path = PACKAGE) -> str:
    """A 16-hex-digit digest of ``script``, the pipelib modules it runs and the package data files
    (schema, checksums) those modules name."""
    digest = hashlib.sha256(Path(script).read_bytes())
    modules = module_closure(Path(script), package)
    texts = {name: (package / f"{name}.py").read_bytes() for name in modules}
    for name in modules:
        digest.update(f"\0{name}\0".encode() + texts[name])
    for data in _data_files(package):
        if any(data.name.encode() in text for text in texts.values()):
            digest.update(f"\0{data.name}\0".encode() + data.read_bytes())
    return digest.hexdigest()[:16]


@lru_cache(maxsize=None)
def package_digest(package: Path = PACKAGE) -> str:
    """A 16-hex-digit digest of every pipelib source and data file (cached: read once per process)."""
    digest = hashlib.sha256()
    for path in sorted(package.glob("*.py")) + _data_files(package):
        digest.update(f"\0{path.name}\0".encode() + path.read_bytes())
    return digest.hexdigest()[:16]
