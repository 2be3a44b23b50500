#!/usr/bin/env python3
"""Writes the exec-probe shapes of issue 9's cost pass (s12) as Pod files, one per shape.

Each is a small script (a few KiB, under the 16 KiB script bound) whose analysis once cost far
more CPU than its work units said. Time each with the release binary:

    python3 scripts/cost-shapes.py /tmp/shapes                  # writes the Pod files
    python3 scripts/cost-shapes.py --time ./target/release/probegate /tmp/shapes

`--time` runs `probegate check` on each file 7 times and prints the least CPU time (user + system,
which another process's load changes less than wall time), and the same over the floor: a Pod
whose probe runs no script (process start, policy, output).
benches/engine.rs (`cost_shape`) times the same scripts with divan, engine only.
"""

import json
import os
import resource
import subprocess
import sys

MAX_SCRIPT = 16 * 1024 - 256  # under MAX_SCRIPT_BYTES
# The parser's bound (src/engine/exec/parse.rs): pieces of whole lines of at most 1024 "weight"
# (bytes that are not ASCII letters, digits or `_`), at most 8 full pieces per object; a line of
# more than 2048 is not parsed. Leave a line's worth per piece for the lines that do not fit.
MAX_WEIGHT = 8 * 1024 - 8 * 40


def weight(text):
    return sum(1 for c in text.encode() if not (chr(c).isascii() and (chr(c).isalnum() or c == 95)))


def fill(unit, head="", tail="pg_isready -h db\n", limit_weight=MAX_WEIGHT):
    """head + as many `unit(i)` as fit the bounds + tail (by default a client, so that the
    script is analysed: a script that names no client is not)."""
    out, i = [head], 0
    size, w = len(head) + len(tail), weight(head) + weight(tail)
    while True:
        u = unit(i)
        if size + len(u) > MAX_SCRIPT or w + weight(u) > limit_weight:
            break
        out.append(u)
        size, w = size + len(u), w + weight(u)
        i += 1
    out.append(tail)
    return "".join(out)


def shapes():
    return {
        # 1. `if` nested 300 deep, each condition a client, on one line (a block is parsed whole,
        # at most 2048 weight): the status walk of each condition looks at the branches under it.
        "nested-if": "if pg_isready;then " * 300 + "echo ok;" + "fi;" * 299 + "fi\npg_isready -h db\n",
        # 2. functions defined and called one by one: the list of known functions changes
        # before each call.
        "functions-one-by-one": fill(lambda i: f"f{i}(){{ :;}}\nf{i}\n"),
        # 3. one function redefined and called, again and again.
        "redefinition": fill(lambda i: "f(){ pg_isready -h db || true;}\nf\n"),
        # 4. many references to one variable, 100 to a line.
        "var-refs": fill(lambda i: "echo" + " $V" * 100 + "\n", head="V=x\n"),
        # 5. many here-documents whose body runs a client, read into a status (`grep -q`), each
        # on one line of the piece the parser reads at once (a piece that ends inside a body
        # stops the analysis there).
        "heredocs": fill(lambda i: "grep -q ok <<EOF\n$(pg_isready -h db)\nEOF\n:\n", limit_weight=1000),
        # 5b. here-documents whose end bash does not take as one (`EOF ` with a blank): the
        # parser reads the piece again for each.
        "heredoc-ends": fill(lambda i: "cat <<EOF\nx\nEOF \nEOF\n"),
        # 6. (s15) `||false` 1,000 times after a check, on one line (at most 2048 weight): each
        # element's status walk went up through the lists above it.
        "or-chain": "pg_isready -h db&&false" + "||false" * 1000 + "||exit 1\npg_isready -h db\n",
    }


def pod(name, script, containers=1):
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "containers": [
                {
                    "name": f"c{i}",
                    "image": "app:1",
                    "livenessProbe": {"exec": {"command": ["sh", "-c", script]}},
                }
                for i in range(containers)
            ]
        },
    }


def cpu_ms(binary, path, runs):
    """The least user+system CPU time, in ms, of `runs` runs of `binary check path`."""
    best = None
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run([binary, "check", path], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        ms = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000
        best = ms if best is None else min(best, ms)
    return best


def main():
    args = sys.argv[1:]
    binary = None
    if args[:1] == ["--time"]:
        binary, args = args[1], args[2:]
    out = args[0] if args else "cost-shapes"
    os.makedirs(out, exist_ok=True)
    paths = []
    for name, script in shapes().items():
        for containers, suffix in ((1, ""), (14, "-x14")):
            path = os.path.join(out, f"{name}{suffix}.json")
            with open(path, "w") as f:
                json.dump(pod(name, script, containers), f)
            paths.append(path)
            if binary is None:
                print(f"{path}: script {len(script)} bytes, weight {weight(script)}, {containers} container(s)")
    if binary is None:
        return
    # The process alone (start, policy, output) on a Pod whose probe runs no script.
    floor = os.path.join(out, "floor.json")
    with open(floor, "w") as f:
        json.dump(pod("floor", "true"), f)
    base = cpu_ms(binary, floor, 10)
    print(f"floor (process, no script): {base:.1f} ms CPU")
    for path in paths:
        ms = cpu_ms(binary, path, 7)
        print(f"{os.path.basename(path)}: {ms:.1f} ms CPU, {ms - base:.1f} ms over the floor (least of 7)")


if __name__ == "__main__":
    main()
