#!/usr/bin/env python3
"""Layering check: no #include (and no CMake link dependency) goes up the layer table.

The layer table below is the one place the layering is written down (docs/architecture.md's
"Layers" section mirrors it; shared/design/architecture.md §2 has the top-level picture).
Each layer lists the layers it may include *directly*; what those may include is
allowed too (the relation is transitive). An include between two layers is a
violation unless the included layer is reachable from the including one: it
"goes up" when the including layer is itself below the included one, "goes
sideways" when the two are unrelated.

Checked: every source and header (.h .hpp .cpp .cc .c .def .inc) under the top-level
folders in TOP_LAYERS, each `#include "..."` line; and each CMakeLists.txt there,
its target_link_libraries() between the project's own targets. tests/ is exempt.

Usage: check_includes.py [--root DIR] [--table] [--self-test]
Exit status 0 when clean, 1 on any violation (each printed as FILE:LINE: ...).
"""
import argparse
import os
import re
import sys

# ---------------------------------------------------------------- the layer table
# Top level (shared/design/architecture.md §2):
#   tools ─▶ runtime ─▶ codegen ─▶ optimizer ─▶ tracer ─▶ vm
#               │            └──────▶ deopt ──────┘
#               └──▶ include/tessera (public C API; includes nothing internal)
TOP_LAYERS = {
    "vm": [],
    "tracer": ["vm"],
    "optimizer": ["tracer"],
    "deopt": ["tracer"],
    "codegen": ["optimizer", "deopt"],
    "include": [],
    "runtime": ["codegen", "include"],
    "tools": ["runtime"],
}
# Inside vm/ (one folder, one static library each):
#   core < frontend < bytecode;  core < tensor < graph;  {bytecode, graph} < builtins < interp
VM_LAYERS = {
    "core": [],                         # values, objects, errors, operator kinds, built-in ABI
    "frontend": ["core"],               # lexer, parser, AST
    "bytecode": ["frontend"],           # bytecode format, compiler, disassembler
    "tensor": ["core"],                 # tensor storage, dtypes, CPU kernels
    "graph": ["tensor"],                # Graph IR op table, tensor built-ins
    "builtins": ["graph", "bytecode"],  # value semantics, printing, built-in registry
    "interp": ["builtins"],             # the VM and the interpreter
}
# ---------------------------------------------------------------------------------

SOURCE_EXT = (".h", ".hpp", ".cpp", ".cc", ".c", ".def", ".inc")
INCLUDE_RE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')


def closure(table):
    reach = {}

    def visit(name, seen):
        for dep in table[name]:
            if dep not in seen:
                seen.add(dep)
                visit(dep, seen)
        return seen

    for name in table:
        reach[name] = visit(name, set())
    return reach


TOP_REACH = closure(TOP_LAYERS)
VM_REACH = closure(VM_LAYERS)


def layer_of(relpath):
    """'vm/graph/op_table.h' -> 'vm/graph'; 'tracer/x.h' -> 'tracer'; None if outside."""
    parts = relpath.replace(os.sep, "/").split("/")
    top = parts[0]
    if top not in TOP_LAYERS or len(parts) < 2:
        return None
    if top == "vm":
        if len(parts) < 3:
            return "vm/"  # a file directly in vm/: belongs to no component
        return "vm/" + parts[1]
    return top


def check_pair(src, dst):
    """None if a file of layer src may include one of layer dst, else a description."""
    if src == dst:
        return None
    for layer in (src, dst):
        if layer.startswith("vm/") and layer[3:] not in VM_LAYERS:
            return f"{layer} is not a vm/ component in the layer table"
    stop, dtop = src.split("/")[0], dst.split("/")[0]
    if stop != dtop:
        if dtop in TOP_REACH[stop]:
            return None
        if stop in TOP_REACH[dtop]:
            return f"goes up ({src} is below {dst})"
        return f"goes sideways ({src} and {dst} are unrelated layers)"
    s, d = src[3:], dst[3:]  # both in vm/
    if d in VM_REACH[s]:
        return None
    if s in VM_REACH[d]:
        return f"goes up ({src} is below {dst})"
    return f"goes sideways ({src} and {dst} are unrelated layers)"


def resolve(root, including, target):
    """Repository-relative path of an include target, or None if not the project's."""
    here = os.path.dirname(including)
    for base in (here, "", "include"):
        cand = os.path.normpath(os.path.join(base, target))
        if os.path.isfile(os.path.join(root, cand)):
            return cand.replace(os.sep, "/")
    # Not (yet) in the tree: still the project's when it names a layer folder.
    if layer_of(target) is not None:
        return target
    return None


def source_files(root):
    for top in sorted(TOP_LAYERS):
        base = os.path.join(root, top)
        if not os.path.isdir(base):
            continue
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames.sort()
            for name in sorted(filenames):
                yield os.path.relpath(os.path.join(dirpath, name), root).replace(os.sep, "/")


