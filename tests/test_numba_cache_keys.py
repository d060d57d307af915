"""Numba's on-disk cache of a compiled function is keyed on its own source file only (its stamp), not on the
files of the jitted functions it calls. So a kernel module that calls jitted functions from another module
carries a ``# numba cache key: <file> <hash>`` line per such module: editing the callee makes this test fail
until the caller's key line is updated, and that edit of the caller's file invalidates its stale cache
(for developers after a pull and for users after an upgrade alike)."""
import ast
import hashlib
import re
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "treeopt"
KEY = re.compile(r"^# numba cache key: (\S+) ([0-9a-f]{16})$", re.M)


def _is_cached_kernel_module(path):
    text = path.read_text()
    return "njit" in text and ("cache=True" in text or "_NJIT" in text)


def _digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def _jitted_dependencies(path):
    """Kernel modules of treeopt that ``path`` imports names from (relative imports)."""
    deps = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level > 0 and node.module:
            base = path.parent
            for _ in range(node.level - 1):
                base = base.parent
            target = base.joinpath(*node.module.split(".")).with_suffix(".py")
            if target.exists() and _is_cached_kernel_module(target):
                deps.add(target)
    return deps


MODULES = sorted(p for p in SRC.rglob("*.py") if _is_cached_kernel_module(p) and _jitted_dependencies(p))


def test_some_kernel_module_has_jitted_dependencies():
    assert any(p.name == "_co2_grow.py" for p in MODULES)  # the case that bit us: grower -> SGD kernel


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(SRC)))
def test_numba_cache_key_lines_match_the_callees(path):
    keys = {name: digest for name, digest in KEY.findall(path.read_text())}
    want = {str(d.relative_to(SRC)): _digest(d) for d in _jitted_dependencies(path)}
    lines = "\n".join(f"# numba cache key: {n} {h}" for n, h in sorted(want.items()))
    assert keys == want, f"update the key lines of {path.relative_to(SRC)} to:\n{lines}"
