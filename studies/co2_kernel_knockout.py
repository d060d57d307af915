"""Where a CO2 stump sample-epoch goes at p = 16 (issue #37's 4 ns target): the kernel with parts knocked out.

    python studies/co2_kernel_knockout.py [--rounds 3]

Copies ``src/`` once per variant into a temporary folder, removes parts of the stump kernel
(``treeopt.greedy._co2_sgd``) by text patches, and times each copy with ``studies/co2_kernel_ab.py nodes`` (the
kernel as a node calls it: Letter's float32 rows, p = 16, k = 26, n = 15000 / 1000 / 300, 60 epochs), each in its own
process with its own numba cache, the variants interleaved round by round. The knocked-out kernels compute wrong
stumps (their epochs still run to 60); the differences between variants say roughly what each part costs, nothing
more: removing one part also changes the path the others take (how many gradient blocks are zero, for one).

Variants (cumulative from ``margins`` to ``skeleton``; ``no_gradient`` and ``no_pass`` alone):

* ``full``: the kernel as it is;
* ``margins``: every margin reads one feature instead of p (the mini-batches' and the surrogate pass's);
* ``+gradient``: and no subgradient accumulation over the features;
* ``+tables``: and no per-batch leaf tables (softmax and log losses of both leaves);
* ``skeleton``: and no epoch-end surrogate pass: what is left is the shuffle, the loss-augmented inference with
  its count tables, the momentum steps and the loops;
* ``no_gradient``, ``no_pass``: that part alone removed from the full kernel.

Writes ``studies/results/co2_kernel_knockout.log`` (one line per round and variant, then medians). A patch whose
text is not found stops the study (the kernel changed: update the patches).
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KERNEL = Path("treeopt/greedy/_co2_sgd.py")

MARGINS = [
    ("""    for j in range(p):
        wj = wb[j]
        z0 += wj * X[i0, j]
        z1 += wj * X[i1, j]
        z2 += wj * X[i2, j]
        z3 += wj * X[i3, j]
    return z0, z1, z2, z3""", """    wj = wb[0]
    z0 += wj * X[i0, 0]
    z1 += wj * X[i1, 0]
    z2 += wj * X[i2, 0]
    z3 += wj * X[i3, 0]
    return z0, z1, z2, z3"""),
    ("""    z = -wb[p]
    for j in range(p):
        z += wb[j] * X[i, j]
    return z""", """    z = -wb[p]
    z += wb[0] * X[i, 0]
    return z"""),
]
GRADIENT = [
    ("    if _any_nonzero(c0, c1, c2, c3):\n        for j in range(X.shape[1]):",
     "    if False:\n        for j in range(X.shape[1]):"),
    ("    if c != 0.0:\n        for j in range(X.shape[1]):", "    if False:\n        for j in range(X.shape[1]):"),
]
# (function, line, statement): the statement is inserted before the first such line of the function (an early return)
TABLES = [("def _leaf_losses(theta, prob, loss):", "    k = theta.shape[1]\n", "    return\n")]
PASS = [("def _surrogate_pass(points", "    t0 = 0.0\n", "    return 0.0\n")]

VARIANTS = {
    "full": ([], []),
    "margins": (MARGINS, []),
    "+gradient": (MARGINS + GRADIENT, []),
    "+tables": (MARGINS + GRADIENT, TABLES),
    "skeleton": (MARGINS + GRADIENT, TABLES + PASS),
    "no_gradient": (GRADIENT, []),
    "no_pass": ([], PASS),
}


def patched(source, replacements, returns):
    for old, new in replacements:
        if source.count(old) != 1:
            sys.exit(f"patch text not found once in {KERNEL}: {old[:60]!r}")
        source = source.replace(old, new)
    for head, line, early in returns:
        start = source.index(head)
        at = source.index(line, start)
        source = source[:at] + early + source[at:]
    return source


def run(src, cache):
    env = dict(os.environ, PYTHONPATH=str(src), NUMBA_CACHE_DIR=str(cache))
    out = subprocess.run([sys.executable, str(ROOT / "studies" / "co2_kernel_ab.py"), "nodes"], env=env, check=True,
                         capture_output=True, text=True).stdout
    rows = [line for line in out.splitlines() if line.startswith("letter")]
    return [float(line.split(": ")[1].split(" ns")[0]) for line in rows]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    original = (ROOT / "src" / KERNEL).read_text()
    lines = []
    times = {name: [] for name in VARIANTS}
    with tempfile.TemporaryDirectory() as tmp:
        trees = {}
        for name, (replacements, returns) in VARIANTS.items():
            src = Path(tmp) / name.replace("+", "plus_") / "src"
            shutil.copytree(ROOT / "src", src, ignore=shutil.ignore_patterns("__pycache__"))
            (src / KERNEL).write_text(patched(original, replacements, returns))
            trees[name] = src
        for r in range(args.rounds):
            for name, src in trees.items():
                ns = run(src, src.parent / "numba_cache")
                times[name].append(ns)
                load = os.getloadavg()[0]
                line = f"round {r} {name:12s} n=15000/1000/300: " + " / ".join(f"{v:.2f}" for v in ns) + \
                    f" ns per sample-epoch (load {load:.2f})"
                print(line, flush=True)
                lines.append(line)
    lines.append("medians over the rounds (ns per sample-epoch, n = 15000 / 1000 / 300):")
    for name, runs in times.items():
        lines.append(f"  {name:12s} " + " / ".join(f"{statistics.median(col):.2f}" for col in zip(*runs)))
    print("\n".join(lines[-len(times) - 1:]))
    out = ROOT / "studies" / "results" / "co2_kernel_knockout.log"
    out.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
