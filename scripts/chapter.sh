#!/bin/sh
# Regenerates docs/chapter.md's two generated sections from the code: the
# quick campaign's command list (bench chapter --quick --list, which
# docs/chapter_test.go checks for staleness) and the chapter.md a fresh
# `bench chapter --quick` writes, with its links into the campaign folder
# made plain text (the folder is not committed) and headings one level
# down. Usage: scripts/chapter.sh [OUT] (default a temporary folder).
set -eu
cd "$(dirname "$0")/.."
bin=$(mktemp -d)/bench
go build -o "$bin" ./cmd/bench
out=${1:-$(mktemp -d)/ch}
tmp=$(mktemp -d)
"$bin" chapter --quick --list > "$tmp/commands"
{ echo '```'; cat "$tmp/commands"; echo '```'; } > "$tmp/commands.md"
"$bin" chapter --quick --out "$out"
grep -v -e '^!\[' -e '^## Plots$' "$out/chapter.md" | sed -E -e 's/\[([^]]*)\]\((runs|plots)\/[^)]*\)/\1/g' -e 's/\[([^]]*)\]\(#runs\)/\1/g' -e 's/^#/##/' > "$tmp/output.md"
# splice FILE between <!-- begin NAME --> and <!-- end NAME --> of docs/chapter.md
splice() {
	awk -v name="$1" -v file="$2" '
		$0 == "<!-- begin " name " -->" { print; while ((getline l < file) > 0) print l; skip = 1; next }
		$0 == "<!-- end " name " -->" { skip = 0 }
		!skip { print }' docs/chapter.md > "$tmp/page" && mv "$tmp/page" docs/chapter.md
}
splice commands "$tmp/commands.md"
splice output "$tmp/output.md"
echo "docs/chapter.md regenerated from $out"
