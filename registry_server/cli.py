"""`context-registry-server`: turn options into an app and hand it to uvicorn.

One process, one worker: publishes commit under an in-process lock (see storage.py).
"""

from __future__ import annotations

from pathlib import Path

import click


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--data", "data_dir", required=True, envvar="CONTEXT_REGISTRY_DATA",
              type=click.Path(file_okay=False, path_type=Path),
              help="Folder for package files and the index (created if missing).")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=8080, show_default=True, type=click.IntRange(0, 65535),
              help="Port to listen on.")
@click.option("--publish-key", envvar="CONTEXT_REGISTRY_KEY", default=None,
              help="Bearer key that allows publishing (or CONTEXT_REGISTRY_KEY). "
                   "Without one, publishing is refused.")
@click.option("--max-upload-mb", default=512, show_default=True, type=click.IntRange(1, 1 << 20),
              help="Largest package file accepted.")
@click.option("--log-level", default="info", show_default=True,
              type=click.Choice(["critical", "error", "warning", "info", "debug"]))
def main(data_dir: Path, host: str, port: int, publish_key: str | None, max_upload_mb: int,
         log_level: str) -> None:
    """Host documentation packages over Neuledge Context's registry API.

    Serves GET /search, GET /packages/R/N/V[/download] and POST /packages/R/N/V, plus
    /api/search, /api/packages/R/N, /health and an HTML page at /.
    """
    import uvicorn

    from .app import create_app

    app = create_app(data_dir, publish_key=publish_key,
                     max_upload_bytes=max_upload_mb * 1024 * 1024)
    if not publish_key:
        click.echo("Publishing is disabled (no --publish-key or CONTEXT_REGISTRY_KEY).", err=True)
    uvicorn.run(app, host=host, port=port, log_level=log_level, workers=1,
                timeout_graceful_shutdown=10)


if __name__ == "__main__":
    main()
