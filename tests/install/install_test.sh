#!/usr/bin/env bash
# heed as a user sees it: installed into a prefix, or unpacked from its .deb, and used from the
# outside (tests/install/CMakeLists.txt runs each step as a ctest case):
#   install_test.sh prefix                  cmake --install into $WORK/prefix; the tree's files
#   install_test.sh headers                 every installed header compiles on its own
#   install_test.sh pkgconfig               a one-file program built with pkg-config's flags
#   install_test.sh examples                examples/ configured and built against the prefix
#   install_test.sh example NAME            one example run, its output checked
#   install_test.sh deb                     cpack -G DEB; the package unpacked, used, checked
# The environment names the build: BUILD (heed's build directory), SOURCE (the repository, for
# the examples/ and tiny data only), WORK (this test's scratch directory), VERSION, and the
# outside project's CXX, BUILD_TYPE and LAUNCHER (ccache, or empty); CMAKE and CPACK, the build's.
set -euo pipefail
: "${BUILD:?}" "${SOURCE:?}" "${WORK:?}" "${VERSION:?}" "${CXX:?}" "${BUILD_TYPE:?}"
LAUNCHER=${LAUNCHER:-}
CMAKE=${CMAKE:-cmake}
CPACK=${CPACK:-cpack}
prefix=$WORK/prefix
export OMP_NUM_THREADS=1

fail() {
  echo "install_test: $*" >&2
  exit 1
}

# expect_output WHAT PATTERN OUTPUT: OUTPUT must match the extended regex PATTERN.
expect_output() {
  grep -Eq -- "$2" <<<"$3" || fail "$1: expected /$2/ in:"$'\n'"$3"
}

