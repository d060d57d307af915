"""The package's import graph (read from the source with ast, imports inside functions included): no module
imports itself through others; the learners, the data layer and the plots never import the experiment layer; and
inside the experiment layer the rooms import downward only (plan, infra, run, report; DESIGN.md "Code layout")."""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "treeopt"
# Layers below the experiment layer: the learners, the tree store, the data layer and the plots (which draw a figure
# from a table; the experiment layer picks and saves figures, treeopt.experiments.report.figures).
LOWER = ("treeopt.base", "treeopt.trees", "treeopt.greedy", "treeopt.nongreedy", "treeopt.tao", "treeopt.boosting",
         "treeopt.forest", "treeopt.segmentation", "treeopt.optimal", "treeopt.data", "treeopt.plots")
# The rooms of the experiment layer, lowest first: each imports only itself and the rooms before it. Above them, the
# entry points at the package top (the command line, the workflow's job functions and the warm worker that runs
# them) may import any room.
ROOMS = ("plan", "infra", "run", "report")
ENTRY_POINTS = ("treeopt.experiments", "treeopt.experiments.__main__", "treeopt.experiments.jobs",
                "treeopt.experiments.warm_worker")


def _module_name(path):
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph(root=PACKAGE):
    """{module: set of treeopt modules it imports}, from every ``import`` / ``from ... import`` in the file."""
    paths = {_module_name(p): p for p in root.rglob("*.py")}
    graph = {}
    for name, path in paths.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        targets = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                candidates = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = package.split(".")[:len(package.split(".")) - (node.level - 1)] if node.level else []
                prefix = ".".join([*base, *([node.module] if node.module else [])])
                # ``from P import x``: the module P.x when there is one, else the name x of module P
                candidates = [f"{prefix}.{alias.name}" if f"{prefix}.{alias.name}" in paths else prefix
                              for alias in node.names]
            else:
                continue
            for candidate in candidates:
                while candidate and candidate not in paths and "." in candidate:
                    candidate = candidate.rpartition(".")[0]
                if candidate in paths and candidate != name:
                    targets.add(candidate)
        graph[name] = targets
    return graph


def cycles(graph):
    """Strongly connected components of more than one module (Tarjan), each sorted."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in graph.get(node, ()):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                other = stack.pop()
                on_stack.discard(other)
                component.append(other)
                if other == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_cycle_finder_finds_a_circle_through_three_modules():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_the_graph_sees_relative_and_function_level_imports():
    graph = import_graph()
    assert "treeopt.trees._tree" in graph["treeopt.trees"]  # from ._tree import ...
    assert "treeopt.data.faces" in graph["treeopt.data.readers"]  # imported inside a function


def test_no_import_circles():
    assert cycles(import_graph()) == []


def test_no_learner_or_data_module_imports_the_experiment_layer():
    offenders = [(name, target) for name, targets in import_graph().items() if name.startswith(LOWER)
                 for target in targets if target.startswith("treeopt.experiments")]
    assert offenders == []


def _room(module):
    """The rank of a module of the experiment layer: its room's place in ROOMS, len(ROOMS) for an entry point."""
    parts = module.split(".")
    return ROOMS.index(parts[2]) if len(parts) > 2 and parts[2] in ROOMS else len(ROOMS)


def upward_imports(graph):
    """``(module, target)`` pairs where a module of the experiment layer imports a room above its own (or an entry
    point from inside a room)."""
    return sorted((name, target) for name, targets in graph.items() if name.startswith("treeopt.experiments")
                  for target in targets if target.startswith("treeopt.experiments") and _room(target) > _room(name))


def test_the_room_rule_sees_an_upward_import():
    graph = {"treeopt.experiments.plan.build": {"treeopt.experiments.run.selection"},
             "treeopt.experiments.run.runner": {"treeopt.experiments.plan.methods", "treeopt.experiments.jobs"},
             "treeopt.experiments.jobs": {"treeopt.experiments.report.tables"}}
    assert upward_imports(graph) == [("treeopt.experiments.plan.build", "treeopt.experiments.run.selection"),
                                     ("treeopt.experiments.run.runner", "treeopt.experiments.jobs")]


def test_the_experiment_rooms_import_downward_only():
    """plan <- infra <- run <- report: the plan fits nothing and writes nothing; the machinery around the jobs (cost
    model, kernel warm-up, job logs) needs the plan's registries; the runs use both; the reports read what runs wrote
    and the plan's registries."""
    assert upward_imports(import_graph()) == []


def test_every_module_of_the_experiment_layer_is_in_a_room_or_is_an_entry_point():
    loose = [name for name in import_graph() if name.startswith("treeopt.experiments")
             and name not in ENTRY_POINTS and name.split(".")[2] not in ROOMS]
    assert loose == []


def private_imports_across_packages(graph):
    """``(module, target)`` pairs where a module imports a private module (``_name``) of another treeopt package."""
    found = []
    for name, targets in graph.items():
        package = name.split(".")[1] if name.count(".") else ""
        for target in targets:
            parts = target.split(".")
            if len(parts) >= 3 and parts[1] != package and any(part.startswith("_") for part in parts[2:]):
                found.append((name, target))
    return sorted(found)


def test_no_package_reaches_into_another_packages_private_modules():
    """Learners share kernels through public modules (``treeopt.greedy.sgd``, ``treeopt.greedy.co2``,
    ``treeopt.trees``), so a private module can change without breaking another package."""
    assert private_imports_across_packages({"treeopt.nongreedy._sgd": {"treeopt.greedy._co2_sgd"},
                                            "treeopt.greedy.co2": {"treeopt.greedy._co2_grow"}}) == [
        ("treeopt.nongreedy._sgd", "treeopt.greedy._co2_sgd")]
    assert private_imports_across_packages(import_graph()) == []
