"""The selector AST: small frozen dataclasses, printable back to canonical selector text.

The parser produces these nodes; the Python evaluator (``compiler.py``), the Arrow evaluator
(``arrow.py``) and the Spark column compiler all consume them, so the set is deliberately small
and every node means exactly one thing.

=================  ==========================================  ===============================
Node               Fields                                      Selector text
=================  ==========================================  ===============================
``Literal``        ``value``, ``kind`` (see below)             ``'it''s'``, ``57``, ``57L``,
                                                               ``1.5``, ``1.5F``, ``TRUE``
``Identifier``     ``name`` (a header or property name)        ``JMSType``, ``color``
``Unary``          ``op`` (``'+'``/``'-'``), ``operand``       ``-(x + 1)``, ``-x``
``Arithmetic``     ``op`` (``+ - * /``), ``left``, ``right``   ``a * 2``
``Compare``        ``op`` (``= <> < <= > >=``), ``left``,      ``weight > 2500``
                   ``right``
``And``/``Or``     ``left``, ``right``                         ``a AND b``, ``a OR b``
``Not``            ``operand``                                 ``NOT a``
``Between``        ``operand``, ``low``, ``high``, ``negated``  ``age [NOT] BETWEEN 15 AND 19``
``In``             ``identifier``, ``values`` (tuple of str),  ``c [NOT] IN ('UK', 'US')``
                   ``negated``
``Like``           ``identifier``, ``pattern``, ``escape``     ``w [NOT] LIKE 'l_se' ESCAPE '!'``
                   (str or None), ``negated``
``IsNull``         ``identifier``, ``negated``                 ``p IS [NOT] NULL``
=================  ==========================================  ===============================

``Literal.kind`` is the Java type of the literal: ``"string"``, ``"boolean"``, ``"int"`` (an
exact literal without ``L`` that fits in 32 bits), ``"long"``, ``"float"`` (``F`` suffix) or
``"double"``. Numeric literals are signed: the parser folds a unary minus written directly before
a number into the literal (so ``-9223372036854775808`` is expressible), and prints a ``Unary``
whose operand is a literal with parentheses (``-(5)``) so that the text reparses to the same tree.

Semantics are those of JMS 2.0 section 3.8 with the choices documented in ``amqp_jms.selector``:
``NOT BETWEEN`` is ``low > x OR x > high`` (not ``NOT (x BETWEEN ...)``, which differs for
unlike types and NaN), ``NOT IN``/``NOT LIKE``/``IS NOT NULL`` are the negations of the positive
forms. ``str(node)`` is the canonical text; ``Selector(str(node)).ast == node``.
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass
from typing import Literal as _Lit

__all__ = [
    "And",
    "Arithmetic",
    "Between",
    "Compare",
    "Identifier",
    "In",
    "IsNull",
    "Like",
    "Literal",
    "Node",
    "Not",
    "Or",
    "Unary",
    "operands",
    "quote",
    "term_count",
]

LiteralKind = _Lit["string", "boolean", "int", "long", "float", "double"]

_F32 = struct.Struct("<f")

# Printing precedence (higher binds tighter).
_OR, _AND, _NOT, _CMP, _ADD, _MUL, _UNARY, _PRIMARY = range(1, 9)


def quote(text: str) -> str:
    """A selector string literal for ``text`` (``'`` doubled)."""
    return "'" + text.replace("'", "''") + "'"


def _float_text(value: float, single: bool) -> str:
    if single:
        # the shortest decimal that rounds back to the same binary32 value
        for digits in range(1, 10):
            text = f"{value:.{digits}g}"
            try:
                if _F32.unpack(_F32.pack(float(text)))[0] == value:
                    break
            except OverflowError:  # rounded past the largest float: more digits
                continue
        if "e" in text and "." not in text.split("e")[0]:
            mantissa, exponent = text.split("e")
            text = f"{mantissa}.0e{exponent}"
        elif "e" not in text and "." not in text:
            text += ".0"
        return text + "F"
    return repr(value)


class Node:
    """Base of every AST node. Nodes are immutable, hashable and compare structurally."""

    __slots__ = ()

    def precedence(self) -> int:
        return _PRIMARY

    def _wrap(self, child: Node, minimum: int) -> str:
        text = str(child)
        return f"({text})" if child.precedence() < minimum else text


@dataclass(frozen=True, slots=True)
class Literal(Node):
    """A constant: string, boolean or (signed) numeric literal with its Java type in ``kind``."""

    value: str | bool | int | float
    kind: LiteralKind

    def __post_init__(self) -> None:
        expected: dict[str, type] = {
            "string": str,
            "boolean": bool,
            "int": int,
            "long": int,
            "float": float,
            "double": float,
        }
        want = expected.get(self.kind)
        if want is None or type(self.value) is not want:
            raise ValueError(f"Literal kind {self.kind!r} needs a {want}, got {self.value!r}")
        if self.kind == "int" and not -(2**31) <= self.value < 2**31:  # type: ignore[operator]
            raise ValueError(f"int literal out of range: {self.value}")
        if self.kind == "long" and not -(2**63) <= self.value < 2**63:  # type: ignore[operator]
            raise ValueError(f"long literal out of range: {self.value}")
        if self.kind in ("float", "double") and not math.isfinite(self.value):  # type: ignore[arg-type]
            raise ValueError("approximate literals are finite")

    def __str__(self) -> str:
        v = self.value
        if self.kind == "string":
            return quote(v)  # type: ignore[arg-type]
        if self.kind == "boolean":
            return "TRUE" if v else "FALSE"
        if self.kind == "int":
            return str(v)
        if self.kind == "long":
            return f"{v}L"
        return _float_text(v, self.kind == "float")  # type: ignore[arg-type]


@dataclass(frozen=True, slots=True)
class Identifier(Node):
    """A header (``JMSPriority`` ...) or property reference; an absent value is NULL."""

    name: str

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True)
class Unary(Node):
    """Unary ``+`` or ``-`` on an arithmetic expression (Java unary numeric promotion)."""

    op: _Lit["+", "-"]
    operand: Node

    def precedence(self) -> int:
        return _UNARY

    def __str__(self) -> str:
        inner = self.operand
        if isinstance(inner, Literal) or inner.precedence() < _UNARY:
            return f"{self.op}({inner})"
        return f"{self.op} {inner}"