def check_includes(root, files):
    problems = []
    for rel in files:
        if not rel.endswith(SOURCE_EXT):
            continue
        src = layer_of(rel)
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
            for lineno, line in enumerate(f, 1):
                m = INCLUDE_RE.match(line)
                if not m:
                    continue
                target = resolve(root, rel, m.group(1))
                if target is None:
                    continue
                dst = layer_of(target)
                if dst is None:
                    continue
                why = check_pair(src, dst)
                if why:
                    problems.append(f'{rel}:{lineno}: {src} includes {dst} ("{m.group(1)}"): {why}')
    return problems


TARGET_DEF_RE = re.compile(r"\b(?:tessera_component|add_library|add_executable)\s*\(\s*([\w.+-]+)")
LINK_RE = re.compile(r"\btarget_link_libraries\s*\(\s*([\w.+-]+)([^)]*)\)", re.S)


def check_links(root, files):
    cmake_files = [f for f in files if os.path.basename(f) == "CMakeLists.txt"]
    texts = {}
    target_layer = {}
    for rel in cmake_files:
        with open(os.path.join(root, rel), encoding="utf-8") as f:
            text = re.sub(r"#[^\n]*", "", f.read())
        texts[rel] = text
        layer = layer_of(rel)
        if layer is None or layer == "vm/":
            continue
        for m in TARGET_DEF_RE.finditer(text):
            target_layer[m.group(1)] = layer
    problems = []
    for rel, text in texts.items():
        for m in LINK_RE.finditer(text):
            src = target_layer.get(m.group(1))
            if src is None:
                continue
            lineno = text.count("\n", 0, m.start()) + 1
            for dep in m.group(2).split():
                dst = target_layer.get(dep)
                if dst is None:
                    continue
                why = check_pair(src, dst)
                if why:
                    problems.append(f"{rel}:{lineno}: target {m.group(1)} ({src}) links {dep} ({dst}): {why}")
    return problems


def print_table():
    print("top level (a layer may include itself and, transitively, the layers listed):")
    for name, deps in TOP_LAYERS.items():
        print(f"  {name:10} -> {', '.join(deps) or '-'}")
    print("inside vm/:")
    for name, deps in VM_LAYERS.items():
        print(f"  vm/{name:8} -> {', '.join('vm/' + d for d in deps) or '-'}")


def self_test():
    """The checker on a small made-up tree: it must find exactly the planted violations."""
    import tempfile
    files = {
        "vm/core/value.h": '#include "vm/interp/vm.h"\n',                    # up
        "vm/tensor/tensor.h": '#include "vm/core/value.h"\n#include "vm/frontend/ast.h"\n',  # ok, sideways
        "vm/frontend/ast.h": '#include "lexer.h"\n',                         # same folder: ok
        "vm/frontend/lexer.h": "",
        "vm/interp/vm.h": '#include "vm/tensor/tensor.h"\n#include <vector>\n#include "fmt/format.h"\n',
        "tracer/trace_ir.h": '#  include "deopt/snapshot.h"  // comment\n',  # up
        "deopt/snapshot.h": '#include "tracer/trace_ir.h"\n',
        "optimizer/pass.h": '#include "deopt/snapshot.h"\n',                # sideways
        "tools/main.cpp": '#include "vm/interp/vm.h"\n#include "runtime/jit.h"\n',
        "runtime/jit.h": "",
        "vm/graph/CMakeLists.txt": "tessera_component(tessera_graph a.cpp)\n"
                                   "target_link_libraries(tessera_graph PUBLIC tessera_interp)  # up\n",
        "vm/interp/CMakeLists.txt": "tessera_component(tessera_interp vm.cpp)\n"
                                    "target_link_libraries(tessera_interp PUBLIC tessera_graph fmt::fmt)\n",
    }
    expected = [
        "vm/core/value.h:1: vm/core includes vm/interp",
        "vm/tensor/tensor.h:2: vm/tensor includes vm/frontend",
        "tracer/trace_ir.h:1: tracer includes deopt",
        "optimizer/pass.h:1: optimizer includes deopt",
        "vm/graph/CMakeLists.txt:2: target tessera_graph (vm/graph) links tessera_interp (vm/interp)",
    ]
    with tempfile.TemporaryDirectory() as root:
        for rel, text in files.items():
            os.makedirs(os.path.join(root, os.path.dirname(rel)), exist_ok=True)
            with open(os.path.join(root, rel), "w") as f:
                f.write(text)
        tree = list(source_files(root))
        got = check_includes(root, tree) + check_links(root, tree)
    ok = len(got) == len(expected) and all(
        any(g.startswith(e) for g in got) for e in expected)
    for g in got:
        print("  found:", g)
    print("self-test:", "OK" if ok else "FAILED (expected: %s)" % expected)
    return 0 if ok else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    ap.add_argument("--table", action="store_true", help="print the layer table and exit")
    ap.add_argument("--self-test", action="store_true", help="check the checker on a made-up tree")
    args = ap.parse_args()
    if args.self_test:
        return self_test()
    if args.table:
        print_table()
        return 0
    root = os.path.abspath(args.root)
    files = list(source_files(root))
    problems = check_includes(root, files) + check_links(root, files)
    for p in problems:
        print(p)
    nsrc = sum(1 for f in files if f.endswith(SOURCE_EXT))
    if problems:
        print(f"layering: {len(problems)} violation(s) in {nsrc} files")
        return 1
    print(f"layering: OK ({nsrc} files)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
