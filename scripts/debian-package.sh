#!/usr/bin/env bash
# Installs a Debian package for headroom's tests (as root, with apt-get), or says why it
# cannot: what scripts/prometheus.sh and scripts/chromium.sh share.
#
#   scripts/debian-package.sh PACKAGE WHAT
#       WHAT names the program in messages ("Prometheus"). Exit 1, with the reason, when it
#       cannot be installed here.
set -euo pipefail
package="$1"
what="$2"
if [[ $(id -u) -ne 0 ]]; then
    echo "$what is not installed and this is not root: install the distribution's $package package (apt-get install $package)" >&2
    exit 1
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "$what is not installed and there is no apt-get here: install the distribution's $what package" >&2
    exit 1
fi
echo "installing $what from the distribution's packages" >&2
if ! DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$package" >&2; then
    DEBIAN_FRONTEND=noninteractive apt-get update >&2 || true
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$package" >&2 || {
        echo "apt-get could not install $package" >&2
        exit 1
    }
fi
