"""Compile a selector AST once into Python closures: the general evaluator.

``codegen.py`` generates one Python function per selector and inlines the common leaves; any
sub-tree it does not inline (arithmetic, comparisons between expressions, BETWEEN with
non-literal bounds, conditions used as values) is compiled here into closures, whose semantics
come from the three-valued helpers in ``values.py``.

Every compiled function takes ``(props, msg)``: ``props`` answers ``.get(name)`` for properties
(the message's ``_props`` dict, or a wrapper around a user lookup function) and ``msg`` is what
header readers read. Conditions compile to two plain-``bool`` functions, *is-true* and
*is-false*, instead of one returning ``True/False/None``: with them SQL's three-valued logic
(tables 3.4-3.6) needs no ``None`` juggling at all:

==============  ==============================  ==============================
node            is-true                         is-false
==============  ==============================  ==============================
``a AND b``     true(a) and true(b)             false(a) or false(b)
``a OR b``      true(a) or true(b)              false(a) and false(b)
``NOT a``       false(a)                        true(a)
==============  ==============================  ==============================

and a selector matches exactly when *is-true* holds.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from ..types import Float, Int
from .ast import (
    And,
    Arithmetic,
    Between,
    Compare,
    Identifier,
    In,
    IsNull,
    Like,
    Literal,
    Node,
    Not,
    Or,
    Unary,
    operands,
)
from .like import like_matcher
from .values import arith, compare, delivery_mode, negate, priority

__all__ = [
    "HeaderReaders",
    "compile_condition",
    "like_regex",
    "lookup_headers",
    "message_headers",
]

Fn = Callable[[Any, Any], Any]
Pred = Callable[[Any, Any], bool]
HeaderReaders = dict[str, Fn]


def like_regex(pattern: str, escape: str | None) -> re.Pattern[str]:
    """The regex for a LIKE pattern: ``%`` any run, ``_`` one character, everything else literal
    (newlines and regex metacharacters included); ``escape`` makes the next character literal.

    A backtracking regex: the reference the tests check :func:`~amqp_jms.selector.like.like_matcher`
    against on small inputs, never used to evaluate a selector (see ``selector/like.py``)."""
    out, i = [], 0
    while i < len(pattern):
        c = pattern[i]
        if escape is not None and c == escape and i + 1 < len(pattern):
            out.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        out.append(".*" if c == "%" else "." if c == "_" else re.escape(c))
        i += 1
    return re.compile("".join(out), re.DOTALL)


def compile_condition(node: Node, headers: HeaderReaders, want: bool) -> Pred:
    """``(props, msg) -> bool``: whether ``node`` evaluates to ``want`` (TRUE or FALSE)."""
    return _Compiler(headers).cond(node, want)


class _Compiler:
    def __init__(self, headers: HeaderReaders) -> None:
        self._headers = headers

    # -- values -------------------------------------------------------------------------------
    def _reader(self, ident: Identifier) -> Fn:
        name = ident.name
        hdr = self._headers.get(name)
        if hdr is not None:
            return hdr

        def prop(p: Any, m: Any) -> Any:
            return p.get(name)

        return prop

    def _value(self, node: Node) -> Fn:
        if isinstance(node, Literal):
            # the literal's Java type travels with the value: 57 is an Int, 1.5F a Float
            const: Any = node.value
            if node.kind == "int":
                const = int.__new__(Int, const)
            elif node.kind == "float":
                const = float.__new__(Float, const)

            def literal(p: Any, m: Any) -> Any:
                return const

            return literal
        if isinstance(node, Identifier):
            return self._reader(node)
        if isinstance(node, Arithmetic):
            op, left, right = node.op, self._value(node.left), self._value(node.right)

            def arithmetic(p: Any, m: Any) -> Any:
                return arith(op, left(p, m), right(p, m))

            return arithmetic
        if isinstance(node, Unary):
            uop, operand = node.op, self._value(node.operand)

            def unary(p: Any, m: Any) -> Any:
                return negate(uop, operand(p, m))

            return unary
        t, f = self.true(node), self._false(node)

        def condition(p: Any, m: Any) -> bool | None:
            return True if t(p, m) else False if f(p, m) else None

        return condition

    # -- conditions ---------------------------------------------------------------------------
    def true(self, node: Node) -> Pred:
        return self.cond(node, True)

    def _false(self, node: Node) -> Pred:
        return self.cond(node, False)

    def cond(self, node: Node, want: bool) -> Pred:
        """A predicate: does ``node`` evaluate to ``want`` (TRUE or FALSE, never UNKNOWN)?"""
        if isinstance(node, Not):
            return self.cond(node.operand, not want)
        if isinstance(node, (And, Or)):
            preds = [self.cond(term, want) for term in operands(node)]  # a chain, not recursion
            if isinstance(node, And) == want:  # TRUE of AND, FALSE of OR: all of them

                def every(p: Any, m: Any) -> bool:
                    return all(f(p, m) for f in preds)

                return every

            def some(p: Any, m: Any) -> bool:
                return any(f(p, m) for f in preds)

            return some
        if isinstance(node, IsNull):
            r = self._reader(node.identifier)
            if want != node.negated:

                def is_null(p: Any, m: Any) -> bool:
                    return r(p, m) is None

                return is_null

            def not_null(p: Any, m: Any) -> bool:
                return r(p, m) is not None

            return not_null
        if isinstance(node, In):
            return self._in(node, want != node.negated)
        if isinstance(node, Like):
            matcher = like_matcher(node.pattern, node.escape)
            return self._in_like(node.identifier, None, matcher, want != node.negated)
        if isinstance(node, Between):
            return self._generic(self._between_value(node), want)
        if isinstance(node, Literal) and node.kind == "boolean":
            result = node.value is want

            def constant(p: Any, m: Any) -> bool:
                return result

            return constant
        if isinstance(node, Identifier):
            r = self._reader(node)

            def flag(p: Any, m: Any) -> bool:
                return r(p, m) is want

            return flag
        if isinstance(node, Compare):
            cop, left, right = node.op, self._value(node.left), self._value(node.right)

            def cmp(p: Any, m: Any) -> bool | None:
                return compare(cop, left(p, m), right(p, m))

            return self._generic(cmp, want)
        # arithmetic or non-boolean literal used as a condition: never TRUE nor FALSE
        return self._generic(self._value(node), want)

    @staticmethod
    def _generic(value: Fn, want: bool) -> Pred:
        def generic(p: Any, m: Any) -> bool:
            return value(p, m) is want

        return generic

    def _in_like(
        self,
        ident: Identifier,
        values: tuple[str, ...] | None,
        match: Callable[[str], bool] | None,
        positive: bool,
    ) -> Pred:
        """IN / LIKE: TRUE for a matching String, FALSE for any other non-NULL value."""
        name = ident.name
        hdr = self._headers.get(name)
        choices = frozenset(values or ())

        if match is None:

            def hit(v: Any) -> bool:
                return isinstance(v, str) and v in choices
        else:

            def hit(v: Any) -> bool:
                return isinstance(v, str) and match(v)

        if positive:

            def true(p: Any, m: Any) -> bool:
                return hit(p.get(name) if hdr is None else hdr(p, m))

            return true

        def false(p: Any, m: Any) -> bool:
            v = p.get(name) if hdr is None else hdr(p, m)
            return v is not None and not hit(v)

        return false

    def _in(self, node: In, positive: bool) -> Pred:
        """IN: TRUE/FALSE for a String; NULL or a value of another type is unknown, so NOT IN
        matches no number either (Jakarta Messaging TCK)."""
        r = self._reader(node.identifier)
        choices = frozenset(node.values)

        def check(p: Any, m: Any) -> bool:
            v = r(p, m)
            return isinstance(v, str) and (v in choices) is positive

        return check

    def _between_value(self, node: Between) -> Fn:
        x, lo, hi, negated = (
            self._value(node.operand),
            self._value(node.low),
            self._value(node.high),
            node.negated,
        )

        def between(p: Any, m: Any) -> bool | None:
            v = x(p, m)
            if negated:
                return _or3(compare("<", v, lo(p, m)), compare(">", v, hi(p, m)))
            return _and3(compare(">=", v, lo(p, m)), compare("<=", v, hi(p, m)))

        return between


def _and3(a: bool | None, b: bool | None) -> bool | None:
    if a is False or b is False:
        return False
    return None if a is None or b is None else True


def _or3(a: bool | None, b: bool | None) -> bool | None:
    if a is True or b is True:
        return True
    return None if a is None or b is None else False


def message_headers() -> HeaderReaders:
    """Header readers for amqp_jms messages (``msg.get_jms_*()``)."""
    return {
        "JMSDeliveryMode": lambda p, m: delivery_mode(m.get_jms_delivery_mode()),
        "JMSPriority": lambda p, m: priority(m.get_jms_priority()),
        "JMSMessageID": lambda p, m: m.get_jms_message_id(),
        "JMSTimestamp": lambda p, m: m.get_jms_timestamp(),
        "JMSCorrelationID": lambda p, m: m.get_jms_correlation_id(),
        "JMSType": lambda p, m: m.get_jms_type(),
    }


def lookup_headers() -> HeaderReaders:
    """Header readers for ``matches_lookup``: the lookup answers header names too."""
    return {
        "JMSDeliveryMode": lambda p, m: delivery_mode(p.get("JMSDeliveryMode")),
        "JMSPriority": lambda p, m: priority(p.get("JMSPriority")),
    }
