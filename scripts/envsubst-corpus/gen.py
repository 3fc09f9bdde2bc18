#!/usr/bin/env python3
"""Builds crates/kustomize/tests/data/flux-envsubst.json: inputs for Flux's envsubst and what
Flux's own Go package (github.com/fluxcd/pkg/envsubst) makes of them.

The inputs are the rows of Flux's test tables (TestExpand, TestExpandStrict, TestParse and the
funcs tests, the latter written as expansions) and a seeded random corpus built from the
operators and their edge cases. The outputs come from running oracle.go, compiled against a
checkout of fluxcd/pkg's envsubst directory:

    cp oracle.go <checkout>/envsubst/cmd/oracle/main.go
    (cd <checkout>/envsubst && go build -o /tmp/oracle ./cmd/oracle)
    python3 scripts/envsubst-corpus/gen.py /tmp/oracle

Rows where Go panics or produces invalid UTF-8 are left out (the test states this).
"""
import json
import random
import subprocess
import sys

ORACLE = sys.argv[1]
OUT = "crates/kustomize/tests/data/flux-envsubst.json"

A = "abcdEFGH28ij"
Z = "abcABC123ABCabc"
P = "/home/bozo/ideas/thoughts.for.today"


def case(table, text, vars=None, strict=False):
    return {"table": table, "input": text, "vars": vars or {}, "strict": strict}


upstream = []
# TestExpand (every lookup succeeds, as in the Go test).
for text, vars in [
    ("abcdEFGH28ij", {}),
    ("${#var01}", {"var01": A}),
    ("${var01^}", {"var01": A}),
    ("${var01^^}", {"var01": A}),
    ("${var01,}", {"var01": "ABCDEFGH28IJ"}),
    ("${var01,,}", {"var01": "ABCDEFGH28IJ"}),
    ("${path_name:11}", {"path_name": P}),
    ("${path_name:11:5}", {"path_name": P}),
    ("${var=xyz}", {"var": "abc"}),
    ("${var=xyz}", {}),
    ("something ${var=${default_var}}", {"default_var": "foo"}),
    ("foo: ${var=${default_var}-suffix}", {"default_var": "foo1"}),
    ("foo: ${var=prefix${default_var}-suffix}", {"default_var": "foo1"}),
    ("${var:=xyz}", {}),
    ("${stringZ/%abc/XYZ}", {"stringZ": Z}),
    ("${stringZ/#abc/XYZ}", {"stringZ": Z}),
    ("${stringZ//abc/xyz}", {"stringZ": Z}),
    ("${stringZ/abc/xyz}", {"stringZ": Z}),
    ("${filename#*.}", {"filename": "bash.string.txt"}),
    ("${filename#*/}", {"filename": "path/to/file"}),
    ("${filename#*/}", {"filename": "/path/to/file"}),
    ("${filename##*.}", {"filename": "bash.string.txt"}),
    ("${filename##*/}", {"filename": "path/to/file"}),
    ("${filename##*/}", {"filename": "/path/to/file"}),
    ("${filename%.*}", {"filename": "bash.string.txt"}),
    ("${filename%%.*}", {"filename": "bash.string.txt"}),
    ("${var=${var01^^}}", {"var01": A}),
    ("$${var01}", {"var01": A}),
    ("some text ${var01}$${var$${var01}$var01${var01}", {"var01": A}),
    ("something $${var=${default_var}}", {"default_var": "foo"}),
    ("${stringZ/\\//-}", {"stringZ": "foo/bar"}),
    ("${stringZ//\\//-}", {"stringZ": "foo/bar/baz"}),
    ("\\\\something ${var=${default_var}}", {"default_var": "foo"}),
    ("${stringZ/./}", {"stringZ": "foo.bar"}),
]:
    upstream.append(case("TestExpand", text, vars))

# TestExpandStrict.
for text, vars in [
    ("abcdEFGH28ij", {}),
    ("${foo}", {"foo": "bar"}),
    ("${foo}", {"foo": ""}),
    ("${missing}", {}),
    ("${missing:=default}", {"foo": "bar"}),
] + [
    (t, {})
    for t in [
        "${#missing}", "${missing^}", "${missing^^}", "${missing,}", "${missing,,}",
        "${missing:0}", "${missing:0:10}", "${missing/pattern/replacement}",
        "${missing//pattern/replacement}", "${missing/#pattern/replacement}",
        "${missing/%pattern/replacement}", "${missing#pattern}", "${missing##pattern}",
        "${missing%pattern}", "${missing%%pattern}", "${missing:-fallback}",
        "${missing:=assigned}", "${missing=assigned}",
    ]
]:
    upstream.append(case("TestExpandStrict", text, vars, strict=True))

