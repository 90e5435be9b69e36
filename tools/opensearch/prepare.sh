#!/usr/bin/env bash
# Fetch (via Maven Central, cached in ~/.m2) and assemble a single-node
# OpenSearch 2.19.1 with the k-NN plugin (lucene engine) -- no Docker.
#
#   tools/opensearch/prepare.sh          # idempotent; prints the node home last
#
# Node home: $MONGOMEM_OPENSEARCH_HOME or <repo>/.cache/opensearch.
# Java: $OPENSEARCH_JAVA_HOME, else $JAVA_HOME, else the `java` on PATH (17+).
# Set MONGOMEM_OPENSEARCH_FORCE=1 to rebuild the node home.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
OS_VERSION=2.19.1
KNN_VERSION=2.19.1.0
STAMP="opensearch=$OS_VERSION knn=$KNN_VERSION modules=lang-painless,analysis-common layout=1"

CACHE="${MONGOMEM_OPENSEARCH_HOME:-$REPO/.cache/opensearch}"
NODE_HOME="$CACHE/node"
MARKER="$NODE_HOME/.mongomem-ready"

log() { echo "[opensearch-prepare] $*" >&2; }

ready() { [[ -f "$MARKER" && "$(cat "$MARKER")" == "$STAMP" ]]; }

if [[ "${MONGOMEM_OPENSEARCH_FORCE:-0}" != 1 ]] && ready; then
  log "node already prepared at $NODE_HOME"
  echo "$NODE_HOME"
  exit 0
fi

# serialize concurrent runs (e.g. parallel test workers); re-check after the wait
mkdir -p "$CACHE"
if command -v flock >/dev/null; then
  exec 9>"$CACHE/.prepare.lock"
  flock 9
  if [[ "${MONGOMEM_OPENSEARCH_FORCE:-0}" != 1 ]] && ready; then
    log "node prepared by a concurrent run at $NODE_HOME"
    echo "$NODE_HOME"
    exit 0
  fi
fi

# --- java ------------------------------------------------------------------
if [[ -z "${OPENSEARCH_JAVA_HOME:-}" ]]; then
  if [[ -n "${JAVA_HOME:-}" && -x "${JAVA_HOME}/bin/java" ]]; then
    export OPENSEARCH_JAVA_HOME="$JAVA_HOME"
  else
    JAVA_BIN="$(command -v java || true)"
    [[ -n "$JAVA_BIN" ]] || { log "ERROR: no java on PATH and JAVA_HOME unset"; exit 1; }
    export OPENSEARCH_JAVA_HOME="$(dirname "$(dirname "$(readlink -f "$JAVA_BIN")")")"
  fi
fi
command -v mvn >/dev/null || { log "ERROR: mvn (Maven) not found on PATH"; exit 1; }
command -v unzip >/dev/null || { log "ERROR: unzip not found on PATH"; exit 1; }

ARTIFACTS="$CACHE/artifacts"
STAGE="$CACHE/node.staging.$$"
trap 'rm -rf "$STAGE"' EXIT

# --- fetch -----------------------------------------------------------------
log "fetching artifacts with Maven into $ARTIFACTS (cached in ~/.m2) ..."
rm -rf "$ARTIFACTS"
mvn -B -q -Dstyle.color=never -f "$HERE/pom.xml" \
    -Dos.artifacts="$ARTIFACTS" \
    package 2>&1 | sed -e 's/\x1b\[[0-9;]*m//g' -e '/^[[:space:]]*$/d' >&2
rm -rf "$HERE/target"

# --- assemble --------------------------------------------------------------
log "unpacking OpenSearch $OS_VERSION (integ-test-zip distribution) ..."
rm -rf "$STAGE"; mkdir -p "$STAGE"
unzip -q "$ARTIFACTS/opensearch-dist.zip" -d "$STAGE"
mv "$STAGE/opensearch-$OS_VERSION" "$STAGE/home"
H="$STAGE/home"

# Modules shipped only as jars on Maven Central: build the module folders
# (jar + dependencies + generated plugin-descriptor.properties) ourselves.
write_descriptor() { # dir name classname extended description
  cat > "$1/plugin-descriptor.properties" <<PROPS
description=$5
version=$OS_VERSION
name=$2
classname=$3
java.version=11
opensearch.version=$OS_VERSION
extended.plugins=$4
has.native.controller=false
PROPS
}
log "adding modules lang-painless, analysis-common ..."
mkdir -p "$H/modules/lang-painless" "$H/modules/analysis-common"
cp "$ARTIFACTS"/lang-painless/*.jar "$H/modules/lang-painless/"
write_descriptor "$H/modules/lang-painless" lang-painless org.opensearch.painless.PainlessPlugin "" \
  "An easy, safe and fast scripting language for OpenSearch"
cat > "$H/modules/lang-painless/plugin-security.policy" <<'POLICY'
grant {
  // needed to generate runtime classes
  permission java.lang.RuntimePermission "createClassLoader";
  // needed to find the classloader to load allowlisted classes from
  permission java.lang.RuntimePermission "getClassLoader";
};
POLICY
cp "$ARTIFACTS"/analysis-common/*.jar "$H/modules/analysis-common/"
write_descriptor "$H/modules/analysis-common" analysis-common org.opensearch.analysis.common.CommonAnalysisPlugin \
  lang-painless "Adds \"built in\" analyzers to OpenSearch."

log "installing plugin opensearch-knn $KNN_VERSION ..."
"$H/bin/opensearch-plugin" install --batch "file://$ARTIFACTS/opensearch-knn.zip" >&2

echo "$STAMP" > "$H/.mongomem-ready"
rm -rf "$NODE_HOME" "$ARTIFACTS"  # artifacts stay cached in ~/.m2
mv "$H" "$NODE_HOME"
log "ready: $NODE_HOME"
echo "$NODE_HOME"
