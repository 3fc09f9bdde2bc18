#!/usr/bin/env python3
"""Assembles the Helm chart corpus of crates/helm/tests/corpus from public chart repositories.

Run by hand (not by CI); the result is committed as test data. Each source is a local Git
clone given by environment variable (a bare repository works); charts are copied from the
commit it is at, documentation and CI folders left out, and dependencies named in Chart.yaml
vendored into charts/ from the same set of sources (bitnami charts get bitnami/common this
way). A chart whose dependencies cannot all be found is left out. For every chart a values
file of our own, values-enabled.yaml, turns on each optional part its values.yaml switches off
with `enabled: false`.

    PROMETHEUS=~/src/prometheus-community-helm-charts GRAFANA=... BITNAMI=... ARGO=... \
      INGRESS_NGINX=... PODINFO=... CERT_MANAGER=... HELM=... \
      BJW_S=... HOME_OPS=clone1:clone2 HELM_BIN=path/to/helm scripts/helm-corpus.py

Commit the result with `git add -f crates/helm/tests/corpus`: some charts carry a .gitignore
of their own (kube-prometheus-stack ignores its vendored charts/*), which Helm does not read.
"""

import io
import os
import re
import shutil
import subprocess
import sys
import tarfile

import yaml

OUT = os.path.join(os.path.dirname(__file__), "..", "crates", "helm", "tests", "corpus")

# label, environment variable, path of the charts folder in the repository, repository URLs
# that name it in Chart.yaml dependencies.
SOURCES = [
    ("prometheus", "PROMETHEUS", "charts", ["https://prometheus-community.github.io/helm-charts"]),
    ("grafana", "GRAFANA", "charts", ["https://grafana.github.io/helm-charts"]),
    ("grafana-community", "GRAFANA_COMMUNITY", "charts", ["https://grafana-community.github.io/helm-charts"]),
    ("bitnami", "BITNAMI", "bitnami", ["oci://registry-1.docker.io/bitnamicharts", "https://charts.bitnami.com/bitnami"]),
    ("argo", "ARGO", "charts", ["https://argoproj.github.io/argo-helm"]),
    ("ingress-nginx", "INGRESS_NGINX", "charts", []),
    ("podinfo", "PODINFO", "charts", []),
    ("cert-manager", "CERT_MANAGER", "deploy/charts", ["https://charts.jetstack.io"]),
]

# The bitnami charts taken (the repository has 139; these are the most installed ones and the
# library chart they share).
BITNAMI = """airflow apache cassandra cert-manager common consul contour elasticsearch etcd
external-dns fluentd ghost gitea grafana haproxy harbor influxdb jenkins kafka keycloak kibana
kong kube-state-metrics logstash mariadb mariadb-galera memcached metallb metrics-server minio
mongodb mongodb-sharded mysql nats nginx nginx-ingress-controller node-exporter oauth2-proxy
opensearch phpmyadmin postgresql postgresql-ha prometheus rabbitmq redis redis-cluster
sealed-secrets solr spark tomcat valkey vault velero wordpress zookeeper drupal moodle odoo
thanos jaeger""".split()

SKIP_NAMES = {"README.md", "CHANGELOG.md", "ci", ".github", "Chart.lock"}
# argo-workflows carries its CRDs twice; the "full" copies (10 MB) are read only when
# crds.full is set, which the corpus's values never do.
SKIP_PATHS = ("files/crds/full/",)
SKIP_SUFFIXES = (".md", ".png", ".jpg", ".svg", ".gif")


def git(repo, *args):
    return subprocess.run(["git", "--git-dir", git_dir(repo), *args], check=True, capture_output=True).stdout


def git_dir(repo):
    dot = os.path.join(repo, ".git")
    return dot if os.path.exists(dot) else repo


def extract(repo, path, dest):
    data = git(repo, "archive", "HEAD", path)
    with tarfile.open(fileobj=io.BytesIO(data)) as t:
        for m in t.getmembers():
            rel = m.name[len(path):].lstrip("/")
            if not rel:
                continue
            parts = rel.split("/")
            if any(p in SKIP_NAMES for p in parts) or rel.endswith(SKIP_SUFFIXES) or rel.startswith(SKIP_PATHS):
                continue
            target = os.path.join(dest, rel)
            if m.isdir():
                os.makedirs(target, exist_ok=True)
            elif m.isfile():
                os.makedirs(os.path.dirname(target), exist_ok=True)
                with open(target, "wb") as f:
                    f.write(t.extractfile(m).read())