@dataclass(frozen=True, slots=True)
class Arithmetic(Node):
    """Binary arithmetic ``+ - * /`` with Java binary numeric promotion."""

    op: _Lit["+", "-", "*", "/"]
    left: Node
    right: Node

    def precedence(self) -> int:
        return _ADD if self.op in "+-" else _MUL

    def __str__(self) -> str:
        p = self.precedence()
        return f"{self._wrap(self.left, p)} {self.op} {self._wrap(self.right, p + 1)}"


@dataclass(frozen=True, slots=True)
class Compare(Node):
    """A comparison ``= <> < <= > >=``; never chained (``a = b = c`` needs parentheses)."""

    op: _Lit["=", "<>", "<", "<=", ">", ">="]
    left: Node
    right: Node

    def precedence(self) -> int:
        return _CMP

    def __str__(self) -> str:
        return f"{self._wrap(self.left, _ADD)} {self.op} {self._wrap(self.right, _ADD)}"


class _Chain(Node):
    """``AND``/``OR``: binary nodes, but ``a AND b AND c ...`` is a left-deep chain that can be
    thousands long (generated ``id = 1 OR id = 2 OR ...`` selectors), so printing, equality and
    hashing walk the chain with a loop instead of recursing."""

    __slots__ = ()
    left: Node
    right: Node
    _word = ""

    def __str__(self) -> str:
        p = self.precedence()
        terms = operands(self)
        return f" {self._word} ".join(
            [self._wrap(terms[0], p), *(self._wrap(t, p + 1) for t in terms[1:])]
        )

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        a, b = operands(self), operands(other)
        return len(a) == len(b) and all(x == y for x, y in zip(a, b))

    def __hash__(self) -> int:
        return hash((type(self).__name__, *operands(self)))


