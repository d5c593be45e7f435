"""Completed chunks on disk (``OUT.parts/``), the final join, and resuming.

Each chunk ``k`` leaves four files, each written to a temporary name and renamed when
complete: ``part-k.results.EXT`` (its scored rows; none when it has none),
``part-k.errors.jsonl`` (its bad rows, whatever ``on_error`` says, so that counts and the
errors file of a resumed run are the uninterrupted run's), ``part-k.stats.npz`` (the
statistics the corpus sums are made of) and, last, ``part-k.meta.json``: the chunk's
record range, row and error counts, the size of each of its files and the content digest
of every input up to the chunk's end.  A chunk is done when its meta file exists and its
other files have the sizes it records; only a gap-free prefix of done chunks is reused.

Finishing joins the parts into a temporary file beside them, checks that every expected
part is there and that the row counts add up, renames the errors file and then the output
into place, and removes the parts (renamed away first, so that a kill during the removal
leaves nothing a resume could mistake for parts).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from respeval._version import __version__
from respeval.bulk.chunks import ChunkStats, Inputs
from respeval.errors import RespevalError
from respeval.io import ResultWriter, join_parquet, parquet_writer
from respeval.io.files import OutputError, atomic_output, commit, create_temporary, refuse_link
from respeval.io.formats import WRITE_FORMATS, extensions_for, format_of
from respeval.io.writers import arrow_table, close_writer, write_parquet
from respeval.metrics.base import MetricFamily


class ResumeRefused(RespevalError, ValueError):
    """A resume that would mix results of different runs: the message names what changed."""


@dataclass(frozen=True)
class RunFingerprint:
    """What makes two runs the same run, part by part.

    ``parts`` maps what a part is, in words a refusal can quote (``"the judge model"``,
    ``"metric 'bleu'"``), to a JSON value; ``unproven`` maps a part whose sameness cannot be
    proven (user code respeval cannot read) to why.  A resume compares the parts one by
    one, so a refusal says which changed, and refuses outright while anything is unproven.
    This is the one resume check: ``score`` (:class:`Parts`) and ``evaluate`` use it.
    """

    parts: dict[str, Any]
    unproven: dict[str, str] = field(default_factory=dict)

    def part_digests(self) -> dict[str, str]:
        return {
            name: hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()[:16]
            for name, value in self.parts.items()
        }

    @property
    def digest(self) -> str:
        blob = json.dumps({"parts": self.part_digests(), "unproven": sorted(self.unproven)}, sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()

    def manifest(self) -> dict[str, Any]:
        return {"fingerprint": self.digest, "parts": self.part_digests(), "unproven": dict(self.unproven)}

    def check(
        self,
        stored: dict[str, Any],
        out: str,
        *,
        start_over: str = "; rerun it as the interrupted run was run, or run without --resume to start over",
        unproven_advice: str = "; run without --resume to start over",
    ) -> None:
        """Raise :class:`ResumeRefused` unless ``stored`` (the interrupted run's manifest)
        is this run's; ``start_over`` and ``unproven_advice`` end the refusals (what to do
        instead)."""
        unproven = {**(stored.get("unproven") or {}), **self.unproven}
        if unproven:
            reasons = "; ".join(f"{name}: {why}" for name, why in sorted(unproven.items()))
            raise ResumeRefused(
                f"cannot resume into {out}: respeval cannot prove that what the interrupted run used is unchanged "
                f"({reasons})" + unproven_advice
            )
        if stored.get("fingerprint") == self.digest:
            return
        before = stored.get("parts")
        if not isinstance(before, dict):
            raise ResumeRefused(
                f"cannot resume into {out}: the interrupted run was made by another respeval version or with other "
                "options, and its parts do not say which; run without --resume to start over"
            )
        now = self.part_digests()
        changed = [name for name in now if name in before and before[name] != now[name]]
        added = [name for name in now if name not in before]
        removed = [name for name in before if name not in now]
        what = [*changed, *(f"{n} (new)" for n in added), *(f"{n} (not given now)" for n in removed)]
        raise ResumeRefused(
            f"cannot resume into {out}: changed since the interrupted run: {', '.join(what) or 'the options'}"
            + start_over
        )


def check_manifest(directory: Path, fingerprint: RunFingerprint, out: str) -> bool:
    """Whether the parts in ``directory`` can be resumed: False when there is nothing to
    resume from (no manifest, or an unreadable one: the parts are scored again); raises
    :class:`ResumeRefused` when they are another run's."""
    try:
        stored = json.loads((directory / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    if not isinstance(stored, dict) or not stored:
        return False
    fingerprint.check(stored, out)
    return True


def write_manifest(directory: Path, fingerprint: RunFingerprint, out: str) -> None:
    with atomic_output(directory / "manifest.json", durable=False) as fh:
        fh.write(json.dumps({**fingerprint.manifest(), "output": os.path.basename(out)}))


def fingerprint(
    inputs: Inputs,
    families: Sequence[MetricFamily],
    chunk_size: int,
    on_error: str,
    system_names: Sequence[str],
    options: Mapping[str, Any] | None = None,
) -> RunFingerprint:
    """What makes two runs the same run, apart from the inputs' content (checked by digest):
    the families' signatures, the fields, the chunking, and ``options`` (more named parts:
    the metric options, the tokenizer).

    File paths are left out on purpose: ``data/x.jsonl`` and ``/abs/data/x.jsonl`` are the
    same input, and the content digests say whether a file is the one that was read.
    """
    parts: dict[str, Any] = {"the metrics": [f.name for f in families]}
    for family in families:
        parts[f"metric {family.name!r}"] = family.signature()
    parts.update(
        {
            "the chunk size": chunk_size,
            "on_error": on_error,
            "the prediction field": inputs.pred_field,
            "the reference field": inputs.ref_field,
            "the id field": inputs.id_field,
            "the system field": inputs.system_field,
            "the group-by field": inputs.group_field,
            "the files given": [len(inputs.preds), inputs.ref is not None],
            "the systems": list(system_names),
            **(options or {}),
            "the respeval version": __version__,
        }
    )
    return RunFingerprint(parts)


@dataclass
class PartMeta:
    """What ``part-k.meta.json`` records about a completed chunk."""

    chunk: int
    start_row: int
    end_row: int
    rows: int  # result rows written
    bad: int  # bad rows (for every system)
    digests: list[str]  # per input file (Inputs.files() order): content digest up to end_row
    sizes: dict[str, int]  # file kind -> bytes


_RESUME = " with --resume (the completed parts are kept)"


class PartsError(RespevalError, OSError):
    """The parts cannot be joined into a complete output (one is missing or damaged)."""


def parts_folder(out: str) -> str:
    """Where a run writing ``out`` keeps its finished chunks (``OUT.parts``)."""
    return out + ".parts"


class Parts:
    """Completed chunks on disk: results, errors and statistics per chunk."""

    def __init__(
        self,
        out: str,
        fingerprint: RunFingerprint,
        resume: bool,
        *,
        empty_table: dict[str, Any] | None = None,
        rows_per_record: int = 1,
        results_format: str | None = None,
    ) -> None:
        """``results_format``: each part's results in that format (``"parquet"``) whatever
        ``out``'s, for a caller that reads them back (:meth:`load_results`) and writes the
        output itself rather than :meth:`finish` joining them; None: in ``out``'s format."""
        self.out = out
        self.rows_per_record = rows_per_record  # result or error rows per input record
        self.dir = Path(parts_folder(out))
        if results_format is None:
            fmt = format_of(out)
            if fmt not in WRITE_FORMATS:
                raise ValueError(f"cannot write results to {out}: use a .parquet, .jsonl or .csv file")
            self.ext = Path(out).suffix.lower()
        else:
            fmt = results_format
            self.ext = extensions_for(fmt)[0]
        self.fmt = fmt
        self.empty_table = empty_table
        self.fingerprint = fingerprint
        self._remove_trash()
        refuse_link(self.dir, "run's parts")  # a folder planted as a link: the parts would go into its target
        resuming = self.dir.exists() and resume and check_manifest(self.dir, fingerprint, out)
        if self.dir.exists() and not resuming:
            self._discard(self.dir)  # not resuming, or nothing usable to resume from
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
            if not resuming:
                write_manifest(self.dir, fingerprint, out)
        except OSError as exc:
            raise OutputError.wrap(exc, self.dir, _RESUME) from exc
        # A Parquet output is also built as the parts are written (a run that does not
        # resume sees every chunk in order), so finishing is a rename rather than a
        # second decode and encode of everything.
        self._joined: str | None = None  # the output being built: a temporary file in the parts folder
        self._joined_fh: Any = None
        self._live: Any = None
        self._live_next = 0 if self.fmt == "parquet" and results_format is None else -1

    # ------------------------------------------------------------------ reading back

    def _name(self, k: int, what: str) -> Path:
        return self.dir / f"part-{k:06d}.{what}"

    def _files(self, k: int) -> dict[str, Path]:
        return {
            "results": self._name(k, "results" + self.ext),
            "errors": self._name(k, "errors.jsonl"),
            "stats": self._name(k, "stats.npz"),
        }

    def _meta(self, k: int) -> PartMeta | None:
        """The chunk's meta when the chunk is complete and intact, else None."""
        try:
            meta = PartMeta(**json.loads(self._name(k, "meta.json").read_text(encoding="utf-8")))
        except (OSError, ValueError, TypeError):
            return None
        if meta.chunk != k or meta.rows + meta.bad != (meta.end_row - meta.start_row) * self.rows_per_record:
            return None
        for kind, path in self._files(k).items():
            size = meta.sizes.get(kind)
            if size is None:
                continue
            try:
                if path.stat().st_size != size:
                    return None
            except OSError:
                return None
        return meta

    def done(self) -> list[PartMeta]:
        """The completed chunks to reuse: a gap-free prefix (chunks after a missing or damaged
        one are scored again)."""
        out: list[PartMeta] = []
        while (meta := self._meta(len(out))) is not None:
            if out and meta.start_row != out[-1].end_row:
                break
            out.append(meta)
        return out

    def load_arrays(self, k: int) -> dict[str, np.ndarray]:
        """The arrays chunk ``k``'s statistics were written as."""
        with np.load(self._name(k, "stats.npz"), allow_pickle=False) as z:
            return {name: z[name] for name in z.files}

    def load_stats(self, k: int) -> ChunkStats:
        return ChunkStats.from_arrays(self.load_arrays(k))

    def load_results(self, k: int) -> Any:
        """Chunk ``k``'s results as an Arrow table (Parquet parts)."""
        import pyarrow.parquet as pq

        return pq.read_table(self._files(k)["results"])

    def errors(self, k: int) -> list[dict[str, Any]]:
        path = self._name(k, "errors.jsonl")
        return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x]

    # ------------------------------------------------------------------ writing

    def write(
        self,
        k: int,
        start_row: int,
        end_row: int,
        table: dict[str, Any] | None,
        errors: list[dict[str, Any]],
        stats: ChunkStats | Mapping[str, np.ndarray],
        digests: list[str],
    ) -> PartMeta:
        """Write chunk ``k``'s files, the meta file last.  Called in chunk order.  ``table``:
        columns or an Arrow table; ``stats``: a chunk's statistics, or the arrays to keep."""
        try:
            return self._write(k, start_row, end_row, table, errors, stats, digests)
        except OSError as exc:  # (each temporary file is removed by atomic_output)
            raise OutputError.wrap(exc, self.out, _RESUME) from exc

    def _write(
        self,
        k: int,
        start_row: int,
        end_row: int,
        table: dict[str, Any] | None,
        errors: list[dict[str, Any]],
        stats: ChunkStats | Mapping[str, np.ndarray],
        digests: list[str],
    ) -> PartMeta:
        files = self._files(k)
        sizes: dict[str, int] = {}
        rows = 0
        if table is not None:
            results = files["results"]
            if self.fmt == "parquet":
                # evaluate hands over an Arrow table; score, its columns
                arrow: Any = arrow_table(table) if isinstance(table, Mapping) else table
                with atomic_output(results, "wb", durable=False) as fh:
                    write_parquet(arrow, fh, scratch=True)
                self._write_live(k, arrow)
                rows = arrow.num_rows
            else:
                with (
                    atomic_output(results, "w", newline="", durable=False) as fh,
                    ResultWriter(results, fmt=self.fmt, stream=fh) as w,
                ):
                    w.write(table)
                rows = w.rows_written
            sizes["results"] = results.stat().st_size
        elif self._live_next == k:
            self._live_next += 1
        err = files["errors"]
        with atomic_output(err, durable=False) as fh:
            for e in errors:
                fh.write(json.dumps(e, ensure_ascii=False) + "\n")
        sizes["errors"] = err.stat().st_size
        st = files["stats"]
        with atomic_output(st, "wb", durable=False) as fh:
            arrays = stats.to_arrays() if isinstance(stats, ChunkStats) else stats
            np.savez(fh, **arrays)  # type: ignore[arg-type]
        sizes["stats"] = st.stat().st_size
        meta = PartMeta(k, start_row, end_row, rows, len(errors), list(digests), sizes)
        with atomic_output(self._name(k, "meta.json"), durable=False) as fh:
            fh.write(json.dumps(asdict(meta)))
        return meta

    def _new_joined(self, mode: str) -> Any:
        """A new temporary file in the parts folder for the output being built."""
        self._joined, self._joined_fh = create_temporary(self.dir / f"joined{self.ext}", mode, newline="")
        return self._joined_fh

    def _close_joined(self) -> None:
        if self._joined_fh is not None:
            fh, self._joined_fh = self._joined_fh, None
            fh.close()

    def _remove_joined(self) -> None:
        with contextlib.suppress(OSError):
            self._close_joined()
        if self._joined is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self._joined)
            self._joined = None

    def _write_live(self, k: int, arrow: Any) -> None:
        if self._live_next != k:
            return
        if self._live is None:
            self._live = parquet_writer(self._new_joined("wb"), arrow.schema)
        if arrow.schema != self._live.schema:
            self._drop_live()  # finish() joins the parts, and names the mismatch
            return
        try:
            self._live.write_table(arrow)
        except BaseException:
            self._drop_live()
            raise
        self._live_next += 1

    def abort(self) -> None:
        """The run failed: let go of the output being built (the parts stay, for --resume)."""
        self._drop_live()

    def _drop_live(self) -> None:
        if self._live is not None:
            close_writer(self._live, failed=True)  # its file is discarded either way
            self._remove_joined()
        self._live, self._live_next = None, -1

    # ------------------------------------------------------------------ finishing

    def finish(self, metas: Sequence[PartMeta], errors_out: str | None) -> None:
        """Join the parts into the final files (checked), rename them into place, remove the parts."""
        try:
            self._finish(metas, errors_out)
        except OSError as exc:
            self._drop_live()
            self._remove_joined()  # a half-joined file only takes the space a rerun needs
            if isinstance(exc, PartsError):
                raise
            raise OutputError.wrap(exc, self.out, _RESUME) from exc
        self._discard(self.dir)

    def _check(self, metas: Sequence[PartMeta]) -> None:
        for k, meta in enumerate(metas):
            if meta.chunk != k or (k and meta.start_row != metas[k - 1].end_row) or self._meta(k) != meta:
                raise PartsError(
                    f"part {k} of {self.out} is missing or damaged ({self.dir}); rerun the same command with "
                    "--resume: the parts that are intact are kept and the others scored again"
                )

    def _finish(self, metas: Sequence[PartMeta], errors_out: str | None) -> None:
        self._check(metas)
        total = sum(m.rows for m in metas)
        results = [self._files(m.chunk)["results"] for m in metas if "results" in m.sizes]
        if self._live is not None and self._live_next == len(metas):
            live, self._live = self._live, None
            try:
                close_writer(live)  # every chunk went into the output as it was written
            except BaseException:
                close_writer(live, failed=True)
                raise
            self._close_joined()
        elif not results:
            self._drop_live()
            fh = self._new_joined("wb" if self.fmt == "parquet" else "w")
            with ResultWriter(self.out, fmt=self.fmt, stream=fh) as w:  # no row: a valid empty file with the schema
                if self.empty_table is not None:
                    w.write(self.empty_table)
            self._close_joined()
        elif self.fmt == "parquet":
            self._drop_live()
            import pyarrow.parquet as pq

            join_parquet((pq.read_table(p) for p in results), self._new_joined("wb"))
            self._close_joined()
        else:
            self._drop_live()
            self._join_text(
                results, self._new_joined("wb"), sum(m.sizes["results"] for m in metas if "results" in m.sizes)
            )
            self._close_joined()
        assert self._joined is not None
        joined = self._joined
        if self.fmt == "parquet":
            written = int(pq_rows(joined))
            if written != total:
                raise PartsError(
                    f"joining the parts of {self.out} gave {written} rows, not the {total} the parts hold; "
                    "nothing was replaced: rerun the same command with --resume"
                )
        if errors_out:
            with atomic_output(errors_out) as dst:
                lines = 0
                for m in metas:
                    text = self._name(m.chunk, "errors.jsonl").read_text(encoding="utf-8")
                    lines += text.count("\n")
                    dst.write(text)
                bad = sum(m.bad for m in metas)
                if lines != bad:  # (the temporary file is removed, the errors file left as it was)
                    raise PartsError(f"the errors of {self.out} add up to {lines} rows, not {bad}; rerun with --resume")
        commit(joined, self.out)
        self._joined = None

    def _join_text(self, results: list[Path], dst: Any, expected: int) -> None:
        """Concatenate JSONL or CSV parts into ``dst`` (each CSV part's header but the first
        dropped); the bytes copied must be the bytes the parts' metas record."""
        copied = 0
        for i, p in enumerate(results):
            with open(p, "rb") as src:
                if self.fmt == "csv" and i > 0:
                    copied += len(src.readline())  # each part carries the header; keep the first only
                shutil.copyfileobj(src, dst, 1 << 20)
        copied += dst.tell()
        if copied != expected:
            raise PartsError(
                f"joining the parts of {self.out} copied {copied} bytes, not the {expected} the parts hold; "
                "nothing was replaced: rerun the same command with --resume"
            )

    # ------------------------------------------------------------------ removing

    def remove(self) -> None:
        """The output is written by the caller (``results_format``): remove the parts."""
        self._discard(self.dir)

    def _trash_dirs(self) -> list[Path]:
        return list(self.dir.parent.glob(self.dir.name + ".trash-*"))

    def _remove_trash(self) -> None:
        for old in self._trash_dirs():
            shutil.rmtree(old, ignore_errors=True)

    def _discard(self, directory: Path) -> None:
        """Remove a parts directory: renamed away first (one atomic step), then deleted."""
        trash = directory.with_name(f"{directory.name}.trash-{os.getpid()}")
        with contextlib.suppress(FileNotFoundError):
            os.replace(directory, trash)
            shutil.rmtree(trash, ignore_errors=True)


def pq_rows(path: str) -> int:
    """Rows of a Parquet file, from its footer."""
    import pyarrow.parquet as pq

    return int(pq.ParquetFile(path).metadata.num_rows)
