"""Move a single-machine registry (`--data DIR`) into another storage, checking every byte.

Each version's blob is copied into the target's upload folder while hashed (the source's
checksum verified), committed with its original publish time and meta, then read back
from the target and hashed again. Re-running is safe: versions already there with the same
checksum are skipped. A version that fails is reported and the rest go on.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from .records import BlobMissing, Conflict, Record
from .storage import Storage, StorageConfig, open_storage

CHUNK = 1024 * 1024


@dataclass
class MigrationReport:
    copied: int = 0
    skipped: int = 0
    failed: list[str] = field(default_factory=list)


def migrate(source_dir: Path, target: StorageConfig,
            echo: Callable[[str], None] = print) -> MigrationReport:
    """Copy every version of the registry in `source_dir` into `target`."""
    if not (Path(source_dir) / "registry.sqlite").is_file():
        raise FileNotFoundError(f"{source_dir} holds no registry (no registry.sqlite)")
    source = Storage(Path(source_dir))
    dest = open_storage(target)
    source.open()
    try:
        dest.open()
        try:
            report = MigrationReport()
            for record in source.index.all_records():
                try:
                    status = _copy(record, source, dest)
                except (OSError, BlobMissing, Conflict, ValueError) as e:
                    report.failed.append(f"{record.id.qualified}: {e}")
                    echo(f"FAILED {record.id.qualified}: {e}")
                    continue
                if status == "unchanged":
                    report.skipped += 1
                else:
                    report.copied += 1
                    echo(f"copied {record.id.qualified} ({record.size} bytes, sha256 verified)")
            return report
        finally:
            dest.close()
    finally:
        source.close()


def _copy(record: Record, source: Storage, dest: Storage) -> str:
    existing = dest.get(record.id)
    if existing and existing.sha256 == record.sha256:
        return "unchanged"
    upload = dest.new_upload()
    try:
        for chunk in source.blobs.stream(record.sha256):
            upload.write(chunk)
        if upload.finish() != record.sha256 or upload.size != record.size:
            raise ValueError("the source file does not match its recorded sha256/size; not copied")
        outcome, _ = dest.commit(record, upload.path)
    finally:
        upload.discard()
    digest = hashlib.sha256()
    for chunk in dest.blobs.stream(record.sha256):
        digest.update(chunk)
    if digest.hexdigest() != record.sha256:
        raise ValueError("the copy in the target reads back with a different sha256")
    return outcome.status