def chart_names(repo, folder):
    out = git(repo, "ls-tree", "-d", "--name-only", f"HEAD:{folder}").decode().split()
    return out


def find_dependency(dep, sources):
    repo_url = (dep.get("repository") or "").rstrip("/")
    for label, repo, folder, urls in sources:
        if repo_url in urls and dep["name"] in chart_names(repo, folder):
            return repo, f"{folder}/{dep['name']}"
    return None


def vendor(chart_dir, sources, depth=0):
    """Copies dependencies into charts/; False if one cannot be found."""
    with open(os.path.join(chart_dir, "Chart.yaml")) as f:
        meta = yaml.safe_load(f) or {}
    for dep in meta.get("dependencies") or []:
        target = os.path.join(chart_dir, "charts", dep["name"])
        if os.path.exists(target):
            continue
        repo_url = dep.get("repository") or ""
        if repo_url.startswith("file://"):
            src = os.path.normpath(os.path.join(chart_dir, repo_url[len("file://"):]))
            if not os.path.isdir(src):
                return False
            shutil.copytree(src, target)
            continue
        found = find_dependency(dep, sources)
        if not found or depth > 3:
            return False
        extract(found[0], found[1], target)
        if not os.path.exists(os.path.join(target, "Chart.yaml")) or not vendor(target, sources, depth + 1):
            return False
    return True


def enabled_overrides(values, path=()):
    """Every `enabled: false` under the values, set true."""
    out = {}
    if not isinstance(values, dict):
        return out
    for k, v in values.items():
        if k == "enabled" and v is False:
            out[k] = True
        elif isinstance(v, dict):
            sub = enabled_overrides(v, path + (k,))
            if sub:
                out[k] = sub
    return out


def main():
    sources = []
    for label, env, folder, urls in SOURCES:
        repo = os.environ.get(env)
        if not repo:
            sys.exit(f"set {env} to a clone of the {label} charts")
        sources.append((label, repo, folder, urls))
    charts_out = os.path.join(OUT, "charts")
    # Charts named quirk-* are written by hand and kept.
    os.makedirs(charts_out, exist_ok=True)
    for entry in os.listdir(charts_out):
        if not entry.startswith("quirk-"):
            path = os.path.join(charts_out, entry)
            shutil.rmtree(path) if os.path.isdir(path) and not os.path.islink(path) else os.remove(path)
    provenance = []
    skipped = []
    for label, repo, folder, _ in sources:
        commit = git(repo, "rev-parse", "HEAD").decode().strip()
        names = chart_names(repo, folder)
        if label == "bitnami":
            names = [n for n in names if n in BITNAMI and n != "common"]
        for name in names:
            dest = os.path.join(charts_out, f"{label}-{name}")
            extract(repo, f"{folder}/{name}", dest)
            if not os.path.exists(os.path.join(dest, "Chart.yaml")) or not vendor(dest, sources):
                shutil.rmtree(dest, ignore_errors=True)
                skipped.append(f"{label}/{name}")
                continue
            with open(os.path.join(dest, "values.yaml")) as f:
                values = yaml.safe_load(f) or {}
            overrides = enabled_overrides(values)
            with open(os.path.join(dest, "values-enabled.yaml"), "w") as f:
                f.write("# Written by scripts/helm-corpus.py: every `enabled: false` turned on.\n")
                f.write(yaml.safe_dump(overrides, sort_keys=True) if overrides else "{}\n")
            provenance.append(f"{label}-{name} {label} {commit} {folder}/{name}")
    helm = os.environ.get("HELM")
    if helm:
        # Helm's own test charts, as they are (some are broken on purpose).
        commit = "v4.1.4"
        data = subprocess.run(["git", "--git-dir", git_dir(helm), "archive", commit, "pkg/cmd/testdata/testcharts"],
                              check=True, capture_output=True).stdout
        with tarfile.open(fileobj=io.BytesIO(data)) as t:
            names = {m.name.split("/")[4] for m in t.getmembers() if len(m.name.split("/")) > 4}
        for name in sorted(names):
            if name.endswith((".prov",)):
                continue
            dest = os.path.join(charts_out, f"helm-{name}")
            path = f"pkg/cmd/testdata/testcharts/{name}"
            if name.endswith((".tgz", ".tar.gz")):
                blob = subprocess.run(["git", "--git-dir", git_dir(helm), "show", f"{commit}:{path}"],
                                      check=True, capture_output=True).stdout
                with open(dest, "wb") as f:
                    f.write(blob)
            else:
                tmp = subprocess.run(["git", "--git-dir", git_dir(helm), "archive", commit, path],
                                     check=True, capture_output=True).stdout
                with tarfile.open(fileobj=io.BytesIO(tmp)) as t:
                    for m in t.getmembers():
                        rel = m.name[len(path):].lstrip("/")
                        if not rel:
                            continue
                        target = os.path.join(dest, rel)
                        if m.isdir():
                            os.makedirs(target, exist_ok=True)
                        elif m.isfile():
                            os.makedirs(os.path.dirname(target), exist_ok=True)
                            with open(target, "wb") as f:
                                f.write(t.extractfile(m).read())
                        elif m.issym():
                            os.makedirs(os.path.dirname(target), exist_ok=True)
                            os.symlink(m.linkname, target)
            provenance.append(f"helm-{name} helm {commit} {path}")
    bjw_s = os.environ.get("BJW_S")
    if bjw_s:
        provenance.append(app_template(bjw_s))
    with open(os.path.join(OUT, "SOURCES"), "w") as f:
        f.write("# corpus chart, source, commit, path (written by scripts/helm-corpus.py)\n")
        f.write("\n".join(sorted(provenance)) + "\n")
    print(f"{len(provenance)} charts; left out (dependencies not found): {' '.join(skipped)}", file=sys.stderr)


