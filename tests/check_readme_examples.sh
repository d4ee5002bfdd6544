#!/usr/bin/env bash
# The README shows docs/examples/example.{c,cpp} verbatim (the install test compiles those
# files): each fenced block after "<!-- example: FILE -->" must equal FILE.
set -euo pipefail
root=$1
status=0
for f in docs/examples/example.c docs/examples/example.cpp docs/examples/training.cpp; do
  block=$(awk -v tag="<!-- example: $f -->" '
    $0 == tag {found=1; next}
    found && /^```/ && !open {open=1; next}
    found && open && /^```/ {exit}
    found && open {print}' "$root/README.md")
  if [[ "$block" != "$(cat "$root/$f")" ]]; then
    echo "README.md's block for $f differs from the file"
    status=1
  fi
done
[[ $status -eq 0 ]] && echo "README examples match docs/examples"
exit $status