# TestParse: the inputs; the test compares trees.
for text in [
    "text", "}text", "http://github.com", "$${string}", "$$string", "\\\\.\\pipe\\pipename",
    "${string}", "${string,}", "${string,,}", "${string^}", "${string^^}",
    "${string:position}", "${string:position:length}", "${string#substring}",
    "${string##substring}", "${string%substring}", "${string%%substring}",
    "${string/substring/replacement}", "${string//substring/replacement}",
    "${string/#substring/replacement}", "${string/%substring/replacement}",
    "${string=default}", "${string:=default}", "${string:-default}", "${string:?default}",
    "${string:+default}", "${#string}", "${string#$%:*{}", "hello ${#string} world",
    "\\\\ hello ${#string} world \\\\", "${string/\\/position/length}",
    "${string/\\/position\\\\/length}", "${string/position/\\/length}",
    "${string/position/\\/length\\\\}", "${string/position/\\/leng\\\\th}",
    "${string:${position}}", "${string:${stringy:position:length}:${stringz,,}}",
    "${string#${stringz}}", "${string=${stringz}}", "${string=prefix-${var}}",
    "${string=${var}-suffix}", "${string=prefix-${var}-suffix}", "${string=prefix${var} suffix}",
    "${string//${stringy}/${stringz}}",
]:
    upstream.append(case("TestParse", text))

# The funcs tests, as expansions.
N18 = "123456789123456789"
for text, vars in [
    ("${v#}", {}),  # not a length: an argument is required
    ("${#v}", {"v": "Hello World"}),
    ("${v,,}", {"v": "Hello World"}),
    ("${v,}", {"v": "HELLO WORLD"}),
    ("${v,}", {"v": ""}),
    ("${v^^}", {"v": "Hello World"}),
    ("${v^}", {"v": "hello world"}),
    ("${v^}", {"v": ""}),
    ("${v:=Hola Mundo}", {"v": "Hello World"}),
    ("${v:=Hola Mundo}", {"v": ""}),
    ("${v:=Hola Mundo${b}${c}}", {"v": "", "b": "-Bonjour le monde", "c": "-Halló heimur"}),
    ("${v:0:8}", {"v": N18}),
    ("${v:1:8}", {"v": N18}),
    ("${v:9}", {"v": N18}),
    ("${v:9:50}", {"v": N18}),
    ("${v:${p}:2}", {"v": N18, "p": "-3"}),
    ("${v:${p}:3}", {"v": N18, "p": "-300"}),
    ("${v:9:1}", {"v": "12345678"}),
]:
    upstream.append(case("funcs_test", text, vars))

# A seeded random corpus.
rnd = random.Random(20261122)
VARS = {
    "a": "abcABC123ABCabc",
    "e": "",
    "f": "bash.string.txt",
    "p": "/path/to/file.tar.gz",
    "u": "héllo wörld ÉÀ ß İ",
    "n": "-3",
    "k": "2",
    "s": "a*b?c[d]",
    "d": "$${x}",
    "_x1": "under_score",
    "é": "accent-name",
}
NAMES = list(VARS) + ["missing", "1", "x_y"]
PATTERNS = [
    "*", "*.", ".*", "a*", "*c", "?", "??", "[a-c]*", "[^a]*", "*[0-9]", "\\*", "[", "[]a]",
    "*/", "/*", "*.*", "b*c", "a?c", "[a-", "x", "abc", "ABC", "é*", "*ö*", "[^]", "\\",
    "${k}", "${missing}", "*${k}*", "[!a]*",
]
TEXTS = ["x", "xyz", "a b", "-", "1", "--", "a:b", "/", "\\/", "\\\\", "$$", "$x", "{", "é", "}"]


def name():
    return rnd.choice(NAMES)


def nested(depth):
    return expr(depth + 1) if depth < 2 and rnd.random() < 0.3 else rnd.choice(TEXTS)


