"""Atomic file writes and the Parquet image-table format every stage shares.

An image table has one row per image: integer columns (``index``, ``label``, ...), optional
string columns (``writer``, ``split``) and a ``pixels`` column of fixed-size binary values, one
flattened H*W*C uint8 image per row (fixed-size binary reads ~25x faster than a list<uint8> column).
The image shape and provenance live in the schema metadata
under the key ``pipelib``, so a table explains itself without the config that made it.  Tables are written
with page checksums and read with their verification, so damage inside a page is an error naming the file.

Every file written under a results folder (one with a run record, ``.pipelib/run.json``) also records the
SHA-256 of its content in ``<results>/.pipelib/hashes/<path>.sha256`` (:func:`recorded_hash`): the
pre-flight check and ``pipelib verify`` compare a file against it, which catches damage that keeps a file
readable.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import shutil
import tempfile
import zipfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

META_KEY = b"pipelib"
_UMASK = os.umask(0)
os.umask(_UMASK)


class WriteError(OSError):
    """An output could not be written (disk full, permission, read-only file system): names the output."""


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary file beside ``path``; it replaces ``path`` only if the block succeeds.

    A killed or failing job therefore never leaves a half-written file under the final name.  An error of
    the operating system while writing (disk full, permission) is raised as :class:`WriteError` naming
    ``path``, whatever the writer's own message said.
    """
    path = Path(path)
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        os.close(fd)
        yield Path(tmp)
        os.chmod(tmp, 0o666 & ~_UMASK)  # mkstemp makes 0600; give the file the usual mode
        where = hash_file(path)
        digest = content_hash(tmp) if where is not None else None
        os.replace(tmp, path)
        if digest is not None:
            _record(where, digest)
    except OSError as err:
        if isinstance(err, (WriteError, DamagedFileError)):
            raise
        if err.errno is None:  # numpy's tofile on a full disk: "100000 requested and 2032 written"
            raise WriteError(*_full_or(path, f"cannot write {path}: {err}")) from err
        raise WriteError(err.errno, f"cannot write {path}: {err.strerror or err}") from err
    except RuntimeError as err:  # torch.save on a full disk: "[enforce fail at inline_container.cc] unexpected pos"
        if _disk_full(path.parent):
            raise WriteError(errno.ENOSPC, f"cannot write {path}: No space left on device") from err
        raise
    finally:
        if tmp is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)


HASHES = Path(".pipelib") / "hashes"  # under a results folder: one <path>.sha256 per output written there
_ROOTS: dict[Path, Path | None] = {}


def results_root(path) -> Path | None:
    """The results folder ``path`` lies in: the nearest parent holding a run record, or None."""
    folder = Path(path).resolve().parent
    if folder not in _ROOTS:
        _ROOTS[folder] = next((p for p in (folder, *folder.parents) if (p / ".pipelib" / "run.json").is_file()), None)
    return _ROOTS[folder]


def hash_file(path) -> Path | None:
    """Where the content hash of ``path`` is recorded (None outside a results folder)."""
    root = results_root(path)
    if root is None:
        return None
    rel = Path(path).resolve().relative_to(root)
    return None if rel.parts[0] == ".pipelib" else root / HASHES / f"{rel}.sha256"  # not the run's own records


def content_hash(path) -> str:
    """SHA-256 of a file's bytes."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def recorded_hash(path) -> str | None:
    """The content hash recorded when ``path`` was written, or None (written outside pipelib's writers)."""
    where = hash_file(path)
    try:
        return where.read_text().strip() if where is not None else None
    except FileNotFoundError:
        return None


def _record(where: Path, digest: str) -> None:
    where.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{where.name}.", suffix=".tmp", dir=where.parent)
    with os.fdopen(fd, "w") as f:
        f.write(digest + "\n")
    os.replace(tmp, where)


FULL = 16 << 20  # bytes: less free space than this after a failed write means the disk is full


def _disk_full(folder: Path) -> bool:
    try:
        return shutil.disk_usage(folder).free < FULL
    except OSError:
        return False


def _full_or(path: Path, message: str) -> tuple:
    """WriteError's arguments: ENOSPC and a message saying so when the disk is full, else ``message``."""
    if _disk_full(path.parent):
        return errno.ENOSPC, f"cannot write {path}: No space left on device"
    return (message,)


def zip_crc_problem(path) -> str | None:
    """Why a zip archive (a torch file is one) fails its members' CRC check, or None: torch.load checks none,
    so damage inside a tensor would load as wrong weights."""
    with zipfile.ZipFile(path) as z:
        bad = z.testzip()
    return None if bad is None else f"member {bad} fails its CRC check"


class DamagedFileError(OSError):
    """A stage's input could not be read: it is damaged or incomplete (the message says how to rebuild it)."""


def readable(path, reader):
    """``reader()``, or a DamagedFileError naming ``path`` and how to rebuild it."""
    try:
        return reader()
    except FileNotFoundError:
        raise
    except Exception as err:  # Arrow, numpy, torch, JSON and CSV readers raise many kinds
        raise DamagedFileError(
            f"cannot read {path}: {type(err).__name__}: {err}. The file is damaged or incomplete. "
            f"Rebuild it with `.venv/bin/snakemake --cores 2 --force {path}` (add the --configfile you ran "
            f"with), then run your target again: what depends on it re-runs. "
            f"`pipelib verify` lists every damaged output."
        ) from None


def read_table(path, columns=None) -> pa.Table:
    """A Parquet table (errors name the file and how to rebuild it)."""
    return readable(path, lambda: pq.read_table(path, columns=columns, page_checksum_verification=True))


def read_rows(path) -> int:
    """A Parquet table's row count, from its footer."""
    return readable(path, lambda: pq.read_metadata(path).num_rows)


def read_csv(path) -> pd.DataFrame:
    return readable(path, lambda: pd.read_csv(path))


def load_npy(path) -> np.ndarray:
    return readable(path, lambda: np.load(path))


def write_json(obj, path) -> None:
    """Write ``obj`` as indented, key-sorted JSON, atomically."""
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(obj, indent=2, sort_keys=True, default=_json_default) + "\n")