# The installed tree PREFIX has what a user needs, and no header includes one that is missing.
check_tree() {
  local root=$1
  for f in include/heed/heed.h include/heed/version.h include/heed/nn/linear.h \
    lib/cmake/heed/heedConfig.cmake lib/cmake/heed/heedConfigVersion.cmake \
    lib/cmake/heed/heedTargets.cmake lib/pkgconfig/heed.pc \
    bin/train bin/infer bin/tokenize bin/report share/doc/heed/examples/CMakeLists.txt \
    share/doc/heed/configs/bert_mlm.yaml share/doc/heed/CHANGELOG.md; do
    [ -e "$root/$f" ] || fail "$root/$f is not installed"
  done
  ls "$root"/lib/libheed_train.* >/dev/null || fail "no libheed_train in $root/lib"
  local missing=0
  while IFS= read -r line; do
    local header=${line%%:*} included=${line#*\"}
    included=${included%%\"*}
    if [ ! -e "$root/include/$included" ]; then
      echo "install_test: $header includes $included, which is not installed" >&2
      missing=1
    fi
  done < <(grep -r '^#include "' "$root/include/heed" | sed "s|^$root/include/||")
  [ "$missing" = 0 ] || exit 1
  if grep -rEq '^#include "(base|autograd|io|nn|optim|data|decode|viz|train)/' "$root/include/heed"; then
    fail "an installed header still includes a repository path (not heed/...)"
  fi
  local version
  version=$("$root/bin/train" --version)
  [ "$version" = "train (heed) $VERSION" ] || fail "train --version printed '$version'"
  version=$("$root/bin/infer" --version)
  [ "$version" = "infer (heed) $VERSION" ] || fail "infer --version printed '$version'"
}

# Configures the examples project at SOURCE_DIR against PREFIX in BINARY_DIR and builds TARGET.
build_examples() {  # SOURCE_DIR PREFIX BINARY_DIR [TARGET]
  local source_dir=$1 prefix_path=$2 binary_dir=$3 target=${4:-all}
  rm -rf "$binary_dir"
  "$CMAKE" -S "$source_dir" -B "$binary_dir" -DCMAKE_PREFIX_PATH="$prefix_path" \
    -DCMAKE_CXX_COMPILER="$CXX" -DCMAKE_BUILD_TYPE="$BUILD_TYPE" \
    ${LAUNCHER:+-DCMAKE_CXX_COMPILER_LAUNCHER=$LAUNCHER} >"$binary_dir.log" 2>&1 ||
    { cat "$binary_dir.log"; fail "examples/ did not configure against $prefix_path"; }
  "$CMAKE" --build "$binary_dir" -j 2 --target "$target" >>"$binary_dir.log" 2>&1 ||
    { cat "$binary_dir.log"; fail "examples/ did not build against $prefix_path"; }
}

run_tiny_transformer() {  # BINARY_DIR STEPS
  local out
  out=$("$1/tiny_transformer" "$2")
  echo "$out"
  expect_output tiny_transformer "^loss fell from 2\.[0-9]+ to " "$out"
}

run_custom_op() {  # BINARY_DIR
  local out
  out=$("$1/custom_op")
  echo "$out"
  expect_output custom_op "^gradcheck: passed \([0-9]+ Jacobian entries\)$" "$out"
  expect_output custom_op "\(agree\)$" "$out"
}

# A tiny masked-LM run of the installed train, a classifier fine-tuned from it by the example,
# and the installed infer reading the example's checkpoint.
run_finetune_classifier() {  # BINARY_DIR
  local dir=$WORK/finetune out
  rm -rf "$dir"
  mkdir -p "$dir"
  (cd "$SOURCE" && "$prefix/bin/train" --config configs/tiny/bert_mlm.yaml \
    --set "train.output_dir=$dir/mlm" --set "tokenizer.vocab=$dir/mlm/vocab.txt" \
    --set train.max_steps=40 --set checkpoint.every_steps=40 --set eval.every_steps=0 \
    >"$dir/mlm.log" 2>&1) || { cat "$dir/mlm.log"; fail "train (installed) failed"; }
  # A model directory that is not there: one line naming it, and a failure.
  if out=$("$1/finetune_classifier" "$dir/none" "$SOURCE/tests/tiny_data/spam_train.tsv" \
    "$dir/classifier" 2>&1); then
    fail "finetune_classifier succeeded without a model directory"
  fi
  [ "$(wc -l <<<"$out")" = 1 ] && grep -q "$dir/none" <<<"$out" ||
    fail "finetune_classifier's error is not one line naming the directory: $out"
  out=$("$1/finetune_classifier" "$dir/mlm/checkpoint-40" "$SOURCE/tests/tiny_data/spam_train.tsv" \
    "$dir/classifier" 4)
  echo "$out"
  expect_output finetune_classifier "^loaded [0-9]+ tensors; new: 4 \(the head\)" "$out"
  expect_output finetune_classifier "^epoch 4  loss [0-9.]+  train accuracy 0\.9[0-9]+$" "$out"
  grep -q "\"heed_version\": \"$VERSION\"" "$dir/classifier/config.json" ||
    fail "$dir/classifier/config.json does not record heed_version $VERSION"
  out=$("$prefix/bin/infer" classify --checkpoint "$dir/classifier" \
    --text "win a free prize now, call to claim your cash")
  echo "$out"
  # Both classes with their probabilities, the most probable first: spam, for a text like that.
  expect_output "infer classify" "^spam 0\.[0-9]{4}$" "$(sed -n 1p <<<"$out")"
  expect_output "infer classify" "^ham 0\.[0-9]{4}$" "$(sed -n 2p <<<"$out")"
}

case "${1:-}" in
  prefix)
    rm -rf "$prefix"
    "$CMAKE" --install "$BUILD" --prefix "$prefix" >"$WORK/install.log" ||
      { cat "$WORK/install.log"; fail "cmake --install failed"; }
    check_tree "$prefix"
    du -sh "$prefix"
    ;;
  headers)
    # <heed/heed.h> alone, and each stable header (those heed.h includes, docs/api.md) alone:
    # one translation unit each, #include <heed/...> and nothing else, with the flags heed.pc
    # gives (the compiler only parses: whether the header stands alone is the question). The
    # internal headers are covered by the prefix case's check that everything included is
    # installed; compiling all ~150 alone takes minutes.
    export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
    flags=$(pkg-config --cflags heed)
    export CXX flags
    headers=$({ echo heed/heed.h; sed -n 's|^#include "\(heed/.*\.h\)"$|\1|p' "$prefix/include/heed/heed.h"; })
    [ "$(wc -l <<<"$headers")" -gt 30 ] || fail "heed.h includes too few headers: $headers"
    xargs -P 2 -I{} sh -c 'echo "#include <{}>" | $CXX $flags -fsyntax-only -x c++ - ||
                          { echo "install_test: <{}> does not compile on its own" >&2; exit 255; }' <<<"$headers"
    echo "$(wc -l <<<"$headers") headers compile on their own: heed.h and the stable ones"
    ;;
  pkgconfig)
    export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
    [ "$(pkg-config --modversion heed)" = "$VERSION" ] || fail "pkg-config --modversion heed"
    # shellcheck disable=SC2046  # the flags are words
    "$CXX" -O1 "$SOURCE/tests/install/pkgconfig_probe.cpp" -o "$WORK/pkgconfig_probe" \
      $(pkg-config --cflags --libs heed) || fail "a program did not build with pkg-config's flags"
    # A prefix outside the loader's paths: with shared libraries (BUILD_SHARED_LIBS) the program
    # finds them through LD_LIBRARY_PATH, as it would any library installed there (heed.pc adds
    # no rpath, as Debian's .pc files do not).
    out=$(LD_LIBRARY_PATH="$prefix/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$WORK/pkgconfig_probe")
    echo "$out"
    expect_output pkgconfig_probe "^heed $VERSION$" "$out"
    # The tasks register themselves from objects no code calls: they must have been linked.
    expect_output pkgconfig_probe "^tasks: mlm distill clm seq2seq span_corruption classification token_classification$" "$out"
    ;;
  examples)
    build_examples "$SOURCE/examples" "$prefix" "$WORK/examples"
    echo "examples/ built against $prefix"
    ;;
  example)
    case "${2:-}" in
      tiny_transformer) run_tiny_transformer "$WORK/examples" 150 ;;
      custom_op) run_custom_op "$WORK/examples" ;;
      finetune_classifier) run_finetune_classifier "$WORK/examples" ;;
      *) fail "unknown example '${2:-}'" ;;
    esac
    ;;
  deb)
    # The package as cpack makes it, then used from where dpkg-deb unpacks it: its own copy of
    # examples/, no source tree.
    deb=$WORK/deb
    rm -rf "$deb"
    mkdir -p "$deb"
    "$CPACK" -G DEB --config "$BUILD/CPackConfig.cmake" -B "$deb" >"$WORK/cpack.log" 2>&1 ||
      { cat "$WORK/cpack.log"; fail "cpack -G DEB failed"; }
    package=$deb/heed_${VERSION}_amd64.deb
    [ -f "$package" ] || fail "cpack made no $package: $(ls "$deb")"
    du -h "$package"
    depends=$(dpkg-deb -f "$package" Depends)
    for needed in libdnnl2 libfmt9 libyaml-cpp0.7 libicu72 libsentencepiece0 libssl3 libgomp1 \
      libdnnl-dev libfmt-dev libyaml-cpp-dev nlohmann-json3-dev libicu-dev libsentencepiece-dev \
      libssl-dev; do
      grep -Eq "(^|, )$needed(,| |$)" <<<"$depends" || fail "Depends lacks $needed: $depends"
    done
    # Every dependency is a package apt knows (a simulated install resolves them all).
    apt-get install -s "$package" >"$deb/apt.log" 2>&1 ||
      { cat "$deb/apt.log"; fail "apt-get cannot resolve the package's dependencies"; }
    dpkg-deb -x "$package" "$deb/root"
    check_tree "$deb/root/usr"
    # The packaged train runs a shipped tiny config.
    (cd "$SOURCE" && "$deb/root/usr/bin/train" --config configs/tiny/gpt_lm.yaml \
      --set "train.output_dir=$deb/gpt" --set "tokenizer.vocab=$deb/gpt/vocab.txt" \
      --set train.max_steps=10 --set schedule.warmup_steps=2 --set eval.every_steps=0 \
      --set checkpoint.every_steps=10 >"$deb/train.log" 2>&1) ||
      { cat "$deb/train.log"; fail "the packaged train failed"; }
    [ -f "$deb/gpt/checkpoint-10/config.json" ] || fail "the packaged train wrote no checkpoint"
    # One example is enough to show that find_package(heed) works from the package; the prefix
    # cases build and run all three.
    build_examples "$deb/root/usr/share/doc/heed/examples" "$deb/root/usr" "$deb/examples" \
      tiny_transformer
    run_tiny_transformer "$deb/examples" 100
    ;;
  *)
    fail "usage: install_test.sh prefix|headers|pkgconfig|examples|example NAME|deb"
    ;;
esac
