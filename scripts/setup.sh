#!/usr/bin/env bash
# Installs everything the node needs on a fresh Debian/Ubuntu machine, then builds it:
#   system packages (Rust crates for the native addon, libsecp256k1, wrk for benches),
#   npm dependencies (from package-lock.json), the native addon and the TypeScript.
# Safe to re-run. Without root/apt the system step is skipped and the node runs on the JS crypto twin.
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES="librust-sha2-dev librust-sha3-dev librust-rayon-dev libsecp256k1-dev wrk chromium"
# h2load (gRPC over HTTP/2 load in bench/grpc.ts)
APT_PACKAGES="$APT_PACKAGES nghttp2-client"
# HAProxy (the fleet test test/fleet/haproxy-fleet.test.ts and bench/fleet.ts; deploy/haproxy.cfg)
APT_PACKAGES="$APT_PACKAGES haproxy"

have_pkgs() { dpkg -s $APT_PACKAGES >/dev/null 2>&1; }

if command -v apt-get >/dev/null 2>&1 && ! have_pkgs; then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
      echo "[setup] not root and no sudo: skipping system packages (native addon may not build)"; SUDO="skip"; fi
  fi
  if [ "$SUDO" != "skip" ]; then
    echo "[setup] installing system packages: $APT_PACKAGES"
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $APT_PACKAGES >/dev/null \
      || echo "[setup] WARNING: apt-get install failed; continuing (JS crypto twin will be used)"
  fi
fi

# npm install (not npm ci): it installs exactly the committed package-lock.json versions, but the
# registry this project uses serves no foreign-platform optional packages (e.g. @biomejs/cli-win32-x64),
# so the lock cannot list them and npm ci refuses the lock as "out of sync".
echo "[setup] npm install (from package-lock.json)"
npm install --no-audit --no-fund --loglevel=error

# The Hardhat oracle's project dependencies (the toolbox and its peers, pinned in its package-lock.json), from the
# npm registry: test/external/hardhat-sample.test.ts runs Hardhat's sample project against the dev node with them.
echo "[setup] npm install in test/external/hardhat-sample (Hardhat oracle)"
(cd test/external/hardhat-sample && npm install --no-audit --no-fund --loglevel=error)

echo "[setup] building the native addon"
npm run --silent build:native

echo "[setup] compiling TypeScript"
npm run --silent build
echo "[setup] done"
