#!/bin/sh
# below.sh FILE VALUE_COLUMN LIMIT_COLUMN: the header and every row of the CSV FILE whose VALUE_COLUMN is below
# its LIMIT_COLUMN (both numeric), then "N of M rows below". Plain CSV only: no quoted commas.
set -eu
if [ "$#" -ne 3 ]; then
  echo "usage: below.sh FILE VALUE_COLUMN LIMIT_COLUMN" >&2
  exit 2
fi
awk -F, -v value="$2" -v limit="$3" '
  NR == 1 {
    for (i = 1; i <= NF; i++) { if ($i == value) v = i; if ($i == limit) l = i }
    if (!v || !l) { print "no column " (v ? limit : value) " in the header" > "/dev/stderr"; exit 2 }
    print; next
  }
  { rows++ }
  $v + 0 < $l + 0 { print; below++ }
  END { if (v && l) printf "%d of %d rows below\n", below, rows }
' "$1"
