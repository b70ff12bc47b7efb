"""The user's names for the graph's nodes, read back from the cell's source. No UI imports.

A Report's nodes know their op, their lines and their arguments, not the
variables the user wrote. The source does: ``e = np.exp(x - m)`` on line 2 names
the last value computed on line 2 ``e``, and the array ``x`` that line reads from
outside the cell names an input. The rules are conservative: a name is given only
when the line leaves no doubt (one assignment on the line, one candidate left);
otherwise the node keeps its op name.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .stats import graph_nodes


@dataclass
class Names:
    node: dict[int, str] = field(default_factory=dict)  # node id -> the user's name for its value
    outputs: set[int] = field(default_factory=set)  # nodes whose value the cell leaves under a name


@dataclass
class _Statement:
    lines: range  # the source lines the statement spans
    targets: list[str]  # names it binds (or mutates: `u[1:-1] = ...` binds u's new contents)
    reads: list[str]  # names it reads that may be arrays from outside the cell


def user_names(d: dict, iteration: dict[int, Any] | None = None) -> Names:
    """``iteration``: node id -> which loop iteration computed it (see ``graph.find_loops``), so each
    iteration's last value of a line gets the line's name, not only the very last one."""
    iteration = iteration or {}
    try:
        tree = ast.parse(d.get("source") or "")
    except SyntaxError:
        return Names()
    statements = _statements(tree)
    nodes = graph_nodes(d)
    byid = {n["id"]: n for n in nodes}
    names = Names()
    on_line: dict[int, list[_Statement]] = {}
    for st in statements:
        for ln in st.lines:
            on_line.setdefault(ln, []).append(st)
    consumers: dict[int, list[int]] = {}
    for n in nodes:
        for a in n["args"]:
            consumers.setdefault(a, []).append(n["id"])
    # values: the last op of each assignment (per loop iteration: each root gets the name)
    last_line: dict[str, int] = {}
    for st in statements:
        for t in st.targets:
            last_line[t] = max(last_line.get(t, 0), st.lines.start)
    for st in statements:
        if len(st.targets) != 1 or any(len(on_line[ln]) > 1 for ln in st.lines):
            continue  # `a, b = ...` or two statements on one line: which value is which is unclear
        ops = [n for n in nodes if n["kind"] == "op" and set(n.get("lines", [])) & set(st.lines)]
        inside = {n["id"] for n in ops}
        roots = [n for n in ops if not any(c in inside and iteration.get(c) == iteration.get(n["id"])
                                           for c in consumers.get(n["id"], []))]
        for n in roots:
            names.node[n["id"]] = st.targets[0]
        if roots and st.lines.start == last_line.get(st.targets[0]):
            names.outputs.add(max(n["id"] for n in roots))  # the last iteration's value stays
    # inputs: the one outside name the first line reading them mentions
    taken: set[str] = set()
    for n in nodes:
        if n["kind"] != "input" or n["op"] != "input":
            continue
        first = _first_line(n["id"], byid, consumers)
        stmts = on_line.get(first, []) if first else []
        candidates = [r for st in stmts for r in st.reads if r not in taken]
        candidates = list(dict.fromkeys(c for c in candidates if c not in _bound_before(statements, first)))
        if len(candidates) == 1:
            names.node[n["id"]] = candidates[0]
            taken.add(candidates[0])
    return names


def _first_line(nid: int, byid: dict, consumers: dict) -> int | None:
    """The first line that reads a node, looking through views (which carry no line of their own)."""
    seen, todo, found = set(), [nid], []
    while todo:
        cur = todo.pop()
        for c in consumers.get(cur, []):
            if c in seen:
                continue
            seen.add(c)
            if byid[c]["kind"] == "view":
                todo.append(c)
            elif byid[c].get("lines"):
                found.append(min(byid[c]["lines"]))
    return min(found) if found else None


def _bound_before(statements: list[_Statement], line: int | None) -> set[str]:
    return {t for st in statements if line is not None and st.lines.start < line for t in st.targets}


def _statements(tree: ast.Module) -> list[_Statement]:
    out = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = [t for target in targets for t in _target_names(target)]
            if names:
                out.append(_Statement(range(node.lineno, (node.end_lineno or node.lineno) + 1), names,
                                      _reads(node.value) + ([names[0]] if isinstance(node, ast.AugAssign) else [])))
        elif isinstance(node, ast.Expr):  # `print(x.sum())`: reads, binds nothing
            out.append(_Statement(range(node.lineno, (node.end_lineno or node.lineno) + 1), [], _reads(node.value)))
    out.sort(key=lambda st: st.lines.start)
    return out


def _target_names(target: ast.expr) -> list[str]:
    while isinstance(target, (ast.Subscript, ast.Attribute)):  # `u[1:-1] = ...` changes u
        target = target.value
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for t in target.elts for n in _target_names(t)]
    return []


def _reads(expr: ast.AST | None) -> list[str]:
    """Names an expression reads as values: not modules or functions (``np`` in ``np.exp``, ``f`` in ``f(x)``)."""
    if expr is None:
        return []
    skip: set[int] = set()
    for node in ast.walk(expr):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            skip.add(id(node.func))
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                and not hasattr(np.ndarray, node.attr):
            skip.add(id(node.value))  # `np.exp`: np is no array; `x.max`: x may be
    return list(dict.fromkeys(n.id for n in ast.walk(expr)
                              if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and id(n) not in skip))
