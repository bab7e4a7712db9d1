#!/usr/bin/env bash
# Builds helm into $1 (default ./bin) from the Go module go.mod pins (helm.sh/helm/v3, a `tool`
# of this module), stamped as helm's own Makefile stamps a release: its version, and the
# Kubernetes version `helm template` and `helm lint` assume (from the client-go it pins).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="$(mkdir -p "${1:-$here/bin}" && cd "${1:-$here/bin}" && pwd)"
go="${GO:-go}"
cd "$here"
helm_version="$("$go" list -m -f '{{.Version}}' helm.sh/helm/v3)"
client_go="$("$go" list -m -f '{{.Version}}' k8s.io/client-go)"  # v0.MINOR.PATCH
minor="${client_go#v0.}"
minor="${minor%%.*}"
ldflags="-s -w -X helm.sh/helm/v3/internal/version.version=$helm_version \
 -X helm.sh/helm/v3/internal/version.gitTreeState=clean"
for pkg in helm.sh/helm/v3/pkg/lint/rules helm.sh/helm/v3/pkg/chartutil; do
  ldflags="$ldflags -X $pkg.k8sVersionMajor=1 -X $pkg.k8sVersionMinor=$minor"
done
export GOFLAGS="${GOFLAGS:-} -buildvcs=false -trimpath"
start=$SECONDS
"$go" build -ldflags "$ldflags" -o "$out/helm" helm.sh/helm/v3/cmd/helm
echo "built helm $helm_version (Kubernetes 1.$minor) in $((SECONDS - start)) s"
