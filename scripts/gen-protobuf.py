#!/usr/bin/env python3
"""Generate the protobuf field table of the built-in Kubernetes types.

kubectl's typed commands (`kubectl create namespace|configmap|secret|deployment …`) send
Kubernetes protobuf. The server decodes it with a table that maps, for every built-in type, each
protobuf field number to the JSON field name and its wire type.

Field numbers come from the `k8s-pb` crate (prost code generated from Kubernetes' .proto files),
read from the local cargo registry; JSON names come from the committed OpenAPI table.

Usage: scripts/gen-protobuf.py [K8S_PB_SRC_DIR] > crates/schema/data/protobuf.json
(default: the k8s-pb 0.9 sources in ~/.cargo/registry; `cargo fetch` a crate that depends on
k8s-pb = "0.9" first if missing).
"""
import glob
import json
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def find_src():
    if len(sys.argv) > 1:
        return sys.argv[1]
    hits = sorted(glob.glob(os.path.expanduser("~/.cargo/registry/src/*/k8s-pb-0.9.*/src")))
    if not hits:
        sys.exit("k8s-pb 0.9 sources not found in ~/.cargo/registry; pass the src directory")
    return hits[-1]


def module_prefix(segments):
    segs = list(segments)
    segs[0] = segs[0].replace("_", "-")
    return "io.k8s." + ".".join(segs)


ATTR = re.compile(r'#\[prost\(([^)]*)\)\]')


def parse_type(tystr, module):
    """Resolve the Rust type of a message field to (module segments, struct name)."""
    t = tystr.replace(" ", "").replace("\n", "")
    for wrapper in ("::core::option::Option<", "::prost::alloc::vec::Vec<",
                    "::prost::alloc::boxed::Box<"):
        while t.startswith(wrapper):
            t = t[len(wrapper):-1]
    if t.startswith("::prost::alloc::collections::BTreeMap<"):
        inner = t[len("::prost::alloc::collections::BTreeMap<"):-1]
        t = inner.split(",", 1)[1].rstrip(",")
    parts = t.split("::")
    mod = list(module)
    while parts and parts[0] == "super":
        mod.pop()
        parts.pop(0)
    name = parts[-1]
    mod = mod + parts[:-1]
    return mod, name


def main():
    src = find_src()
    table = json.load(open(os.path.join(ROOT, "crates/schema/data/kubernetes.json")))
    defs = table["definitions"]
    by_lower = {}
    for name in defs:
        prefix, _, short = name.rpartition(".")
        by_lower[(prefix, short.lower())] = name
    out = {}
    for path in sorted(glob.glob(os.path.join(src, "**/mod.rs"), recursive=True)):
        module = os.path.relpath(os.path.dirname(path), src).split(os.sep)
        if module == ["."]:
            continue
        prefix = module_prefix(module)
        text = open(path).read()
        for m in re.finditer(r'pub struct (\w+) \{(.*?)\n\}', text, re.S):
            struct, body = m.group(1), m.group(2)
            def_name = by_lower.get((prefix, struct.lower()))
            fields = {}
            props = defs.get(def_name, {}).get("properties", {}) if def_name else {}
            norm_props = {p.lower().replace("_", ""): p for p in props}
            lines = body.split("\n")
            i = 0
            while i < len(lines):
                am = ATTR.search(lines[i])
                if not am:
                    i += 1
                    continue
                attr = am.group(1)
                i += 1
                decl = ""
                while i < len(lines):
                    decl += lines[i].strip()
                    i += 1
                    if decl.endswith(",") and decl.count("<") == decl.count(">"):
                        break
                dm = re.match(r'pub (?:r#)?(\w+):\s*(.*),$', decl)
                if not dm:
                    continue
                rust_name, tystr = dm.group(1), dm.group(2)
                tag = int(re.search(r'tag\s*=\s*"(\d+)"', attr).group(1))
                json_name = norm_props.get(rust_name.replace("_", "").lower())
                if json_name is None:
                    head, *rest = rust_name.split("_")
                    json_name = head + "".join(w[:1].upper() + w[1:] for w in rest)
                repeated = 1 if re.search(r'\brepeated\b', attr) else 0
                mapm = re.search(r'btree_map\s*=\s*"([^"]+)"', attr)
                if mapm:
                    _, vkind = [x.strip() for x in mapm.group(1).split(",")]
                    if vkind in ("message", "enumeration"):
                        mod, name = parse_type(tystr, module)
                        target = by_lower.get((module_prefix(mod), name.lower()),
                                              module_prefix(mod) + "." + name)
                        fields[tag] = [json_name, "map", 0, "message:" + target]
                    else:
                        fields[tag] = [json_name, "map", 0, vkind]
                    continue
                kind = re.split(r'[\s,=]', attr.strip(), 1)[0]
                if kind == "message":
                    mod, name = parse_type(tystr, module)
                    target = by_lower.get((module_prefix(mod), name.lower()),
                                          module_prefix(mod) + "." + name)
                    fields[tag] = [json_name, "message", repeated, target]
                else:
                    fields[tag] = [json_name, kind, repeated, ""]
            key = def_name or f"{prefix}.{struct}"
            # Keep the types the server serves, plus the runtime envelope types.
            if def_name or prefix == "io.k8s.apimachinery.pkg.runtime":
                out[key] = {str(k): v for k, v in sorted(fields.items())}
    w = sys.stdout.write
    w("{\n")
    w(",\n".join(json.dumps(k) + ":" + json.dumps(v, separators=(",", ":"))
                 for k, v in sorted(out.items())))
    w("\n}\n")


main()
