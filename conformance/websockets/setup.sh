#!/usr/bin/env bash
# Installs Python websockets (pinned in requirements.txt beside this file) into a venv at
# ${CARGO_TARGET_DIR:-<repo>/target}/websockets-venv, where the conformance tests find it
# (conformance/tests/deflate_websockets.rs). Idempotent: reinstalls only when the pins change.
# Needs python3 with the venv module (Debian: python3-venv) and access to PyPI.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
target="${CARGO_TARGET_DIR:-$repo/target}"
venv="$target/websockets-venv"
req="$here/requirements.txt"
python="${PYTHON:-python3}"

if [ -x "$venv/bin/python" ] && cmp -s "$req" "$venv/requirements.txt"; then
  echo "websockets venv up to date: $venv"
  exit 0
fi
rm -rf "$venv"
mkdir -p "$target"
"$python" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$req"
"$venv/bin/python" -c 'import websockets.extensions.permessage_deflate'
cp "$req" "$venv/requirements.txt"
echo "websockets venv ready: $venv"
