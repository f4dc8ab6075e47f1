# The registry server: `docker build -t context-registry . && docker run -p 8080:8080 \
#   -v registry-data:/data -e CONTEXT_REGISTRY_KEY=... context-registry`
# Package files and the index live in the /data volume; without a key, publishing is refused.
FROM python:3.12-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app
COPY pyproject.toml README.md ./
COPY context_cli ./context_cli
COPY registry ./registry
COPY registry_server ./registry_server
RUN pip install . \
 && useradd --system --uid 10001 --home-dir /data registry \
 && mkdir -p /data && chown registry /data

USER registry
VOLUME ["/data"]
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s \
  CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8080/health', timeout=4)"]

# One process, one worker: publishes commit under an in-process lock.
ENTRYPOINT ["context-registry-server", "--data", "/data", "--host", "0.0.0.0", "--port", "8080"]
