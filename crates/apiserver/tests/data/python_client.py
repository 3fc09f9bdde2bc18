"""The official Python client against the embedded server: CRUD, paging, watch, server-side
apply and logs. Run by tests/python_client.rs with KUBECONFIG set; prints one line per check
and exits non-zero on the first failure."""
import sys
import time

from kubernetes import client, config, watch
from kubernetes.dynamic import DynamicClient

config.load_kube_config()
v1 = client.CoreV1Api()
apps = client.AppsV1Api()
ns = "default"


def check(name, cond, detail=""):
    if not cond:
        print(f"FAIL {name}: {detail}")
        sys.exit(1)
    print(f"ok {name}")


# CRUD
cm = v1.create_namespaced_config_map(ns, {"metadata": {"name": "py"}, "data": {"a": "1"}})
check("create", cm.data == {"a": "1"} and cm.metadata.uid, cm)
got = v1.read_namespaced_config_map("py", ns)
check("read", got.metadata.uid == cm.metadata.uid)
v1.patch_namespaced_config_map("py", ns, {"data": {"b": "2"}})
got = v1.read_namespaced_config_map("py", ns)
check("patch", got.data == {"a": "1", "b": "2"}, got.data)
got.data["c"] = "3"
replaced = v1.replace_namespaced_config_map("py", ns, got)
check("replace", replaced.data["c"] == "3")
try:
    v1.replace_namespaced_config_map("py", ns, got)
    check("conflict", False, "a stale resourceVersion was accepted")
except client.ApiException as e:
    check("conflict", e.status == 409, e.status)

# Paging with a label selector
for i in range(7):
    v1.create_namespaced_config_map(
        ns, {"metadata": {"name": f"page-{i}", "labels": {"set": "p"}}, "data": {"i": str(i)}}
    )
names, token, pages = [], None, 0
while True:
    page = v1.list_namespaced_config_map(ns, label_selector="set=p", limit=3, _continue=token)
    pages += 1
    names += [c.metadata.name for c in page.items]
    token = page.metadata._continue
    if not token:
        break
check("paging", names == [f"page-{i}" for i in range(7)] and pages == 3, (names, pages))

# Watch from a resourceVersion
rv = v1.list_namespaced_config_map(ns).metadata.resource_version
v1.create_namespaced_config_map(ns, {"metadata": {"name": "watched"}})
v1.delete_namespaced_config_map("watched", ns)
seen = []
w = watch.Watch()
for event in w.stream(
    v1.list_namespaced_config_map, ns, resource_version=rv, timeout_seconds=10
):
    if event["object"].metadata.name == "watched":
        seen.append(event["type"])
    if seen == ["ADDED", "DELETED"]:
        w.stop()
check("watch", seen == ["ADDED", "DELETED"], seen)

# Server-side apply through the dynamic client
dyn = DynamicClient(client.ApiClient())
cms = dyn.resources.get(api_version="v1", kind="ConfigMap")
body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "applied"}, "data": {"k": "v"}}
applied = cms.server_side_apply(body=body, name="applied", namespace=ns, field_manager="py")
managers = [m.manager for m in applied.metadata.managedFields]
check("apply", applied.data.k == "v" and "py" in managers, managers)

# A Deployment becomes ready; its pod's log is readable
apps.create_namespaced_deployment(
    ns,
    {
        "metadata": {"name": "pyweb"},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "pyweb"}},
            "template": {
                "metadata": {"labels": {"app": "pyweb"}},
                "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]},
            },
        },
    },
)
pod = None
for _ in range(100):
    pods = v1.list_namespaced_pod(ns, label_selector="app=pyweb").items
    running = [p for p in pods if p.status and p.status.phase == "Running"]
    if running:
        pod = running[0]
        break
    time.sleep(0.2)
check("pods", pod is not None)
log = v1.read_namespaced_pod_log(pod.metadata.name, ns)
check("logs", "container web started" in log, log)
dep = apps.read_namespaced_deployment("pyweb", ns)
check("deployment defaults", dep.spec.strategy.type == "RollingUpdate" and dep.spec.revision_history_limit == 10)

# Delete
status = v1.delete_namespaced_config_map("py", ns)
status = status if isinstance(status, dict) else status.to_dict()
check("delete", status.get("status") == "Success" and status.get("kind") == "Status", status)
try:
    v1.read_namespaced_config_map("py", ns)
    check("gone", False)
except client.ApiException as e:
    check("gone", e.status == 404, e.status)
print("python client: all checks passed")