def stable_under_helm(chart, values, runs=32):
    """Whether helm renders the same documents (in any order) every time: the library picks
    some names from Go's random map order (`keys | first`), which a comparison cannot follow."""
    helm = os.environ.get("HELM_BIN")
    if not helm:
        return True
    seen = set()
    for _ in range(runs):
        out = subprocess.run([helm, "template", chart, "-f", values], capture_output=True, text=True)
        text = out.stdout if out.returncode == 0 else out.stderr
        seen.add(tuple(sorted(text.split("\n---\n"))))
        if len(seen) > 1:
            return False
    return True


def app_template(repo):
    """bjw-s app-template with its common library in charts/, and as extra values files the
    `spec.values` of the HelmReleases that use it in public home-ops repositories (HOME_OPS:
    clones separated by `:`). The two values.schema.json files are left out: they refer to
    GitHub, which the tests cannot reach (tests/schema_refs.rs covers such references). The
    `route` part of each values file is dropped: the library names HTTPRoutes in Go's random
    map order, so helm's own output for it varies between runs."""
    name = "bjw-s-app-template"
    dest = os.path.join(OUT, "charts", name)
    extract(repo, "charts/other/app-template", dest)
    extract(repo, "charts/library/common", os.path.join(dest, "charts", "common"))
    for schema in (os.path.join(dest, "values.schema.json"),
                   os.path.join(dest, "charts", "common", "values.schema.json")):
        if os.path.exists(schema):
            os.remove(schema)
    for root, _, files in os.walk(dest):
        for f in files:
            path = os.path.join(root, f)
            if os.path.islink(path):
                os.remove(path)
    cases = os.path.join(OUT, "values-cases", name)
    shutil.rmtree(cases, ignore_errors=True)
    os.makedirs(cases)
    count = unstable = 0
    for clone in filter(None, os.environ.get("HOME_OPS", "").split(":")):
        label = os.path.basename(clone.rstrip("/").removesuffix("/repo"))
        listing = git(clone, "grep", "-l", "app-template", "HEAD", "--", "*.yaml").decode().split()
        for entry in listing:
            path = entry.split(":", 1)[1]
            try:
                docs = list(yaml.safe_load_all(git(clone, "show", entry)))
            except yaml.YAMLError:
                continue
            for doc in docs:
                if not isinstance(doc, dict) or doc.get("kind") != "HelmRelease":
                    continue
                values = (doc.get("spec") or {}).get("values")
                if not isinstance(values, dict):
                    continue
                values.pop("route", None)
                count += 1
                stem = re.sub(r"[^A-Za-z0-9]+", "-", f"{label}-{path}").strip("-").lower()
                target = os.path.join(cases, f"{stem}-{count}.yaml")
                with open(target, "w") as out:
                    yaml.safe_dump(values, out, sort_keys=False)
                if not stable_under_helm(dest, target):
                    os.remove(target)
                    unstable += 1
    commit = git(repo, "rev-parse", "HEAD").decode().strip()
    print(f"app-template: {count - unstable} values files ({unstable} left out: helm's output "
          "varies between runs beyond document order)", file=sys.stderr)
    return f"{name} bjw-s {commit} charts/other/app-template (+ charts/library/common)"


if __name__ == "__main__":
    main()
