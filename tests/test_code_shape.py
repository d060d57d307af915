"""Shape rules of the library code (issue #40): kernels take grouped arguments (named tuples of arrays and settings,
as ``greedy/_co2_sgd.py`` does), so no function outside an estimator's ``__init__`` takes more than 12 positional
arguments; and no module of the experiment layer (``src/treeopt/experiments/``, in its rooms plan, infra, run and
report) grows past 400 lines: a module that does is split along its seams, as ``plan.py`` was into ``plan/specs.py``,
``plan/inherit.py``, ``plan/build.py`` and ``plan/tree_blocks.py``."""

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "treeopt"
MAX_POSITIONAL = 12
EXPERIMENTS = SRC / "experiments"
MAX_EXPERIMENT_LINES = 400


def _positional(node):
    args = [*node.args.posonlyargs, *node.args.args]
    if args and args[0].arg in ("self", "cls"):
        args = args[1:]
    return len(args)


def test_no_function_takes_more_than_12_positional_arguments():
    offenders = []
    for path in sorted(SRC.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name != "__init__":
                if _positional(node) > MAX_POSITIONAL:
                    offenders.append(f"{path.relative_to(SRC)}:{node.lineno} {node.name} ({_positional(node)})")
    assert not offenders, "group the arguments (see greedy/_co2_sgd.py): " + ", ".join(offenders)


def test_the_rule_sees_a_long_signature():
    """The check counts positional parameters (not self), so a 13-argument function is caught."""
    tree = ast.parse("def f(a, b, c, d, e, f, g, h, i, j, k, l, m): pass\nclass C:\n    def g(self, a): pass")
    counts = [_positional(n) for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]
    assert sorted(counts) == [1, 13]


def long_modules(root=EXPERIMENTS, limit=MAX_EXPERIMENT_LINES):
    """``(path, lines)`` of the Python modules under ``root`` longer than ``limit`` lines."""
    found = []
    for path in sorted(root.rglob("*.py")):
        n = len(path.read_text().splitlines())
        if n > limit:
            found.append((str(path.relative_to(root)), n))
    return found


def test_no_module_of_the_experiment_layer_is_over_400_lines():
    assert long_modules() == [], "split the module along its seams (docs/DESIGN.md, \"Code layout\")"


def test_the_line_rule_sees_a_long_module(tmp_path):
    (tmp_path / "room").mkdir()
    (tmp_path / "room" / "long.py").write_text("x = 1\n" * 401)
    (tmp_path / "short.py").write_text("x = 1\n" * 400)
    assert long_modules(tmp_path) == [("room/long.py", 401)]
