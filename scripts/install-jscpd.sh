#!/usr/bin/env bash
# Provides jscpd, the copy-paste detector `make lint` runs on src/ (scripts/check-structure.sh),
# pinned at one release: npm's `-E` installs exactly JSCPD_VERSION, never a newer one (newer
# releases may not install here).
#
# Usage: scripts/install-jscpd.sh
#   Prints the absolute path of the jscpd binary on the last line of stdout (messages go to
#   stderr). The package is cached in $SIZEUP_CACHE (default ~/.cache/sizeup)/jscpd-VERSION and
#   reused on later runs: the network is touched once. Exit 1 when npm is missing or the
#   registry cannot be reached (the caller then skips the check and says so).
set -euo pipefail

version=5.3.2
cache=${SIZEUP_CACHE:-${HOME:-/root}/.cache/sizeup}
dest="$cache/jscpd-$version"
bin="$dest/node_modules/.bin/jscpd"

say() { echo "install-jscpd: $*" >&2; }

if [ -x "$bin" ] && [ "$("$bin" --version 2>/dev/null)" = "jscpd $version" ]; then
    echo "$bin"
    exit 0
fi
if ! command -v npm >/dev/null; then
    say "npm is not installed"
    exit 1
fi
mkdir -p "$dest"
say "installing jscpd@$version into $dest"
if ! timeout 300 npm install --prefix "$dest" -E --no-audit --no-fund --silent "jscpd@$version" >&2; then
    say "npm could not install jscpd@$version (registry unreachable?)"
    exit 1
fi
if [ "$("$bin" --version 2>/dev/null)" != "jscpd $version" ]; then
    say "the installed jscpd does not report version $version"
    exit 1
fi
echo "$bin"
