#!/usr/bin/env bash
# The README shows files of docs/examples verbatim (the install test compiles and runs them):
# each fenced block after a "<!-- example: FILE -->" line must equal FILE, and there must be some.
set -euo pipefail
root=$1
status=0
files=$(sed -n 's/^<!-- example: \(.*\) -->$/\1/p' "$root/README.md")
if [[ -z $files ]]; then
  echo "README.md has no <!-- example: FILE --> block"
  exit 1
fi
for f in $files; do
  block=$(awk -v tag="<!-- example: $f -->" '
    $0 == tag {found=1; next}
    found && /^```/ && !open {open=1; next}
    found && open && /^```/ {exit}
    found && open {print}' "$root/README.md")
  if [[ ! -f $root/$f ]]; then
    echo "README.md shows $f, which does not exist"
    status=1
  elif [[ "$block" != "$(cat "$root/$f")" ]]; then
    echo "README.md's block for $f differs from the file"
    status=1
  fi
done
[[ $status -eq 0 ]] && echo "README examples match docs/examples: $(echo $files)"
exit $status
