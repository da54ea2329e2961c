#!/usr/bin/env python3
"""Checks the house's layers: every library the build makes with
omnib_add_layer (cmake/OmnibLayers.cmake) holds one folder and links only the
layers it names. This check holds the includes to the same rule, which the
compiler cannot (every folder is on the include path):

  - a file may include headers of its own folder and of the layers its
    layer depends on, directly or through others; nothing above or beside;
  - no two folders include each other both ways;
  - every folder with sources under engine/, baselines/, cuda/ and tools/
    belongs to a layer.

Usage: ci/check_layers.py [ROOT]   (default: the repository this script is in)
Exit 0 when all hold; 1, listing every breach with file:line, when not.
"""
import os
import re
import sys
from collections import defaultdict

CHECKED_TOPS = ("engine", "baselines", "cuda", "tools")
SOURCE_ENDINGS = (".h", ".cc", ".cu", ".cuh")
LAYER_CALL = re.compile(r"omnib_add_(?:layer|program)\(\s*([\w-]+)(.*?)\)\s*$", re.S | re.M)
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def cmake_files(root):
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if not d.startswith(("build", "."))]
        for f in filenames:
            if f == "CMakeLists.txt" or (f.endswith(".cmake") and os.path.basename(dirpath) == "cmake"):
                yield os.path.join(dirpath, f)


def keyword_values(args, keyword):
    """The words after KEYWORD up to the next keyword of the call."""
    words = re.sub(r"#[^\n]*", "", args).split()
    out, on = [], False
    for w in words:
        if w in ("FOLDER", "SOURCES", "DEPENDS", "PRIVATE_LIBS", "PUBLIC_LIBS", "OBJECT"):
            on = w == keyword
            continue
        if on:
            out.append(w)
    return out


def read_layers(root):
    """{layer: (folder, [direct dependencies that are layers])}"""
    layers = {}
    for path in cmake_files(root):
        text = open(path).read()
        for m in LAYER_CALL.finditer(text):
            name, args = m.group(1), m.group(2)
            if name == "name":  # the functions' own definitions
                continue
            folder = keyword_values(args, "FOLDER")
            if not folder:
                continue
            deps = [d for d in keyword_values(args, "DEPENDS") if not d.startswith("$")]
            # ${VAR} dependencies name optional layers: take the layer of that name if declared.
            for var in re.findall(r"\$\{(\w+)\}", " ".join(keyword_values(args, "DEPENDS"))):
                deps.append("?" + var)
            layers[name] = (folder[0], deps)
    return layers


def optional_layer_vars(root):
    """set(VAR layer) lines: the layers an optional ${VAR} dependency stands for."""
    out = defaultdict(set)
    for path in cmake_files(root):
        for m in re.finditer(r"set\(\s*(\w+)\s+(omnib_\w+)\s*\)", open(path).read()):
            out[m.group(1)].add(m.group(2))
    return out


def closure(layers, name, vars_):
    seen, todo = set(), [name]
    while todo:
        n = todo.pop()
        for d in layers.get(n, ("", []))[1]:
            for dep in (vars_.get(d[1:], set()) if d.startswith("?") else {d}):
                if dep not in seen:
                    seen.add(dep)
                    todo.append(dep)
    return seen


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
    layers = read_layers(root)
    vars_ = optional_layer_vars(root)
    folder_layer = {folder: name for name, (folder, _) in layers.items()}
    allowed = {name: closure(layers, name, vars_) for name in layers}
    problems, edges = [], defaultdict(dict)
    files = includes = 0
    for top in CHECKED_TOPS:
        for dirpath, _, filenames in os.walk(os.path.join(root, top)):
            sources = sorted(f for f in filenames if f.endswith(SOURCE_ENDINGS))
            if not sources:
                continue
            folder = os.path.relpath(dirpath, root)
            layer = folder_layer.get(folder)
            if layer is None:
                problems.append(f"{folder}/: in no layer (declare it with omnib_add_layer)")
                continue
            for f in sources:
                files += 1
                rel = f"{folder}/{f}"
                for lineno, line in enumerate(open(os.path.join(dirpath, f), errors="replace"), 1):
                    m = INCLUDE.match(line)
                    if not m or not os.path.exists(os.path.join(root, m.group(1))):
                        continue
                    includes += 1
                    target_folder = os.path.dirname(m.group(1))
                    if target_folder == folder:
                        continue
                    edges[folder].setdefault(target_folder, f"{rel}:{lineno}")
                    target = folder_layer.get(target_folder)
                    if target is None or target not in allowed[layer]:
                        problems.append(f"{rel}:{lineno}: {layer} includes {m.group(1)} "
                                        f"({target or 'no layer'}), which {layer} does not depend on")
    for a in sorted(edges):
        for b in sorted(edges[a]):
            if a < b and a in edges.get(b, {}):
                problems.append(f"{a} <-> {b}: {edges[a][b]} and {edges[b][a]} include each other's folders")
    print(f"check_layers: {len(layers)} layers, {files} files, {includes} includes of project headers")
    if problems:
        print(f"check_layers: {len(problems)} breaches of the layers:")
        for p in problems:
            print("  " + p)
        return 1
    print("check_layers: no upward include, no folders that include each other both ways")
    return 0


if __name__ == "__main__":
    sys.exit(main())
