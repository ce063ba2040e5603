"""Find the terms of an ``OR``/``AND`` chain that one set lookup can answer.

Why: a generated selector such as ``id = 'a' OR id = 'b' OR ... `` (thousands of terms, one
property) would otherwise compile to thousands of comparisons, each run per message, and to a
Python expression whose compilation alone blocks the caller for a noticeable time. Grouping the
terms by property turns the chain into one ``frozenset`` membership test.

Only terms whose three-valued result is a function of "is the value in this set" are grouped:

=====================  ==========================  =====================================
chain                  term                        the term's value, by the value's type
=====================  ==========================  =====================================
``OR``                 ``p = 'lit'`` / ``p IN``    String: member?  NULL: unknown.
``AND``                ``p <> 'lit'`` / ``NOT IN``  String: not member?  NULL: unknown.
``OR``                 ``p = 7`` (int/long)        number: member (after Java promotion)?
``AND``                ``p <> 7`` (int/long)       number: not member?
=====================  ==========================  =====================================

A comparison with a String literal is FALSE for a value of another type, while ``[NOT] IN`` is
UNKNOWN for it (Jakarta Messaging TCK); a number literal compared with a non-number is FALSE.
``Group`` records which kinds of term it holds so the generated code keeps those answers exact.
The rendering lives in ``codegen.py``; this module only decides what to group.
"""

from __future__ import annotations

from dataclasses import dataclass

from .ast import And, Compare, Identifier, In, Literal, Node, Or

__all__ = ["MIN_GROUP", "Group", "group_terms"]

MIN_GROUP = 2
"""A single term keeps its own inlined test; two or more over one property become a lookup."""


@dataclass(frozen=True, slots=True)
class Group:
    """Terms of one chain over one identifier, answered by membership in ``values``.

    ``kind`` is ``'string'`` (String literals and IN lists) or ``'integer'`` (int/long literals);
    ``in_chain_or`` says whether the chain is an OR (terms are ``=``/``IN``) or an AND (terms are
    ``<>``/``NOT IN``); ``has_compare``/``has_in`` which term forms it holds (they answer a value
    of another type differently: FALSE and UNKNOWN)."""

    identifier: Identifier
    kind: str
    values: frozenset[object]
    in_chain_or: bool
    has_compare: bool
    has_in: bool
    size: int


def _member_term(term: Node, chain_or: bool) -> tuple[Identifier, str, tuple[object, ...], bool] | None:
    """(identifier, kind, values, is_compare) when ``term`` can join a group of this chain."""
    if isinstance(term, In):
        if term.negated == chain_or:  # OR takes IN, AND takes NOT IN
            return None
        return term.identifier, "string", term.values, False
    if not isinstance(term, Compare) or term.op != ("=" if chain_or else "<>"):
        return None
    left, right = term.left, term.right
    if isinstance(left, Literal) and isinstance(right, Identifier):
        left, right = right, left
    if not (isinstance(left, Identifier) and isinstance(right, Literal)):
        return None
    if right.kind == "string":
        return left, "string", (right.value,), True
    if right.kind in ("int", "long") and not isinstance(right.value, bool):
        return left, "integer", (right.value,), True
    return None


def group_terms(chain: Node, terms: list[Node]) -> tuple[list[Group], list[Node]]:
    """Split a chain's ``terms`` into set-lookup groups (two or more terms each) and the rest,
    which keep their own tests. The chain's value is unchanged: OR and AND are commutative and
    associative in three-valued logic, and no term has a side effect."""
    chain_or = isinstance(chain, Or)
    if not chain_or and not isinstance(chain, And):
        return [], terms
    found: dict[tuple[str, str], list[tuple[Node, tuple[object, ...], bool]]] = {}
    rest: list[Node] = []
    for term in terms:
        member = _member_term(term, chain_or)
        if member is None:
            rest.append(term)
            continue
        ident, kind, values, is_compare = member
        found.setdefault((ident.name, kind), []).append((term, values, is_compare))
    groups: list[Group] = []
    for (name, kind), members in found.items():
        if len(members) < MIN_GROUP:
            rest.extend(term for term, _, _ in members)
            continue
        groups.append(
            Group(
                identifier=Identifier(name),
                kind=kind,
                values=frozenset(v for _, values, _ in members for v in values),
                in_chain_or=chain_or,
                has_compare=any(c for _, _, c in members),
                has_in=not all(c for _, _, c in members),
                size=len(members),
            )
        )
    return groups, rest
