#!/usr/bin/env bash
# Install Debian's chromium for the report's headless-browser test, only when it is missing.
# Needs root (CI runs as root); does nothing when a chromium is already on PATH.
set -euo pipefail

if command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1; then
  echo "install-chromium: $(command -v chromium || command -v chromium-browser) already installed"
  exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
  echo "install-chromium: no apt-get here; install chromium yourself (the browser test will skip)" >&2
  exit 1
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  SUDO="sudo"
fi

export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# no-install-recommends: the headless test needs neither a desktop nor extra fonts
$SUDO apt-get install -y -qq --no-install-recommends chromium
echo "install-chromium: installed $(chromium --version 2>/dev/null | head -n 1)"
