#!/usr/bin/env python3
"""Generate the protobuf field table of the built-in Kubernetes types.

kubectl's typed commands (`kubectl create namespace|configmap|secret|deployment …`) send
Kubernetes protobuf. The server decodes it with a table that maps, for every built-in type, each
protobuf field number to the JSON field name and its wire type.

Field numbers come from the `k8s-pb` crate (prost code generated from Kubernetes' .proto files),
read from the local cargo registry; JSON names come from the committed OpenAPI table.

Go's struct tags add what the .proto files do not say: which fields are pointers or written by
Go's JSON even when zero (an explicit `0`/`false`/`""` is kept for them, dropped otherwise, as
Go's JSON encoding would), which use the JSON name from the `json` tag, and which are embedded
inline (`VolumeSource` in `Volume`, `IngressRuleValue` in `IngressRule`: their fields appear in
the parent's JSON).

Each row: field number -> [JSON name, wire kind, repeated (0/1), target definition, flags], flags
holding `z` (keep an explicit zero), `i` (inline) and `w` (the one repeated field of a named
slice such as `ExtraValue`: the message's JSON is that list).

Usage: scripts/gen-protobuf.py K8S_PB_SRC_DIR GO_SRC_DIR > crates/schema/data/protobuf.json
K8S_PB_SRC_DIR: the k8s-pb 0.9 `src` directory (`cargo fetch` a crate depending on k8s-pb = "0.9";
it lands in ~/.cargo/registry/src). GO_SRC_DIR: a directory holding checkouts of
github.com/kubernetes/{api,apimachinery,apiextensions-apiserver,kube-aggregator} under those
names.
"""
import glob
import json
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def find_src():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    return sys.argv[1], sys.argv[2]


GO_FIELD = re.compile(r'^\s*(?:(\w+)\s+)?(\*?[\w.\[\]*]+(?:\[[\w.]+\][\w.*]+)?)\s+`([^`]*)`')
TAG = re.compile(r'(\w+):"([^"]*)"')


def go_dir(go_root, prefix):
    """The Go package directory of a definition prefix such as io.k8s.api.core.v1."""
    rest = prefix[len("io.k8s."):].split(".")
    return os.path.join(go_root, *rest)


def go_structs(directory):
    """lower-case struct name -> {protobuf field number: (json name, flags)} from Go sources' struct tags."""
    out = {}
    for path in sorted(glob.glob(os.path.join(directory, "*.go"))):
        if path.endswith("_test.go"):
            continue
        text = open(path).read()
        for m in re.finditer(r'^type (\w+) struct \{\n(.*?)^\}', text, re.S | re.M):
            fields = {}
            for line in m.group(2).split("\n"):
                fm = GO_FIELD.match(line)
                if not fm:
                    continue
                name, ty, tags = fm.groups()
                tags = dict(TAG.findall(tags))
                pb = tags.get("protobuf")
                if not pb:
                    continue
                num = re.search(r',(\d+),', "," + pb + ",")
                if not num:
                    continue
                json_tag = tags.get("json", "")
                json_name, _, opts = json_tag.partition(",")
                flags = ""
                if name is None and json_name == "":
                    flags += "i"
                if ty.startswith("*") or "omitempty" not in opts.split(","):
                    flags += "z"
                fields[int(num.group(1))] = (json_name, flags)
            out[m.group(1).lower()] = fields
    return out


def module_prefix(segments):
    segs = list(segments)
    segs[0] = segs[0].replace("_", "-")
    return "io.k8s." + ".".join(segs)


ATTR = re.compile(r'#\[prost\(([^)]*)\)\]')


def parse_type(tystr, module):
    """Resolve the Rust type of a message field to (module segments, struct name)."""
    t = tystr.replace(" ", "").replace("\n", "").rstrip(",")
    for wrapper in ("::core::option::Option<", "::prost::alloc::vec::Vec<",
                    "::prost::alloc::boxed::Box<"):
        while t.startswith(wrapper):
            t = t[len(wrapper):-1].rstrip(",")
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
    src, go_root = find_src()
    go_cache = {}
    table = json.load(open(os.path.join(ROOT, "crates/schema/data/kubernetes.json")))
    defs = table["definitions"]
    by_lower = {}
    for name in defs:
        prefix, _, short = name.rpartition(".")
        by_lower[(prefix, short.lower())] = name
    out = {}
    candidates = {}
    for path in sorted(glob.glob(os.path.join(src, "**/mod.rs"), recursive=True)):
        module = os.path.relpath(os.path.dirname(path), src).split(os.sep)
        if module == ["."]:
            continue
        prefix = module_prefix(module)
        text = open(path).read()
        if prefix not in go_cache:
            go_cache[prefix] = go_structs(go_dir(go_root, prefix))
        go = go_cache[prefix]
        for m in re.finditer(r'pub struct (\w+) \{(\}|.*?\n\})', text, re.S):
            struct, body = m.group(1), m.group(2)
            def_name = by_lower.get((prefix, struct.lower()))
            # prost renames Go's initialisms (`JSONSchemaProps` -> `JsonSchemaProps`).
            go_fields = go.get(struct.lower(), {})
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
                go_json, flags = go_fields.get(tag, (None, ""))
                json_name = go_json or norm_props.get(rust_name.replace("_", "").lower())
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
                        fields[tag] = [json_name, "map", 0, "message:" + target, flags]
                    else:
                        fields[tag] = [json_name, "map", 0, vkind, flags]
                    continue
                kind = re.split(r'[\s,=]', attr.strip(), 1)[0]
                if kind == "message":
                    mod, name = parse_type(tystr, module)
                    target = by_lower.get((module_prefix(mod), name.lower()),
                                          module_prefix(mod) + "." + name)
                    fields[tag] = [json_name, "message", repeated, target, flags]

                else:
                    fields[tag] = [json_name, kind, repeated, "", flags]
            # A named slice (`type ExtraValue []string`) is a message with one repeated `items`
            # field; its JSON is that list. Its generated doc says `+protobuf.nullable=true`.
            doc = text[:m.start()].rsplit("\n\n", 1)[-1]
            if "+protobuf.nullable=true" in doc and list(fields) == [1] and fields[1][2] == 1:
                fields[1][4] += "w"
            key = def_name or f"{prefix}.{struct}"
            candidates[key] = {str(k): v for k, v in sorted(fields.items())}
            # Keep the types the server serves, plus the runtime envelope types and the types
            # embedded inline in them (they have no definition of their own).
            if def_name or prefix == "io.k8s.apimachinery.pkg.runtime":
                out[key] = candidates[key]
    # Messages without a definition that served types refer to: embedded inline structs and
    # named slices (`ExtraValue`), transitively.
    pending = [k for k in out]
    while pending:
        for field in out[pending.pop()].values():
            target = field[3].removeprefix("message:")
            if target and target not in out and target in candidates:
                out[target] = candidates[target]
                pending.append(target)
    w = sys.stdout.write
    w("{\n")
    w(",\n".join(json.dumps(k) + ":" + json.dumps(v, separators=(",", ":"))
                 for k, v in sorted(out.items())))
    w("\n}\n")


main()
