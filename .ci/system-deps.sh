#!/usr/bin/env bash
# Debian packages the tests use: Chromium (browser tests) and bubblewrap (the sandbox).
# Installed with apt-get when running as root; otherwise says clearly what is missing.
set -u
need=()
command -v chromium >/dev/null 2>&1 || need+=(chromium)
command -v chromedriver >/dev/null 2>&1 || need+=(chromium-driver)
command -v bwrap >/dev/null 2>&1 || need+=(bubblewrap)
[ ${#need[@]} -eq 0 ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing Debian packages: ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null && apt-get install -y -qq "${need[@]}" >/dev/null || {
    echo "WARNING: apt-get could not install ${need[*]}" >&2; }
fi
for tool in chromium bwrap; do
  command -v $tool >/dev/null 2>&1 || echo "MISSING: $tool — browser tests or sandbox layers will be skipped/reduced (install Debian package ${tool/bwrap/bubblewrap})" >&2
done
exit 0
