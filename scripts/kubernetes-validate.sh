#!/usr/bin/env bash
# kubernetes-validate for headroom's manifest tests: the PyPI package that bundles the official
# Kubernetes OpenAPI schemas (as JSON Schema, per Kubernetes version) and validates offline,
# strict (unknown fields refused) with `--strict`.
#
#   scripts/kubernetes-validate.sh install
#       Finds the `kubernetes-validate` command; when it is missing, installs the pinned
#       version with pip. Prints the command's path. Exit 1 (with the reason) when it is
#       missing and cannot be installed.
set -euo pipefail

# The version the tests were written against: its schemas run from Kubernetes 1.25 to 1.37.
VERSION="1.37.0"

find_command() {
    local path
    for path in "$(command -v kubernetes-validate 2>/dev/null || true)" "$HOME/.local/bin/kubernetes-validate"; do
        if [[ -n "$path" && -x "$path" ]]; then
            echo "$path"
            return 0
        fi
    done
    return 1
}

install() {
    if path=$(find_command); then
        echo "$path"
        return 0
    fi
    local pip
    pip=$(command -v pip3 || command -v pip || true)
    if [[ -z "$pip" ]]; then
        echo "kubernetes-validate is not installed and there is no pip here: pip install kubernetes-validate==$VERSION" >&2
        return 1
    fi
    echo "installing kubernetes-validate $VERSION from PyPI" >&2
    "$pip" install --quiet --disable-pip-version-check "kubernetes-validate==$VERSION" >&2 || {
        echo "pip could not install kubernetes-validate==$VERSION (is PyPI reachable?)" >&2
        return 1
    }
    # pyenv's shims learn of a new command only when rehashed.
    if command -v pyenv >/dev/null 2>&1; then
        pyenv rehash >/dev/null 2>&1 || true
    fi
    find_command || {
        echo "kubernetes-validate was installed, and no kubernetes-validate command was found on PATH" >&2
        return 1
    }
}

case "${1:-}" in
    install) install ;;
    *) echo "usage: scripts/kubernetes-validate.sh install" >&2; exit 2 ;;
esac
