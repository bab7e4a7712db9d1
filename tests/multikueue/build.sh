#!/usr/bin/env bash
# Builds the binaries of the multikueue end-to-end test into $1 (default ./bin) from the Go
# modules go.mod pins: etcd, kube-apiserver, kube-controller-manager, kube-scheduler, Kueue,
# greensched's Kueue controllers and the test program: one module, so their shared packages
# compile once; and KWOK.
# The versions are stamped as the projects' release builds stamp them (Kueue and the
# Kubernetes components read their server's version for feature decisions).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="$(mkdir -p "${1:-$here/bin}" && cd "${1:-$here/bin}" && pwd)"
go="${GO:-go}"
cd "$here"
k8s_version="$("$go" list -m -f '{{.Version}}' k8s.io/kubernetes)"
kueue_version="$("$go" list -m -f '{{.Version}}' sigs.k8s.io/kueue)"
minor="${k8s_version#v1.}"
minor="${minor%%.*}"
vpkg=k8s.io/component-base/version
k8s_ldflags="-s -w -X $vpkg.gitVersion=$k8s_version -X $vpkg.gitMajor=1 -X $vpkg.gitMinor=$minor \
 -X $vpkg.gitTreeState=clean -X $vpkg.buildDate=2026-01-01T00:00:00Z"
export GOFLAGS="${GOFLAGS:-} -buildvcs=false -trimpath"
build() {  # build NAME PACKAGE LDFLAGS
  local start=$SECONDS
  "$go" build -ldflags "$3" -o "$out/$1" "$2"
  echo "built $1 in $((SECONDS - start)) s"
}
build etcd ./cmd/etcd "-s -w"
build kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver "$k8s_ldflags"
build kube-controller-manager k8s.io/kubernetes/cmd/kube-controller-manager "$k8s_ldflags"
build kube-scheduler k8s.io/kubernetes/cmd/kube-scheduler "$k8s_ldflags"
build kueue sigs.k8s.io/kueue/cmd/kueue "-s -w -X sigs.k8s.io/kueue/pkg/version.GitVersion=$kueue_version"
build greensched-multikueue-e2e ./e2e ""
# KWOK pins a newer Kubernetes client than kube-apiserver's, so it has its own module.
(cd kwok && build kwok sigs.k8s.io/kwok/cmd/kwok "-s -w")
build greensched-kueue greensched.io/kueue/cmd/greensched-kueue "-s -w"
