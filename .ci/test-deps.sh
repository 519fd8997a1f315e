#!/usr/bin/env bash
# What the tests need beyond Rust and a compiler, installed and started when the caller is
# root: a Docker daemon and the Docker sandbox's test image (built from this machine's
# files, no registry) for the `--sandbox docker` tests; Debian's Chromium and its
# chromedriver for the browser UI's tests; the reference MCP servers, pinned, from npm and
# PyPI (installed, and in npm's and uv's caches); Debian's Go, for the Go tasks of
# evals/basic (a test runs every task's check); Debian's PostgreSQL server binaries for the
# database store's tests (each test starts its own cluster from them, in a temporary
# directory: the packaged service itself is never started).
# Each part that cannot be had says so loudly, and its tests skip (loudly) while the rest
# runs. Sourced by test.sh; defines `setup_test_deps`.

loud() { printf '\n!!!!!!!! %s !!!!!!!!\n\n' "$*" >&2; }
docker_answers() { timeout 10 docker info >/dev/null 2>&1; }

# Starts dockerd in the background and waits (at most 60 s) until it answers.
start_dockerd() {
  local log=/tmp/wright-ci-dockerd.log
  # shellcheck disable=SC2086 # the flags are words on purpose
  nohup setsid dockerd $1 >"$log" 2>&1 </dev/null &
  for _ in $(seq 60); do
    docker_answers && return 0
    kill -0 $! 2>/dev/null || break
    sleep 1
  done
  tail -n 5 "$log" >&2 || true
  kill $! 2>/dev/null || true
  return 1
}

setup_docker() {
  if ! command -v dockerd >/dev/null 2>&1 || ! command -v busybox >/dev/null 2>&1; then
    apt-get update -q >/dev/null &&
      DEBIAN_FRONTEND=noninteractive apt-get install -y -q docker.io busybox-static >/dev/null ||
      { loud "cannot install docker.io: the Docker sandbox tests will be SKIPPED"; return 0; }
  fi
  if ! docker_answers; then
    # Without iptables (some VMs lack the modules), containers still run; only
    # --network (which the tests do not use) would have no bridge.
    start_dockerd "" || start_dockerd "--iptables=false --ip6tables=false --bridge=none" ||
      { loud "dockerd did not start: the Docker sandbox tests will be SKIPPED"; return 0; }
  fi
  .ci/docker-test-image.sh || loud "the Docker test image could not be built: the Docker sandbox tests will FAIL"
}

# Chromium and chromedriver from Debian's packages (never a browser downloaded apart).
# The headless shell is what the `browser` tool starts when it is there (it starts faster).
setup_chromium() {
  if command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1 &&
    [ -x /usr/lib/chromium/chromium-headless-shell ]; then
    return 0
  fi
  apt-get update -q >/dev/null &&
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium chromium-driver chromium-headless-shell >/dev/null ||
    loud "cannot install chromium, chromium-driver and chromium-headless-shell: the browser UI tests will be SKIPPED"
}

# The reference MCP server the MCP tests call, pinned, from npm, where the sandbox (and
# the unprivileged user) can read it; its tests skip, loudly, only when it cannot be had.
MCP_EVERYTHING=@modelcontextprotocol/server-everything@2026.8.31
setup_mcp_server() {
  local dir=/opt/wright-test-mcp
  if [ -f "$dir/node_modules/@modelcontextprotocol/server-everything/package.json" ] &&
    grep -q '"version": "2026.8.31"' "$dir/node_modules/@modelcontextprotocol/server-everything/package.json"; then
    return 0
  fi
  if ! command -v npm >/dev/null 2>&1; then
    apt-get update -q >/dev/null &&
      DEBIAN_FRONTEND=noninteractive apt-get install -y -q nodejs npm >/dev/null ||
      { loud "cannot install npm: the MCP server tests will be SKIPPED"; return 0; }
  fi
  mkdir -p "$dir" &&
    npm install --prefix "$dir" --no-audit --no-fund "$MCP_EVERYTHING" >/dev/null &&
    chmod -R o+rX "$dir" ||
    loud "cannot install $MCP_EVERYTHING: the MCP server tests will be SKIPPED"
}

# Go from Debian's packages: without it the Go tasks of evals/basic are skipped, not judged.
setup_go() {
  command -v go >/dev/null 2>&1 && return 0
  apt-get update -q >/dev/null &&
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q golang-go >/dev/null ||
    loud "cannot install golang-go: the Go tasks of evals/basic will be SKIPPED"
}

# The same reference servers as a user's package caches hold them, for the tests of `npx
# PKG` and `uvx PKG` servers run offline: npm's cache after an `npm install` (with every
# dependency), uv's tools after `uv tool install`, uv's cache after a `uvx` — each in a
# directory of its own the tests point wright at. Filled from the registries here, so the
# tests need no network. The uv environments use Debian's python, which every user can run.
MCP_TIME=mcp-server-time==2026.10.19
setup_mcp_caches() {
  local dir=/opt/wright-test-mcp scratch
  command -v npm >/dev/null 2>&1 || return 0
  if [ ! -f "$dir/npm-cache/wright-filled" ]; then
    # As npx leaves it (its requests, every dependency), less the installed copy in
    # `_npx`, which wright would run directly: the tests are of the cache alone.
    scratch=$(mktemp -d)
    if (cd "$scratch" && npm exec --cache "$dir/npm-cache" --yes --no-audit --no-fund \
      --package="$MCP_EVERYTHING" -- true); then
      rm -rf "$dir/npm-cache/_npx" "$dir/npm-cache/_logs"
      touch "$dir/npm-cache/wright-filled"
    else
      loud "cannot fill npm's cache with $MCP_EVERYTHING: the npx-from-cache tests will FAIL"
    fi
    rm -rf "$scratch"
  fi
  if ! command -v uv >/dev/null 2>&1; then
    python3 -m pip install -q uv >/dev/null 2>&1 ||
      python3 -m pip install -q --break-system-packages uv >/dev/null 2>&1 ||
      { loud "cannot install uv: the uvx tests will FAIL"; return 0; }
    command -v pyenv >/dev/null 2>&1 && pyenv rehash
  fi
  export UV_PYTHON_DOWNLOADS=never
  if [ ! -x "$dir/uv-tools/mcp-server-time/bin/mcp-server-time" ]; then
    UV_TOOL_DIR="$dir/uv-tools" UV_TOOL_BIN_DIR="$dir/uv-bin" UV_CACHE_DIR="$dir/uv-install-cache" \
      uv tool install -q --python /usr/bin/python3 "$MCP_TIME" ||
      loud "cannot install $MCP_TIME with uv: the uvx tests will FAIL"
    rm -rf "$dir/uv-install-cache"
  fi
  if [ ! -f "$dir/uv-cache/wright-filled" ]; then
    UV_CACHE_DIR="$dir/uv-cache" uvx -q --python /usr/bin/python3 --from "$MCP_TIME" mcp-server-time --help >/dev/null &&
      touch "$dir/uv-cache/wright-filled" ||
      loud "cannot fill uv's cache with $MCP_TIME: the uvx-from-cache tests will FAIL"
  fi
  chmod -R o+rX "$dir"
}

# PostgreSQL's server programs (initdb, pg_ctl) from Debian's packages.
setup_postgresql() {
  compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null && return 0
  apt-get update -q >/dev/null &&
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q postgresql >/dev/null ||
    loud "cannot install postgresql: the database store tests will be SKIPPED"
}

setup_test_deps() {
  setup_postgresql
  setup_docker
  setup_chromium
  setup_mcp_server
  setup_go
  setup_mcp_caches
}
