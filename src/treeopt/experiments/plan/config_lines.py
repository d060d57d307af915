"""Where in config.yaml a problem is: the line to edit, also when the problem sits inside a YAML anchor.

A config problem names a dotted path (``profiles.paper.experiments.tao_fixed_depth_d8.methods.tao_obliqe: unknown
method``). Content written once under an anchor (``methods: &tao_fixed_methods``) and reused through aliases
(``methods: *tao_fixed_methods``) is reached by several paths, so one typo used to be reported once per alias, each
naming an alias's path and none the line to edit. :func:`annotate` puts the file and line in front of each problem,
as compilers do (``config.yaml:34: profiles...``; the line of the deepest node the path reaches: for aliased
content, the anchor's own text), and merges the problems that are the same problem seen through several aliases into
one line naming the anchor.
"""

from __future__ import annotations

import re

import yaml

# a dotted config path at the start of a problem, or after "in " (schema errors: "unknown key 'x' in a.b.c")
_PATH = re.compile(r"^(?:.*? in )?((?:profiles|datasets|data|profile)(?:\.[A-Za-z0-9_+\-^]+|\[\d+\])*)")
_STEP = re.compile(r"\.?([^.\[\]]+)|\[(\d+)\]")


class _AnchorLoader(yaml.SafeLoader):
    """A safe loader that remembers which composed node each anchor (``&name``) was put on."""

    def __init__(self, stream):
        super().__init__(stream)
        self.anchor_of = {}  # id(node) -> anchor name
        self.keep = []  # the nodes themselves, so their ids stay theirs

    def compose_node(self, parent, index):
        event = self.peek_event()
        anchor = None if isinstance(event, yaml.AliasEvent) else getattr(event, "anchor", None)
        node = super().compose_node(parent, index)
        if anchor is not None:
            self.anchor_of[id(node)] = anchor
            self.keep.append(node)
        return node


class ConfigLines:
    """The composed YAML of one config text: :meth:`locate` finds the node a dotted path reaches."""

    def __init__(self, text):
        loader = _AnchorLoader(text)
        try:
            self.root = loader.get_single_node()
        finally:
            loader.dispose()
        self.anchor_of = loader.anchor_of

    def locate(self, dotted):
        """``(line, anchor)`` of the deepest node ``dotted`` reaches (1-based line; ``anchor``: the name of the
        innermost anchor on the way, None when the path passes through none), or None when not even the first key
        is found."""
        node, line, anchor = self.root, None, None
        for key, index in _STEP.findall(dotted):
            if index and isinstance(node, yaml.SequenceNode) and int(index) < len(node.value):
                node = node.value[int(index)]
                line = node.start_mark.line + 1
            elif key and isinstance(node, yaml.MappingNode):
                found = [(k, v) for k, v in node.value if isinstance(k, yaml.ScalarNode) and k.value == key]
                if not found:
                    break
                key_node, node = found[0]
                line = key_node.start_mark.line + 1
            else:
                break
            anchor = self.anchor_of.get(id(node), anchor)
        return None if line is None else (line, anchor)


def annotate(problems, text, filename="config.yaml"):
    """``problems`` (config problem lines), each led by ``filename:N:``, the line its path names; problems that
    differ only in the alias path they were reached through (same line, same message) become one, naming the
    anchor and the other paths."""
    try:
        lines = ConfigLines(text)
    except yaml.YAMLError:
        return list(problems)
    merged, order = {}, []
    for problem in problems:
        match = _PATH.match(problem)
        where = lines.locate(match.group(1)) if match else None
        if where is None:
            merged.setdefault(problem, [problem])
            order.append(problem) if problem not in order else None
            continue
        line, anchor = where
        message = problem[match.end(1):]
        key = (line, message)
        if key not in merged:
            merged[key] = []
            order.append(key)
        merged[key].append((match.group(1), anchor, problem[:match.start(1)]))
    out = []
    for key in order:
        if isinstance(key, str):
            out.append(key)
            continue
        (line, message), seen = key, merged[key]
        path, anchor, prefix = seen[0]
        if anchor is None or len(seen) == 1:
            anchored = f" (inside the anchor &{anchor})" if anchor else ""
            out.extend(f"{filename}:{line}{anchored}: {p_prefix}{p}{message}" for p, _, p_prefix in seen)
        else:
            others = ", ".join(p for p, _, _ in seen[1:])
            out.append(f"{filename}:{line} (inside the anchor &{anchor}; the same text is also reached as "
                       f"{others}): {prefix}{path}{message}")
    return out