def save_npy(array: np.ndarray, path) -> None:
    """Write a numpy array (.npy), atomically."""
    with atomic_path(path) as tmp:
        with open(tmp, "wb") as f:
            np.save(f, array)


def read_json(path):
    return readable(path, lambda: json.loads(Path(path).read_text()))


def write_csv(df: pd.DataFrame, path) -> None:
    """Write a DataFrame as CSV (no index), atomically."""
    with atomic_path(path) as tmp:
        df.to_csv(tmp, index=False)


def _json_default(x):
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, np.ndarray):
        return x.tolist()
    raise TypeError(f"cannot serialise {type(x).__name__} to JSON")


def image_table(columns: dict[str, np.ndarray | list], images: np.ndarray, meta: dict) -> pa.Table:
    """Build an image table from metadata columns and an (N, H, W, C) uint8 array."""
    if images.dtype != np.uint8 or images.ndim != 4:
        raise ValueError(f"images must be uint8 (N, H, W, C), got {images.dtype} {images.shape}")
    n, size = images.shape[0], int(np.prod(images.shape[1:]))
    buf = pa.py_buffer(np.ascontiguousarray(images).tobytes())
    pixels = pa.FixedSizeBinaryArray.from_buffers(pa.binary(size), n, [None, buf])
    arrays, names = [], []
    for name, values in columns.items():
        arr = pa.array(values)
        if len(arr) != n:
            raise ValueError(f"column {name!r} has {len(arr)} rows, images have {n}")
        arrays.append(arr)
        names.append(name)
    meta = {**meta, "shape": list(images.shape[1:])}
    schema_meta = {META_KEY: json.dumps(meta, sort_keys=True).encode()}
    return pa.Table.from_arrays(arrays + [pixels], names=names + ["pixels"]).replace_schema_metadata(schema_meta)


WRITTEN_KEY = b"pipelib.written"  # what write_table wrote: rows and columns, checked by `pipelib verify`


def write_table(table: pa.Table, path) -> None:
    """Write a Parquet table atomically (zstd-compressed), recording its row count and columns."""
    written = json.dumps({"rows": table.num_rows, "columns": table.column_names}).encode()
    table = table.replace_schema_metadata({**(table.schema.metadata or {}), WRITTEN_KEY: written})
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp, compression="zstd", write_page_checksum=True)


def table_meta(table_or_path) -> dict:
    """The ``pipelib`` metadata dict of an image table (or of the Parquet file at a path)."""
    if isinstance(table_or_path, pa.Table):
        schema = table_or_path.schema
    else:
        schema = readable(table_or_path, lambda: pq.read_schema(table_or_path))
    raw = (schema.metadata or {}).get(META_KEY)
    return json.loads(raw) if raw else {}


def read_images(path) -> tuple[pd.DataFrame, np.ndarray, dict]:
    """Read an image table: (non-pixel columns as a DataFrame, images (N, H, W, C) uint8, metadata)."""
    table = read_table(path)
    meta = table_meta(table)
    images = pixels_of(table, meta["shape"])
    frame = table.drop(["pixels"]).to_pandas()
    return frame, images, meta


def pixels_of(table: pa.Table, shape) -> np.ndarray:
    """The ``pixels`` column of a table as an (N, *shape) uint8 array."""
    col = table.column("pixels").combine_chunks()
    size = int(np.prod(shape))
    flat = np.frombuffer(col.buffers()[1], dtype=np.uint8, count=len(col) * size, offset=col.offset * size)
    return flat.reshape(len(col), *shape)


def take_rows(
    table: pa.Table, rows: np.ndarray, extra: dict[str, np.ndarray] | None = None, meta_update: dict | None = None
) -> pa.Table:
    """Select ``rows`` of an image table (repeats allowed), optionally adding columns and metadata."""
    out = table.take(pa.array(np.asarray(rows, dtype=np.int64)))
    for name, values in (extra or {}).items():
        idx = out.schema.get_field_index(name)
        arr = pa.array(values)
        out = out.set_column(idx, name, arr) if idx >= 0 else out.add_column(0, name, arr)
    if meta_update:
        meta = {**table_meta(table), **meta_update}
        out = out.replace_schema_metadata({META_KEY: json.dumps(meta, sort_keys=True).encode()})
    return out