def expr(depth=0):
    n = name()
    kind = rnd.randrange(14)
    if kind == 0:
        return "${%s}" % n
    if kind == 1:
        return "${#%s}" % n
    if kind == 2:
        return "${%s%s}" % (n, rnd.choice([",", ",,", "^", "^^", ",^", "^,", ",,,", "^^^"]))
    if kind == 3:
        return "${%s%s%s}" % (n, rnd.choice(["#", "##", "###", "%", "%%", "%%%"]), rnd.choice(PATTERNS))
    if kind == 4:
        pos = rnd.choice(["0", "1", "3", "-2", "+1", " 1", "x", "99", "${k}", "${n}", "", "-99"])
        if rnd.random() < 0.5:
            return "${%s:%s}" % (n, pos)
        ln = rnd.choice(["0", "2", "5", "99", "x", "${k}", "", "-1"])
        sep = rnd.choice([":", "::"])
        return "${%s:%s%s%s}" % (n, pos, sep, ln)
    if kind == 5:
        op = rnd.choice(["/", "//", "/#", "/%"])
        pat = rnd.choice(["a", "abc", "A", ".", "\\/", "/", "", "${k}", "é", "$$", "\\\\", "${e}"])
        rep = rnd.choice(["X", "", "-", "\\/", "${a}", "$$", "y${k}", "\\\\"])
        return "${%s%s%s/%s}" % (n, op, pat, rep)
    if kind == 6:
        op = rnd.choice(["=", ":=", ":-", ":?", ":+", "-", "+", "?", "==", ":=="])
        parts = "".join(nested(depth) for _ in range(rnd.randrange(0, 3)))
        return "${%s%s%s}" % (n, op, parts)
    if kind == 7:
        return "$${%s}" % n
    if kind == 8:
        return "$" + n
    if kind == 9:
        return "${%s:%s}" % (n, nested(depth))
    if kind == 10:
        return "${%s#%s}" % (n, nested(depth))
    if kind == 11:
        return "${%s/%s/%s}" % (n, nested(depth), nested(depth))
    if kind == 12:
        return rnd.choice(["${", "${}", "${ a}", "${a", "${a:", "${a/", "${a/b", "${#", "${#a",
                           "${a!}", "${a}}", "}", "$", "$$$", "$${", "${a.b}", "${a-b}", "${a:1",
                           "${a//", "${a:=", "${a:=x", "${a=${b", "\\${a}", "${a[0]}"])
    return rnd.choice(TEXTS)


def noisy(s):
    """Sometimes drops or inserts one character, to reach the error paths."""
    if rnd.random() < 0.2 and s:
        i = rnd.randrange(len(s))
        if rnd.random() < 0.5:
            return s[:i] + s[i + 1:]
        return s[:i] + rnd.choice("${}:#%/=-\\^,") + s[i:]
    return s


generated = []
seen = set()
while len(generated) < 3000:
    text = "".join(noisy(expr()) if rnd.random() < 0.8 else rnd.choice(TEXTS)
                   for _ in range(rnd.randrange(1, 4)))
    strict = rnd.random() < 0.4
    if (text, strict) in seen:
        continue
    seen.add((text, strict))
    generated.append(case("generated", text, VARS, strict))

cases = upstream + generated
out = subprocess.run([ORACLE], input=json.dumps(cases), capture_output=True, text=True, check=True)
results = json.loads(out.stdout)
rows = []
dropped = 0
for c, r in zip(cases, results):
    if r.get("panic") or r.get("invalid_utf8"):
        dropped += 1
        continue
    row = {"table": c["table"], "input": c["input"], "strict": c["strict"]}
    if c["table"] != "generated":
        row["vars"] = c["vars"]
    if r.get("tree") is not None:
        row["tree"] = r["tree"]
    if "output" in r:
        row["output"] = r["output"]
    if "error" in r:
        row["error"] = r["error"]
    rows.append(row)

doc = {
    "_meta": {
        "source": "github.com/fluxcd/pkg envsubst (Go package), evaluated with go1.19 by "
                  "scripts/envsubst-corpus/oracle.go; inputs from its test tables and "
                  "scripts/envsubst-corpus/gen.py (seed 20261122)",
        "generated_vars": VARS,
        "dropped_panics_or_invalid_utf8": dropped,
    },
    "rows": rows,
}
with open(OUT, "w") as f:
    # One row per line, so a change to the corpus reads as a diff of rows.
    f.write('{\n"_meta": ' + json.dumps(doc["_meta"], ensure_ascii=False) + ',\n"rows": [\n')
    f.write(",\n".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) for r in rows))
    f.write("\n]\n}\n")
print(f"{len(rows)} rows written to {OUT}, {dropped} dropped")
