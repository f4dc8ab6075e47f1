"""Package files in S3 or an S3-compatible store (MinIO, R2, Ceph), through boto3.

Keys are `PREFIX/blobs/ab/<sha256>.db`. A blob is written by one PutObject (or a multipart
upload that becomes visible only when completed), with its SHA-256 in the object's metadata.
Abandoned multipart uploads (a replica killed mid-put) are aborted by `abort_stale_uploads`.
Credentials and region come from boto3's standard chain (AWS_* variables, profiles, roles).

`local_copy` keeps verified downloads in a size-bounded cache folder for the HTML pages'
package search, which needs a local SQLite file.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from .records import SHA256, BlobMissing, Record, Unavailable

CHUNK = 1024 * 1024
CACHE_BYTES = 2 * 1024 ** 3


class S3Blobs:
    """`--blobs s3://BUCKET[/PREFIX]` with `--s3-endpoint URL` for non-AWS stores."""

    def __init__(self, bucket: str, prefix: str = "", *, endpoint: str | None = None,
                 cache_dir: Path | None = None, cache_bytes: int = CACHE_BYTES) -> None:
        self.bucket = bucket
        self.prefix = prefix.strip("/") + "/" if prefix.strip("/") else ""
        self.endpoint = endpoint
        self.cache_dir = cache_dir
        self.cache_bytes = cache_bytes
        self._own_cache = cache_dir is None
        self.client: Any = None

    @classmethod
    def from_url(cls, url: str, *, endpoint: str | None = None, cache_dir: Path | None = None) -> S3Blobs:
        parts = urlsplit(url)
        if parts.scheme != "s3" or not parts.netloc or parts.query or parts.fragment:
            raise ValueError(f"--blobs must look like s3://BUCKET[/PREFIX], not {url!r}")
        return cls(parts.netloc, parts.path, endpoint=endpoint, cache_dir=cache_dir)

    def describe(self) -> str:
        where = f" at {self.endpoint}" if self.endpoint else ""
        return f"s3://{self.bucket}/{self.prefix}{where}"

    # -- lifecycle -------------------------------------------------------------------

    def open(self) -> None:
        try:
            import boto3
            from botocore.config import Config
        except ImportError:
            raise SystemExit("--blobs s3://… needs boto3: pip install boto3") from None
        config = Config(retries={"max_attempts": 3, "mode": "standard"}, connect_timeout=5,
                        read_timeout=60, max_pool_connections=64,
                        s3={"addressing_style": "path"} if self.endpoint else None)
        self.client = boto3.session.Session().client("s3", endpoint_url=self.endpoint, config=config)
        if self.cache_dir is None:
            self.cache_dir = Path(tempfile.mkdtemp(prefix="context-registry-cache-"))
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        self.ping()

    def close(self) -> None:
        if self.client is not None:
            self.client.close()
            self.client = None
        if self._own_cache and self.cache_dir is not None:
            shutil.rmtree(self.cache_dir, ignore_errors=True)
            self.cache_dir = None

    def ping(self) -> None:
        self._call(self.client.head_bucket, Bucket=self.bucket)

    def _call(self, method: Any, **params: Any) -> Any:
        """One S3 call; unreachable endpoints and server errors become `Unavailable`."""
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            return method(**params)
        except ClientError as e:
            code = str(e.response.get("Error", {}).get("Code", ""))
            status = int(e.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0) or 0)
            if code in ("404", "NoSuchKey", "NotFound"):
                raise BlobMissing(params.get("Key", "")) from None
            if status >= 500 or code in ("NoSuchBucket", "AccessDenied", "403", "SlowDown"):
                raise Unavailable(f"bucket {self.bucket}: {code or status}") from None
            raise
        except BotoCoreError as e:
            raise Unavailable(f"bucket {self.bucket}: {e}") from None

    def key(self, sha256: str) -> str:
        if not SHA256.fullmatch(sha256):
            raise ValueError("not a SHA-256")
        return f"{self.prefix}blobs/{sha256[:2]}/{sha256}.db"

    # -- blobs -----------------------------------------------------------------------

    def has(self, sha256: str, size: int) -> bool:
        try:
            head = self._call(self.client.head_object, Bucket=self.bucket, Key=self.key(sha256))
        except BlobMissing:
            return False
        return int(head.get("ContentLength", -1)) == size

    def put(self, path: Path, sha256: str) -> None:
        self._call(self.client.upload_file, Filename=str(path), Bucket=self.bucket, Key=self.key(sha256),
                   ExtraArgs={"ContentType": "application/octet-stream", "Metadata": {"sha256": sha256}})

    def delete(self, sha256: str) -> None:
        self._call(self.client.delete_object, Bucket=self.bucket, Key=self.key(sha256))

    def listing(self) -> Iterator[tuple[str, float]]:
        pages = self.client.get_paginator("list_objects_v2").paginate(
            Bucket=self.bucket, Prefix=f"{self.prefix}blobs/")
        for page in self._call(lambda: list(pages)):
            for obj in page.get("Contents", []):
                sha = obj["Key"].rsplit("/", 1)[-1].removesuffix(".db")
                if SHA256.fullmatch(sha):
                    yield sha, _timestamp(obj["LastModified"])

    def abort_stale_uploads(self, older_than: float) -> int:
        """Abort multipart uploads started before `older_than` (epoch seconds)."""
        answer = self._call(self.client.list_multipart_uploads, Bucket=self.bucket,
                            Prefix=f"{self.prefix}blobs/")
        aborted = 0
        for upload in answer.get("Uploads", []):
            if _timestamp(upload["Initiated"]) < older_than:
                self._call(self.client.abort_multipart_upload, Bucket=self.bucket,
                           Key=upload["Key"], UploadId=upload["UploadId"])
                aborted += 1
        return aborted

    def file_path(self, sha256: str) -> Path | None:
        return None  # bytes come from the bucket

    def stream(self, sha256: str) -> Iterator[bytes]:
        answer = self._call(self.client.get_object, Bucket=self.bucket, Key=self.key(sha256))
        body = answer["Body"]
        try:
            yield from body.iter_chunks(CHUNK)
        finally:
            body.close()

    def presign(self, sha256: str, filename: str, seconds: int) -> str | None:
        url: str = self.client.generate_presigned_url(
            "get_object", ExpiresIn=seconds,
            Params={"Bucket": self.bucket, "Key": self.key(sha256),
                    "ResponseContentType": "application/octet-stream",
                    "ResponseContentDisposition": f'attachment; filename="{filename}"'})
        return url

    def local_copy(self, record: Record) -> Path:
        """A cached, checksum-verified local file of the blob; old entries evicted past the bound."""
        assert self.cache_dir is not None, "the blob store is not open"
        path = self.cache_dir / f"{record.sha256}.db"
        if path.exists():
            os.utime(path)
            return path
        fd, tmp_name = tempfile.mkstemp(prefix=".fetch-", suffix=".partial", dir=self.cache_dir)
        tmp = Path(tmp_name)
        try:
            digest = hashlib.sha256()
            with os.fdopen(fd, "wb") as out:
                for chunk in self.stream(record.sha256):
                    out.write(chunk)
                    digest.update(chunk)
            if digest.hexdigest() != record.sha256:
                raise Unavailable(f"the blob of {record.id.qualified} in the bucket is damaged")
            tmp.chmod(0o444)
            os.replace(tmp, path)
        finally:
            tmp.unlink(missing_ok=True)
        self._evict(keep=path)
        return path

    def _evict(self, keep: Path) -> None:
        assert self.cache_dir is not None
        entries = []
        for p in self.cache_dir.glob("*.db"):
            try:
                st = p.stat()
            except FileNotFoundError:
                continue
            entries.append((st.st_atime, st.st_size, p))
        total = sum(size for _, size, _ in entries)
        for _, size, p in sorted(entries):
            if total <= self.cache_bytes:
                break
            if p != keep:
                p.unlink(missing_ok=True)
                total -= size


def _timestamp(value: datetime | float) -> float:
    return value.timestamp() if isinstance(value, datetime) else float(value or time.time())
