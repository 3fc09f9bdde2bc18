#!/usr/bin/env python3
"""Generate the built-in resource catalogue and type table from the Kubernetes OpenAPI v2 document.

Usage: scripts/gen-schema.py [PATH-TO-openapi-v2.json.gz] > crates/schema/data/kubernetes.json

The output keeps the structure the product needs (types, $refs, required fields, formats and the
x-kubernetes-* merge extensions) and drops all prose. Only stable API versions (v1, v2, ...) are
kept: a default kube-apiserver serves no alpha or beta API that is new since 1.24.
"""
import gzip
import json
import re
import sys

SRC = sys.argv[1] if len(sys.argv) > 1 else "../shared/kubernetes/openapi-v2-kubernetes-1.35.json.gz"

# kubectl's familiar short names and categories (they are not in the OpenAPI document).
SHORT_NAMES = {
    ("", "componentstatuses"): ["cs"], ("", "configmaps"): ["cm"], ("", "endpoints"): ["ep"],
    ("", "events"): ["ev"], ("", "limitranges"): ["limits"], ("", "namespaces"): ["ns"],
    ("", "nodes"): ["no"], ("", "persistentvolumeclaims"): ["pvc"],
    ("", "persistentvolumes"): ["pv"], ("", "pods"): ["po"], ("", "replicationcontrollers"): ["rc"],
    ("", "resourcequotas"): ["quota"], ("", "serviceaccounts"): ["sa"], ("", "services"): ["svc"],
    ("apiextensions.k8s.io", "customresourcedefinitions"): ["crd", "crds"],
    ("apps", "daemonsets"): ["ds"], ("apps", "deployments"): ["deploy"],
    ("apps", "replicasets"): ["rs"], ("apps", "statefulsets"): ["sts"],
    ("autoscaling", "horizontalpodautoscalers"): ["hpa"], ("batch", "cronjobs"): ["cj"],
    ("certificates.k8s.io", "certificatesigningrequests"): ["csr"],
    ("events.k8s.io", "events"): ["ev"], ("networking.k8s.io", "ingresses"): ["ing"],
    ("networking.k8s.io", "networkpolicies"): ["netpol"],
    ("networking.k8s.io", "ipaddresses"): ["ip"],
    ("policy", "poddisruptionbudgets"): ["pdb"], ("scheduling.k8s.io", "priorityclasses"): ["pc"],
    ("storage.k8s.io", "storageclasses"): ["sc"],
    ("storage.k8s.io", "volumeattributesclasses"): ["vac"],
}
CATEGORIES = {
    ("", "pods"): ["all"], ("", "replicationcontrollers"): ["all"], ("", "services"): ["all"],
    ("apps", "daemonsets"): ["all"], ("apps", "deployments"): ["all"],
    ("apps", "replicasets"): ["all"], ("apps", "statefulsets"): ["all"],
    ("autoscaling", "horizontalpodautoscalers"): ["all"], ("batch", "cronjobs"): ["all"],
    ("batch", "jobs"): ["all"],
    ("admissionregistration.k8s.io", "mutatingwebhookconfigurations"): ["api-extensions"],
    ("admissionregistration.k8s.io", "validatingwebhookconfigurations"): ["api-extensions"],
    ("admissionregistration.k8s.io", "validatingadmissionpolicies"): ["api-extensions"],
    ("admissionregistration.k8s.io", "validatingadmissionpolicybindings"): ["api-extensions"],
    ("admissionregistration.k8s.io", "mutatingadmissionpolicies"): ["api-extensions"],
    ("admissionregistration.k8s.io", "mutatingadmissionpolicybindings"): ["api-extensions"],
    ("apiextensions.k8s.io", "customresourcedefinitions"): ["api-extensions"],
    ("apiregistration.k8s.io", "apiservices"): ["api-extensions"],
}
# The order kube-apiserver lists its groups in (discovery priority).
GROUP_ORDER = [
    "", "apiregistration.k8s.io", "apps", "events.k8s.io", "authentication.k8s.io",
    "authorization.k8s.io", "autoscaling", "batch", "certificates.k8s.io", "networking.k8s.io",
    "policy", "rbac.authorization.k8s.io", "storage.k8s.io", "admissionregistration.k8s.io",
    "apiextensions.k8s.io", "scheduling.k8s.io", "coordination.k8s.io", "node.k8s.io",
    "discovery.k8s.io", "flowcontrol.apiserver.k8s.io", "resource.k8s.io",
]
VERB_OF_ACTION = {
    "get": "get", "list": "list", "post": "create", "put": "update", "patch": "patch",
    "delete": "delete", "deletecollection": "deletecollection", "watchlist": "watch",
}
STABLE = re.compile(r"^v[0-9]+$")


def strip(node):
    """Drop prose from a schema node, keeping every structural key."""
    if isinstance(node, list):
        return [strip(x) for x in node]
    if not isinstance(node, dict):
        return node
    out = {}
    for key, value in node.items():
        if key == "description":
            continue
        if key == "properties":
            out[key] = {name: strip(sub) for name, sub in value.items()}
        elif key == "x-kubernetes-group-version-kind":
            out[key] = value
        else:
            out[key] = strip(value)
    return out


def version_rank(v):
    m = re.match(r"^v([0-9]+)(?:(alpha|beta)([0-9]+))?$", v)
    major = int(m.group(1))
    stage = {"alpha": 0, "beta": 1, None: 2}[m.group(2)]
    minor = int(m.group(3) or 0)
    return (stage, major, minor)


