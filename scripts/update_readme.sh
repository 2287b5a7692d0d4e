#!/usr/bin/env bash
# Rewrites the README's generated sections (the command list and the configuration reference)
# from the build's test_readme, which writes the expected text of each stale section to
# readme_<section>.md. Usage: scripts/update_readme.sh [build dir, default build]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$(cd "${1:-$root/build}" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
(cd "$work" && "$build/tests/test_readme" >/dev/null 2>&1) || true
/usr/bin/python3 - "$root/README.md" "$work" <<'PY'
import os, sys
readme, work = sys.argv[1], sys.argv[2]
text = open(readme).read()
for f in sorted(os.listdir(work)):
    if not (f.startswith("readme_") and f.endswith(".md")):
        continue
    name = f[len("readme_"):-len(".md")]
    begin, end = "<!-- %s:begin -->\n" % name, "<!-- %s:end -->" % name
    b, e = text.index(begin), text.index(end)
    text = text[:b + len(begin)] + open(os.path.join(work, f)).read() + text[e:]
    print("README: section '%s' regenerated" % name)
open(readme, "w").write(text)
PY
