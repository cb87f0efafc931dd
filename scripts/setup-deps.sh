#!/usr/bin/env bash
# Installs the Debian packages the workbook needs, only those that are missing.
# Safe to run repeatedly: when everything is present it does nothing and makes no network call.
set -euo pipefail

packages=(
  cmake ninja-build g++            # build
  doctest-dev libfmt-dev nlohmann-json3-dev libcli11-dev   # C++ libraries
  pandoc python3 python3-matplotlib                          # report
  chromium                                                   # the report's PDF and its browser test
  libbenchmark-dev                                           # bench/
  clang                                                      # fuzz/ (libFuzzer)
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "setup: installing missing Debian packages: ${missing[*]}" >&2
if [ "$(id -u)" -eq 0 ]; then sudo=(); else sudo=(sudo); fi
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