def operands(node: Node) -> list[Node]:
    """The operands of an AND (or OR) chain, left to right: ``a AND b AND c`` -> [a, b, c].

    Only the left spine is followed (the parser builds chains left-deep); a parenthesised
    right operand ``a AND (b AND c)`` stays one operand. A node of another type is [node].
    """
    cls = type(node)
    if cls is not And and cls is not Or:
        return [node]
    rights: list[Node] = []
    while type(node) is cls:
        rights.append(node.right)
        node = node.left
    rights.append(node)
    rights.reverse()
    return rights


@dataclass(frozen=True, slots=True, eq=False)
class And(_Chain):
    """Three-valued ``AND`` (table 3.4)."""

    left: Node
    right: Node
    _word = "AND"

    def precedence(self) -> int:
        return _AND


@dataclass(frozen=True, slots=True, eq=False)
class Or(_Chain):
    """Three-valued ``OR`` (table 3.5)."""

    left: Node
    right: Node
    _word = "OR"

    def precedence(self) -> int:
        return _OR


@dataclass(frozen=True, slots=True)
class Not(Node):
    """Three-valued ``NOT`` (table 3.6)."""

    operand: Node

    def precedence(self) -> int:
        return _NOT

    def __str__(self) -> str:
        return f"NOT {self._wrap(self.operand, _NOT)}"


@dataclass(frozen=True, slots=True)
class Between(Node):
    """``x BETWEEN lo AND hi`` = ``x >= lo AND x <= hi``; negated: ``x < lo OR x > hi``."""

    operand: Node
    low: Node
    high: Node
    negated: bool = False

    def precedence(self) -> int:
        return _CMP

    def __str__(self) -> str:
        word = "NOT BETWEEN" if self.negated else "BETWEEN"
        return (
            f"{self._wrap(self.operand, _ADD)} {word} {self._wrap(self.low, _ADD)} "
            f"AND {self._wrap(self.high, _ADD)}"
        )


@dataclass(frozen=True, slots=True)
class In(Node):
    """``ident [NOT] IN ('a', 'b')``: true when the String value is one of ``values``."""

    identifier: Identifier
    values: tuple[str, ...]
    negated: bool = False

    def precedence(self) -> int:
        return _CMP

    def __str__(self) -> str:
        word = "NOT IN" if self.negated else "IN"
        return f"{self.identifier} {word} ({', '.join(quote(v) for v in self.values)})"


@dataclass(frozen=True, slots=True)
class Like(Node):
    """``ident [NOT] LIKE 'pattern' [ESCAPE 'c']``: ``_`` one character, ``%`` any run."""

    identifier: Identifier
    pattern: str
    escape: str | None = None
    negated: bool = False

    def precedence(self) -> int:
        return _CMP

    def __str__(self) -> str:
        word = "NOT LIKE" if self.negated else "LIKE"
        text = f"{self.identifier} {word} {quote(self.pattern)}"
        if self.escape is not None:
            text += f" ESCAPE {quote(self.escape)}"
        return text


@dataclass(frozen=True, slots=True)
class IsNull(Node):
    """``ident IS [NOT] NULL``: tests for an absent property or null header."""

    identifier: Identifier
    negated: bool = False

    def precedence(self) -> int:
        return _CMP

    def __str__(self) -> str:
        return f"{self.identifier} IS {'NOT NULL' if self.negated else 'NULL'}"


def term_count(node: Node) -> int:
    """How many conditions ``AND``/``OR``/``NOT`` combine in ``node``: ``a = 1 OR b IN ('x',
    'y') OR NOT c LIKE 'z%'`` has 3 (an ``IN`` list is one term). What a broker limits, with the
    selector's length, so one consumer's filter cannot cost without bound (computed without
    recursion: chains can be thousands long)."""
    count, stack = 0, [node]
    while stack:
        n = stack.pop()
        if isinstance(n, (And, Or)):
            stack.extend(operands(n))
        elif isinstance(n, Not):
            stack.append(n.operand)
        else:
            count += 1
    return count
