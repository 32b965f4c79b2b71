#!/usr/bin/env bash
# Creates (once) the virtualenv the tests and the demo run in: the pinned Ray, pytest, grpcio,
# PyYAML (tests/e2e/requirements.txt), or, given another requirements file, that one's (the
# Makefile's tools venv: scripts/tool-requirements.txt). Re-installs only when the file changes.
set -euo pipefail
venv=${1:?usage: scripts/ray-venv.sh DIR [REQUIREMENTS]}
req=${2:-$(dirname "$0")/../tests/e2e/requirements.txt}
stamp="$venv/.installed"
want=$(sha256sum "$req" | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
    echo "ray-venv: $venv is up to date" >&2
    exit 0
fi
python3 -m venv "$venv"
"$venv/bin/pip" install -q --disable-pip-version-check -r "$req"
echo "$want" > "$stamp"
echo "ray-venv: installed $(grep -c '^[^#]' "$req") pinned requirements into $venv" >&2
