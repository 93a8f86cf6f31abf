#!/usr/bin/env bash
# `make test-k8s`: validates deploy/kubernetes offline — every object against the Kubernetes
# schemas bundled with kubernetes-validate (strict: unknown fields fail), and checkov's
# Kubernetes security checks with none failed (a skip would need a `checkov:skip=ID:reason`
# comment beside the resource; there are none). Each tool is first shown a broken manifest
# and must reject it, so a tool that silently checks nothing fails the target.
#
#   scripts/k8s-check.sh [KUBERNETES_VALIDATE CHECKOV]
#   (default .venv/bin/kubernetes-validate and .venv-checkov/bin/checkov, as make test-k8s installs them)
set -euo pipefail
cd "$(dirname "$0")/.."
VALIDATE=${1:-.venv/bin/kubernetes-validate}
CHECKOV=${2:-.venv-checkov/bin/checkov}
DIR=deploy/kubernetes
export BC_SKIP_MAPPING=TRUE CHECKOV_RUN_SCA_PACKAGE_SCAN_V2=false
KUBE_VERSION=${KUBE_VERSION:-1.30.0}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

mapfile -t manifests < <(ls "$DIR"/*.yaml | grep -v '/kustomization.yaml$')

# The broken twins: an unknown field, and a writable root filesystem running as root.
sed 's/terminationGracePeriodSeconds:/terminationGracePeriod:/' "$DIR/deployment.yaml" >"$TMP/unknown-field.yaml"
if "$VALIDATE" --strict --quiet -k "$KUBE_VERSION" "$TMP/unknown-field.yaml" >/dev/null 2>&1; then
  echo "kubernetes-validate accepted a Deployment with an unknown field" >&2; exit 1
fi
sed -e 's/readOnlyRootFilesystem: true/readOnlyRootFilesystem: false/' -e 's/runAsNonRoot: true/runAsNonRoot: false/' \
  "$DIR/deployment.yaml" >"$TMP/insecure.yaml"
if "$CHECKOV" -f "$TMP/insecure.yaml" --framework kubernetes --skip-download --quiet --compact >/dev/null 2>&1; then
  echo "checkov passed a Deployment with a writable root filesystem running as root" >&2; exit 1
fi

"$VALIDATE" --strict -k "$KUBE_VERSION" "${manifests[@]}"
"$CHECKOV" -d "$DIR" --framework kubernetes --skip-download --compact --quiet
echo "deploy/kubernetes: ${#manifests[@]} manifests valid for Kubernetes $KUBE_VERSION, no failed checkov check"