def main():
    doc = json.load(gzip.open(SRC))
    resources = {}
    for path, item in doc["paths"].items():
        parts = path.strip("/").split("/")
        if parts[0] == "api" and len(parts) > 1:
            group, version, rest = "", parts[1], parts[2:]
        elif parts[0] == "apis" and len(parts) > 2:
            group, version, rest = parts[1], parts[2], parts[3:]
        else:
            continue
        if not STABLE.match(version) or group == "internal.apiserver.k8s.io":
            continue
        if rest[:1] == ["watch"]:
            rest = rest[1:]
        namespaced = rest[:1] == ["namespaces"] and len(rest) >= 3 and rest[1] == "{namespace}"
        if namespaced:
            rest = rest[2:]
        if not rest:
            continue
        plural = rest[0]
        sub = rest[2] if len(rest) >= 3 else None
        ops = {m: op for m, op in item.items() if m != "parameters"}
        if not ops:
            continue
        key = (group, version, plural)
        for method, op in ops.items():
            action = op.get("x-kubernetes-action")
            gvk = op.get("x-kubernetes-group-version-kind")
            if sub is None:
                res = resources.setdefault(key, {
                    "group": group, "version": version, "plural": plural, "namespaced": False,
                    "verbs": set(), "subresources": {},
                })
                if namespaced:
                    res["namespaced"] = True
                if gvk and "kind" not in res:
                    res["kind"] = gvk["kind"]
                if action in VERB_OF_ACTION:
                    res["verbs"].add(VERB_OF_ACTION[action])
            else:
                res = resources.setdefault(key, {
                    "group": group, "version": version, "plural": plural, "namespaced": False,
                    "verbs": set(), "subresources": {},
                })
                if namespaced:
                    res["namespaced"] = True
                s = res["subresources"].setdefault(sub, {"name": sub, "verbs": set()})
                if gvk:
                    s["group"], s["version"], s["kind"] = gvk["group"], gvk["version"], gvk["kind"]
                verb = {"get": "get", "put": "update", "patch": "patch", "post": "create",
                        "delete": "delete"}.get(method)
                if verb:
                    s["verbs"].add(verb)
    # The `namespaces` resource itself is cluster-scoped; its paths look namespaced to the loop above.
    for (g, v, p), res in resources.items():
        if g == "" and p == "namespaces":
            res["namespaced"] = False

    definitions = {}
    def_of_gvk = {}
    for name, schema in doc["definitions"].items():
        for gvk in schema.get("x-kubernetes-group-version-kind", []):
            def_of_gvk[(gvk["group"], gvk["version"], gvk["kind"])] = name

    verb_order = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]
    out_resources = []
    for (g, v, p), res in sorted(resources.items(), key=lambda kv: (
            GROUP_ORDER.index(kv[0][0]) if kv[0][0] in GROUP_ORDER else len(GROUP_ORDER),
            kv[0][0], [-x for x in version_rank(kv[0][1])], kv[0][2])):
        if "kind" not in res:
            print(f"skipping {g}/{v}/{p}: no kind", file=sys.stderr)
            continue
        entry = {
            "group": g, "version": v, "kind": res["kind"], "plural": p,
            "singular": res["kind"].lower(), "namespaced": res["namespaced"],
            "verbs": [x for x in verb_order if x in res["verbs"]],
        }
        if (g, p) in SHORT_NAMES:
            entry["shortNames"] = SHORT_NAMES[(g, p)]
        if (g, p) in CATEGORIES:
            entry["categories"] = CATEGORIES[(g, p)]
        subs = []
        for sname in sorted(res["subresources"]):
            s = res["subresources"][sname]
            se = {"name": sname}
            if "kind" in s:
                se.update(group=s["group"], version=s["version"], kind=s["kind"])
            se["verbs"] = [x for x in verb_order if x in s["verbs"]]
            subs.append(se)
        if subs:
            entry["subresources"] = subs
        definition = def_of_gvk.get((g, v, res["kind"]))
        if definition:
            entry["definition"] = definition
        out_resources.append(entry)

    # Keep every definition reachable from a kept resource (and its subresources) or from meta/v1.
    keep = set()
    def visit(name):
        if name in keep or name not in doc["definitions"]:
            return
        keep.add(name)
        refs = re.findall(r'"#/definitions/([^"]+)"', json.dumps(doc["definitions"][name]))
        for r in refs:
            visit(r)
    for e in out_resources:
        if "definition" in e:
            visit(e["definition"])
        for s in e.get("subresources", []):
            if "kind" in s:
                d = def_of_gvk.get((s["group"], s["version"], s["kind"]))
                if d:
                    visit(d)
    for name in doc["definitions"]:
        if name.startswith("io.k8s.apimachinery.pkg.apis.meta.v1.") or \
                name.startswith("io.k8s.apimachinery.pkg."):
            visit(name)
    for name in sorted(keep):
        definitions[name] = strip(doc["definitions"][name])

    w = sys.stdout.write
    w('{"generatedFrom":' + json.dumps(SRC.split("/")[-1]) + ',\n"resources":[\n')
    w(",\n".join(json.dumps(e, separators=(",", ":")) for e in out_resources))
    w('\n],\n"definitions":{\n')
    w(",\n".join(json.dumps(k) + ":" + json.dumps(v, separators=(",", ":"), sort_keys=True)
                 for k, v in definitions.items()))
    w("\n}}\n")


main()
