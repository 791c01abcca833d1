#!/usr/bin/env python3
"""The installed embedding package, as a host project sees it.

`cmake --install BUILD --prefix TMP`, then:
  - TMP/include holds tessera/tessera.h and tessera/tessera.hpp and nothing
    else, and they include only each other and standard headers (no
    internal header is reachable from the installed include folder);
  - tessera.h compiles as C99 and tessera.hpp as C++20 with -I TMP/include
    alone, -Wall -Wextra -pedantic -Werror;
  - examples/embed/c and examples/embed/cpp configure with
    find_package(Tessera 0.1) against TMP (not the build tree), build and run
    (exit 0); the C++ one also against the static library (the package's
    `static` component);
  - a host of the shared library configures quietly: with
    --warn-uninitialized, no "Could NOT find" line (LLVM's package config,
    which reports LibEdit and CURL, is not even read) and no CMake warning;
  - docs/embedding.md quotes examples/embed/first (its CMakeLists.txt and
    app.c) verbatim, and that host builds and prints what the guide says.

Usage: installed_package_test.py --build BUILD --source SOURCE
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

PUBLIC = {"tessera/tessera.h", "tessera/tessera.hpp"}
INCLUDE_RE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)


def run(cmd, **kw):
    print("+", " ".join(cmd), flush=True)
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)
    if r.returncode != 0:
        print(r.stdout)
        raise SystemExit(f"FAILED (exit {r.returncode}): {' '.join(cmd)}")
    return r.stdout


def check_headers(prefix):
    inc = os.path.join(prefix, "include")
    found = set()
    for root, _, files in os.walk(inc):
        for f in files:
            found.add(os.path.relpath(os.path.join(root, f), inc))
    if found != PUBLIC:
        raise SystemExit(f"installed headers are {sorted(found)}, expected {sorted(PUBLIC)}")
    for h in sorted(found):
        text = open(os.path.join(inc, h)).read()
        for kind, name in INCLUDE_RE.findall(text):
            if name.startswith("tessera/"):
                if name not in PUBLIC:
                    raise SystemExit(f"{h} includes {name}, which is not installed")
            elif kind == '"' or "/" in name and not name.startswith(("dlpack/",)):
                raise SystemExit(f"{h} includes {kind}{name}: not a standard header")
    print("installed headers:", ", ".join(sorted(found)))


def compile_headers(prefix, work):
    inc = os.path.join(prefix, "include")
    c = os.path.join(work, "c99.c")
    with open(c, "w") as f:
        f.write("#include <tessera/tessera.h>\nint main(void) { return (int)tsr_abi_version() == 0; }\n")
    run(["cc", "-std=c99", "-Wall", "-Wextra", "-pedantic", "-Werror", "-I", inc, "-fsyntax-only", c])
    cpp = os.path.join(work, "cxx20.cpp")
    with open(cpp, "w") as f:
        f.write("#include <tessera/tessera.hpp>\nint main() { tessera::Options o; return o.jit ? 0 : 1; }\n")
    run(["c++", "-std=c++20", "-Wall", "-Wextra", "-pedantic", "-Werror", "-I", inc, "-fsyntax-only", cpp])


def build_example(source, prefix, work, name, extra=()):
    src = os.path.join(source, "examples", "embed", name)
    bld = os.path.join(work, "build-" + name + ("-" + "-".join(extra).replace("=", "_") if extra else ""))
    log = run(["cmake", "--warn-uninitialized", "-S", src, "-B", bld, "-DCMAKE_PREFIX_PATH=" + prefix,
               "-DCMAKE_BUILD_TYPE=Release", *extra])
    noise = [l for l in log.splitlines() if "Could NOT find" in l or "CMake Warning" in l]
    if noise:
        raise SystemExit(f"configuring examples/embed/{name} {' '.join(extra)} was not quiet:\n" + "\n".join(noise))
    if not extra and "LLVM" in log:
        raise SystemExit(f"configuring examples/embed/{name} against the shared library looked for LLVM:\n{log}")
    run(["cmake", "--build", bld, "-j2"])
    exe = os.path.join(bld, "app" if name == "first" else "host")
    out = run([exe], cwd=bld)
    print(out[-2000:])
    return out


def check_guide_quotes(source):
    """The embedding guide's first host is examples/embed/first, verbatim."""
    guide = open(os.path.join(source, "docs", "embedding.md")).read()
    for f, fence in (("CMakeLists.txt", "cmake"), ("app.c", "c")):
        text = open(os.path.join(source, "examples", "embed", "first", f)).read()
        if f"```{fence}\n{text}```" not in guide:
            raise SystemExit(f"docs/embedding.md does not quote examples/embed/first/{f} verbatim")
    print("docs/embedding.md quotes examples/embed/first verbatim")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--source", required=True)
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="tessera-install-")
    try:
        prefix = os.path.join(work, "prefix")
        run(["cmake", "--install", args.build, "--prefix", prefix])
        check_headers(prefix)
        compile_headers(prefix, work)
        check_guide_quotes(args.source)
        out = build_example(args.source, prefix, work, "first")
        if out != "9\nsquare(7) = 49\n":
            raise SystemExit(f"examples/embed/first printed {out!r}, not what docs/embedding.md says")
        build_example(args.source, prefix, work, "c")
        build_example(args.source, prefix, work, "cpp")
        build_example(args.source, prefix, work, "cpp", ["-DTESSERA_LINK=static"])
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("ok")


if __name__ == "__main__":
    main()
