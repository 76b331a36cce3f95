#!/usr/bin/env bash
# Pins the Dockerfile's base images by digest: each `FROM image:tag` becomes
# `FROM image:tag@sha256:…` (the tag stays, for the reader; the digest is what is pulled), so
# a moved tag cannot change the image. Run it on a machine that reaches the registries, with
# any of `docker buildx`, `crane` or `skopeo`; review the diff and commit it. Run it again to
# move to newer bases (an already pinned line is resolved again from its tag).
#
#   scripts/pin-image-bases.sh [Dockerfile]
set -euo pipefail
cd "$(dirname "$0")/.."
dockerfile="${1:-Dockerfile}"

digest_of() {
    local image="$1"
    if command -v crane >/dev/null 2>&1; then
        crane digest "$image"
    elif command -v skopeo >/dev/null 2>&1; then
        skopeo inspect --format '{{.Digest}}' "docker://$image"
    elif docker buildx version >/dev/null 2>&1; then
        docker buildx imagetools inspect "$image" --format '{{json .Manifest.Digest}}' | tr -d '"'
    else
        echo "pin-image-bases: none of crane, skopeo or docker buildx is installed: install one (and reach the registry) to resolve $image" >&2
        return 1
    fi
}

pinned="$(mktemp)"
trap 'rm -f "$pinned"' EXIT
while IFS= read -r line; do
    if [[ "$line" =~ ^FROM[[:space:]]+([^[:space:]@]+)(@sha256:[0-9a-f]+)?(.*)$ ]]; then
        image="${BASH_REMATCH[1]}"
        rest="${BASH_REMATCH[3]}"
        digest="$(digest_of "$image")"
        if [[ ! "$digest" =~ ^sha256:[0-9a-f]{64}$ ]]; then
            echo "pin-image-bases: $image resolved to '$digest', not a sha256 digest" >&2
            exit 1
        fi
        echo "FROM $image@$digest$rest" >>"$pinned"
        echo "$image -> $digest" >&2
    else
        printf '%s\n' "$line" >>"$pinned"
    fi
done <"$dockerfile"
cat "$pinned" >"$dockerfile"
