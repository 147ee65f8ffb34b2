#!/usr/bin/env bash
# Installs httpbin + gunicorn (pinned in requirements.txt beside this file) into a venv at
# ${CARGO_TARGET_DIR:-<repo>/target}/httpbin-venv, where the conformance harness finds it
# (tickwire-conformance's Httpbin::venv). Idempotent: reinstalls only when the pins change.
# Needs python3 with the venv module (Debian: python3-venv) and access to PyPI.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
target="${CARGO_TARGET_DIR:-$repo/target}"
venv="$target/httpbin-venv"
req="$here/requirements.txt"
python="${PYTHON:-python3}"

if [ -x "$venv/bin/gunicorn" ] && cmp -s "$req" "$venv/requirements.txt"; then
  echo "httpbin venv up to date: $venv"
  exit 0
fi
rm -rf "$venv"
mkdir -p "$target"
"$python" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$req"
# Smoke check: the app imports and gunicorn runs.
"$venv/bin/python" -c 'import httpbin; httpbin.app' 2>/dev/null
"$venv/bin/gunicorn" --version
cp "$req" "$venv/requirements.txt"
echo "httpbin venv ready: $venv"
