"""Paths and Snakemake targets named in README.md and docs/*.md exist, or are made by the workflow (issue #40).

Numbers in the docs are checked against their tables (``tests/test_docs_numbers.py``); this checks the rest of
what a reader copies: a repository path in backticks or a Markdown link must exist (a ``*`` or ``{...}`` pattern
must match a file), and every target of a ``snakemake`` command shown must be an output of the profile the command
selects (a table, figure, run folder or selection file of the plan). Paths under ``data/`` are the user's files
or made at run time (git-ignored) and are not checked; nor are placeholders in run-folder patterns
(``results/runs/{dataset}/...``, ``<rule>``), which name a layout, not a file.
"""

import glob
import re
import shlex
from functools import lru_cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# top-level names of the repository: a backticked string starting with one of them is meant as a path
REPO_DIRS = ("src/", "tests/", "docs/", "benchmarks/", "workflow/", "profiles/", "studies/", "results/", "figures/",
             ".ci/")
CODE = re.compile(r"`([^`\n]+)`")
LINK = re.compile(r"\]\(([^)\s#]+)(?:#[^)]*)?\)")
COMMAND = re.compile(r"(?:^|[`\n]\s*)(snakemake [^`\n#]*)")


def _braces(text):
    """Shell brace expansion of ``a{b,c}d`` (nested braces are not used in the docs)."""
    m = re.search(r"\{([^{}]*,[^{}]*)\}", text)
    if not m:
        return [text]
    return [out for part in m.group(1).split(",") for out in _braces(text[:m.start()] + part + text[m.end():])]


def _lines(path):
    return path.read_text().splitlines()


def repository_paths():
    out = []
    for doc in DOCS:
        for number, line in enumerate(_lines(doc), 1):
            for m in CODE.finditer(line):
                text = m.group(1).strip()
                if text.startswith(REPO_DIRS) and " " not in text:
                    out.append((doc, number, text, ROOT / text))
            for m in LINK.finditer(line):
                text = m.group(1)
                if not text.startswith(("http://", "https://", "mailto:")):
                    out.append((doc, number, text, (doc.parent / text)))
    return out


def _code_texts(text):
    """The fenced code blocks (line by line, a trailing backslash joining the next line) and the inline code spans
    (which may wrap over lines) of a Markdown text, with the line each starts on."""
    out = []
    fences = list(re.finditer(r"^```[^\n]*\n(.*?)^```", text, flags=re.S | re.M))
    for m in fences:
        first = text[:m.start(1)].count("\n") + 1
        joined, start = "", None
        for offset, line in enumerate(m.group(1).splitlines()):
            start = first + offset if start is None else start
            if line.rstrip().endswith("\\"):
                joined += line.rstrip()[:-1] + " "
                continue
            out.append((start, joined + line))
            joined, start = "", None
    rest = text
    for m in reversed(fences):  # blank the fences out, keeping line numbers
        rest = rest[:m.start()] + "\n" * m.group(0).count("\n") + rest[m.end():]
    for m in re.finditer(r"`([^`]+)`", rest):
        out.append((rest[:m.start()].count("\n") + 1, m.group(1).replace("\n", " ")))
    return out


OPTIONS_WITH_VALUE = ("--cores", "-c", "--workflow-profile", "--report", "--slurm-status-command", "-j", "--jobs")


def snakemake_targets():
    """(doc, line, profile, target) of every target of every ``snakemake`` command shown in the docs."""
    out = []
    for doc in DOCS:
        for number, code in _code_texts(doc.read_text()):
            for m in re.finditer(r"(?:^|&&|;)\s*(snakemake\b[^#;&]*)", code):
                command = m.group(1)
                if "$(" in command:
                    command = command[:command.index("$(")]
                try:
                    words = shlex.split(command)
                except ValueError:
                    continue
                profile = "paper" if "profile=paper" in words else "default"
                skip_next = options_done = False
                for word in words[1:]:
                    if skip_next:
                        skip_next = False
                    elif word == "--":
                        options_done = True
                    elif options_done:
                        out.extend((doc, number, profile, target) for target in _braces(word))
                    elif word in OPTIONS_WITH_VALUE:
                        skip_next = True
                    # an option, its key=value items (--config, --default-resources) or optional syntax ([...])
                    elif not (word.startswith("-") or "=" in word or "[" in word or "]" in word):
                        out.extend((doc, number, profile, target) for target in _braces(word))
    return out


PATHS = repository_paths()
TARGETS = snakemake_targets()


def test_the_docs_name_paths_and_targets():
    assert len(PATHS) > 50 and len(TARGETS) >= 3  # the parsers find what the docs hold


@pytest.mark.parametrize("doc,line,text,path", PATHS, ids=[f"{d.name}:{n}:{t}" for d, n, t, _ in PATHS])
def test_named_path_exists(doc, line, text, path):
    relative = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
    if str(relative).startswith("data/"):
        pytest.skip("data/ holds the user's files and what the workflow downloads (git-ignored)")
    if "{" in str(relative) or "<" in str(relative):
        if str(relative).startswith(("results/", "figures/")):
            pytest.skip("a run-folder pattern: names a layout")
        assert any(Path(p).exists() for t in _braces(str(path)) for p in glob.glob(re.sub(r"\{[^}]*\}", "*", t))), \
            f"{doc.name}:{line}: nothing matches {text}"
        return
    if "*" in str(relative):
        assert glob.glob(str(path)), f"{doc.name}:{line}: nothing matches {text}"
        return
    assert path.exists() or str(relative) in _planned("default") or str(relative) in _planned("paper"), \
        f"{doc.name}:{line}: {text} does not exist and the workflow does not make it"


@lru_cache(maxsize=None)
def _planned(profile):
    """Every output of the profile's plan: tables, figures, scorecard, run folders, selection files, blocks."""
    from treeopt.experiments.plan.build import build_plan
    from treeopt.experiments.plan.config import load_config

    config = load_config(ROOT / "config.yaml")
    config["profile"] = profile
    plan = build_plan(config)
    return frozenset([*plan.targets(), *plan.runs, *plan.finals, *plan.selections, *plan.blocks])


@pytest.mark.parametrize("doc,line,profile,target", TARGETS, ids=[f"{d.name}:{n}:{t}" for d, n, _, t in TARGETS])
def test_snakemake_target_is_made_by_the_workflow(doc, line, profile, target):
    assert target in _planned(profile), (f"{doc.name}:{line}: `snakemake ... {target}` (profile {profile}) is not "
                                         f"an output of the workflow")
