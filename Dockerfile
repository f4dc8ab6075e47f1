# The registry server: `docker build -t context-registry . && docker run -p 8080:8080 \
#   -v registry-data:/data -e CONTEXT_REGISTRY_KEY=... context-registry`
# Package files and the index live in the /data volume; without a key, publishing is refused.
# Scale-out: set CONTEXT_REGISTRY_DATABASE=postgresql://… and CONTEXT_REGISTRY_BLOBS=s3://BUCKET
# (+ CONTEXT_REGISTRY_S3_ENDPOINT and AWS_* credentials); /data then only holds uploads in
# flight, and any number of containers can serve (deploy/docker-compose.yml).
FROM python:3.12-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app
COPY pyproject.toml README.md ./
COPY context_cli ./context_cli
COPY registry ./registry
COPY registry_server ./registry_server
# The `server` extra adds psycopg 3 (+ pool) and boto3, imported only when configured.
RUN pip install ".[server]" \
 && useradd --system --uid 10001 --home-dir /data registry \
 && mkdir -p /data && chown registry /data

USER registry
VOLUME ["/data"]
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s \
  CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8080/health', timeout=4)"]

# Several processes may share /data (commits take SQLite's write lock) or a database and a
# bucket (commits take PostgreSQL advisory locks). One JSON access-log line per request on stderr.
ENTRYPOINT ["context-registry-server", "--data", "/data", "--host", "0.0.0.0", "--port", "8080"]
