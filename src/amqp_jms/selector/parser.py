"""Recursive-descent parser: selector text -> AST, with the static checks JMS allows.

Grammar (lowest precedence first; keywords case-insensitive)::

    selector   := or_expr END
    or_expr    := and_expr (OR and_expr)*
    and_expr   := not_expr (AND not_expr)*
    not_expr   := NOT not_expr | predicate
    predicate  := sum [ cmp_op sum
                      | [NOT] BETWEEN sum AND sum
                      | [NOT] IN '(' string (',' string)* ')'        (left side: identifier)
                      | [NOT] LIKE string [ESCAPE string]              (left side: identifier)
                      | IS [NOT] NULL ]                                (left side: identifier)
    sum        := product (('+' | '-') product)*
    product    := unary (('*' | '/') unary)*
    unary      := ('+' | '-') unary | primary         (a sign directly before a number is folded)
    primary    := literal | identifier | '(' or_expr ')'

Static checks (the spec lets providers check what can be known without a message): a string,
boolean or condition can't be an arithmetic operand or be ordered with ``< <= > >=``; a number,
string or arithmetic expression can't be a condition (operand of AND/OR/NOT or the whole
selector); a boolean (literal or condition) can't be compared with a number (``TRUE = 0``, as
the Jakarta Messaging TCK requires); ``NULL`` only appears in ``IS [NOT] NULL``; header names
other than the six of 3.8.1.1 (and ``JMSX*``/``JMS_*`` properties) are rejected. Anything wrong raises
``InvalidSelectorException`` naming the position and what was expected; nothing else escapes.
"""

from __future__ import annotations

import math
import struct

from ..exceptions import InvalidSelectorException
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
from .lexer import Token, excerpt, selector_error, tokenize

__all__ = ["HEADER_IDENTIFIERS", "MAX_DEPTH", "parse"]

HEADER_IDENTIFIERS = frozenset(
    {"JMSDeliveryMode", "JMSPriority", "JMSMessageID", "JMSTimestamp", "JMSCorrelationID", "JMSType"}
)

_F32 = struct.Struct("<f")
_CMP_OPS = ("=", "<>", "<", "<=", ">", ">=")

# static kinds of expressions
_BOOL, _NUM, _STR, _ANY = "a condition", "a number", "a string", "an identifier"


def parse(text: str) -> Node | None:
    """Parse ``text``; ``None`` for an empty/whitespace-only selector (no selector)."""
    try:
        tokens = tokenize(text)
        if tokens[0].kind == "end":
            return None
        node = _Parser(text, tokens).parse()
        if _depth(node) > MAX_DEPTH:
            raise selector_error(text, 0, f"selector nested too deeply (more than {MAX_DEPTH} levels)")
        return node
    except InvalidSelectorException:
        raise
    except RecursionError:
        raise selector_error(text, 0, "expression nested too deeply") from None
    except Exception as exc:  # a bug, but the contract is that only InvalidSelectorException escapes
        message = f"invalid selector {excerpt(text)}: {exc}"
        raise InvalidSelectorException(message, linked_exception=exc) from exc


# Nesting limit: evaluators walk the tree recursively (except along AND/OR chains, which may be
# thousands of terms long), so a tree deeper than this is refused up front.
MAX_DEPTH = 100


def _depth(node: Node) -> int:
    """Nesting depth, an AND/OR chain counting as one level (computed without recursion)."""
    best, stack = 0, [(node, 1)]
    while stack:
        n, d = stack.pop()
        best = max(best, d)
        if d > MAX_DEPTH:
            break
        children: list[Node]
        if isinstance(n, (And, Or)):
            children = operands(n)
        elif isinstance(n, (Not, Unary)):
            children = [n.operand]
        elif isinstance(n, (Arithmetic, Compare)):
            children = [n.left, n.right]
        elif isinstance(n, Between):
            children = [n.operand, n.low, n.high]
        else:
            children = []
        stack.extend((c, d + 1) for c in children)
    return best


def _kind(node: Node) -> str:
    if isinstance(node, Literal):
        return {"string": _STR, "boolean": _BOOL}.get(node.kind, _NUM)
    if isinstance(node, Identifier):
        return _ANY
    if isinstance(node, (Unary, Arithmetic)):
        return _NUM
    return _BOOL


def number_literal(text: str, form: str, negative: bool) -> Literal:
    """A typed literal for a numeric token (Java rules), or ``ValueError`` saying why not."""
    body = text.replace("_", "")
    if form in ("float", "hexfloat"):
        single = body[-1] in "fF"
        if body[-1] in "fFdD":
            body = body[:-1]
        value = float.fromhex(body) if form == "hexfloat" else float(body)
        if negative:
            value = -value
        if single:
            try:
                value = _F32.unpack(_F32.pack(value))[0]
            except OverflowError:
                raise ValueError(f"{text} is out of the range of float") from None
        if not math.isfinite(value):
            raise ValueError(f"{text} is out of the range of {'float' if single else 'double'}")
        if value == 0.0 and any(
            c in "123456789abcdefABCDEF"
            for c in body.split("p")[0]
            .split("P")[0]
            .split("e")[0]
            .split("E")[0]
            .removeprefix("0x")
            .removeprefix("0X")
        ):
            raise ValueError(f"{text} is too small (it rounds to zero)")
        return Literal(value, "float" if single else "double")
    long_suffix = body[-1] in "lL"
    if long_suffix:
        body = body[:-1]
    if form == "hex":
        magnitude, decimal = int(body[2:], 16), False
    elif form == "bin":
        magnitude, decimal = int(body[2:], 2), False
    elif len(body) > 1 and body[0] == "0":
        if any(c in "89" for c in body):
            raise ValueError(f"{text} is not a valid octal literal")
        magnitude, decimal = int(body, 8), False
    else:
        magnitude, decimal = int(body), True
    if decimal:
        value = -magnitude if negative else magnitude
        if not long_suffix and -(2**31) <= value < 2**31:
            return Literal(value, "int")
        if -(2**63) <= value < 2**63:
            return Literal(value, "long")
        raise ValueError(f"{text} is out of the range of long")
    # hex/octal/binary: two's complement in 32 bits (no L, fits) or 64 bits, like Java
    bits = 32 if not long_suffix and magnitude < 2**32 else 64
    if magnitude >= 2**bits:
        raise ValueError(f"{text} is out of the range of long")
    value = -magnitude if negative else magnitude
    value = (value + 2 ** (bits - 1)) % 2**bits - 2 ** (bits - 1)
    return Literal(value, "int" if bits == 32 else "long")


class _Parser:
    def __init__(self, text: str, tokens: list[Token]) -> None:
        self.text = text
        self.tokens = tokens
        self.i = 0

    # -- token helpers ------------------------------------------------------------------------
    @property
    def tok(self) -> Token:
        return self.tokens[self.i]

    def error(self, expected: str, tok: Token | None = None) -> InvalidSelectorException:
        tok = tok or self.tok
        return selector_error(self.text, tok.pos, f"expected {expected}, found {tok.describe()}")

    def accept(self, kind: str, text: str) -> bool:
        tok = self.tok
        if tok.kind == kind and tok.text == text:
            self.i += 1
            return True
        return False

    def expect(self, kind: str, text: str, expected: str) -> None:
        if not self.accept(kind, text):
            raise self.error(expected)

    def check(self, node: Node, allowed: tuple[str, ...], where: str, tok: Token) -> Node:
        kind = _kind(node)
        if kind not in allowed:
            raise selector_error(
                self.text, tok.pos, f"{where} must be {' or '.join(allowed)}, not {kind} ({node})"
            )
        return node

    # -- grammar ------------------------------------------------------------------------------
    def parse(self) -> Node:
        start = self.tok
        node = self.or_expr()
        if self.tok.kind != "end":
            raise self.error("AND, OR, a comparison operator or end of selector")
        return self.check(node, (_BOOL, _ANY), "the selector", start)

    def condition(self) -> tuple[Node, Token]:
        tok = self.tok
        return self.not_expr(), tok

    def or_expr(self) -> Node:
        left, tok = self.and_expr_tok()
        while self.tok.kind == "keyword" and self.tok.text == "OR":
            self.i += 1
            right, rtok = self.and_expr_tok()
            left = Or(
                self.check(left, (_BOOL, _ANY), "an OR operand", tok),
                self.check(right, (_BOOL, _ANY), "an OR operand", rtok),
            )
        return left

    def and_expr_tok(self) -> tuple[Node, Token]:
        tok = self.tok
        left, _ = self.condition()
        while self.tok.kind == "keyword" and self.tok.text == "AND":
            self.i += 1
            right, rtok = self.condition()
            left = And(
                self.check(left, (_BOOL, _ANY), "an AND operand", tok),
                self.check(right, (_BOOL, _ANY), "an AND operand", rtok),
            )
        return left, tok

    def not_expr(self) -> Node:
        if self.accept("keyword", "NOT"):
            tok = self.tok
            return Not(self.check(self.not_expr(), (_BOOL, _ANY), "the operand of NOT", tok))
        return self.predicate()

    def predicate(self) -> Node:
        tok = self.tok
        left = self.sum()
        nxt = self.tok
        if nxt.kind == "op" and nxt.text in _CMP_OPS:
            self.i += 1
            rtok = self.tok
            right = self.sum()
            if nxt.text not in ("=", "<>"):
                self.check(left, (_NUM, _ANY), f"an operand of {nxt.text}", tok)
                self.check(right, (_NUM, _ANY), f"an operand of {nxt.text}", rtok)
            elif {_kind(left), _kind(right)} == {_BOOL, _NUM}:
                # Jakarta Messaging TCK: a boolean compared with a number is refused at creation
                raise selector_error(
                    self.text, nxt.pos, f"cannot compare a boolean with a number ({left} {nxt.text} {right})"
                )
            return Compare(nxt.text, left, right)  # type: ignore[arg-type]
        if nxt.kind != "keyword":
            return left
        negated = False
        if nxt.text == "NOT":
            after = self.tokens[self.i + 1]
            if not (after.kind == "keyword" and after.text in ("BETWEEN", "IN", "LIKE")):
                raise self.error("BETWEEN, IN or LIKE after NOT", after)
            negated = True
            self.i += 1
            nxt = self.tok
        if nxt.text == "BETWEEN":
            self.i += 1
            self.check(left, (_NUM, _ANY), "the operand of BETWEEN", tok)
            ltok = self.tok
            low = self.check(self.sum(), (_NUM, _ANY), "a BETWEEN bound", ltok)
            self.expect("keyword", "AND", "AND (of BETWEEN ... AND ...)")
            htok = self.tok
            high = self.check(self.sum(), (_NUM, _ANY), "a BETWEEN bound", htok)
            return Between(left, low, high, negated)
        if nxt.text in ("IN", "LIKE", "IS"):
            if not isinstance(left, Identifier):
                raise selector_error(
                    self.text, tok.pos, f"{nxt.text} needs an identifier on its left, not {left}"
                )
            self.i += 1
            if nxt.text == "IN":
                self.expect("op", "(", "'(' after IN")
                values = [self.string("a string literal in the IN list")]
                while self.accept("op", ","):
                    values.append(self.string("a string literal after ','"))
                self.expect("op", ")", "',' or ')' in the IN list")
                return In(left, tuple(values), negated)
            if nxt.text == "LIKE":
                ptok = self.tok
                pattern = self.string("a string literal pattern after LIKE")
                escape = None
                if self.accept("keyword", "ESCAPE"):
                    etok = self.tok
                    escape = self.string("a one-character string literal after ESCAPE")
                    if len(escape) != 1:
                        raise selector_error(
                            self.text, etok.pos, f"ESCAPE needs exactly one character, got {escape!r}"
                        )
                    if _dangling_escape(pattern, escape):
                        raise selector_error(
                            self.text,
                            ptok.pos,
                            f"LIKE pattern {pattern!r} ends with its escape character {escape!r}",
                        )
                return Like(left, pattern, escape, negated)
            negated = self.accept("keyword", "NOT")
            self.expect("keyword", "NULL", "NULL or NOT NULL after IS")
            return IsNull(left, negated)
        return left

    def string(self, expected: str) -> str:
        tok = self.tok
        if tok.kind != "string":
            raise self.error(expected)
        self.i += 1
        return tok.text

    def sum(self) -> Node:
        tok = self.tok
        left = self.product()
        while self.tok.kind == "op" and self.tok.text in ("+", "-"):
            op = self.tok.text
            self.i += 1
            rtok = self.tok
            right = self.product()
            left = Arithmetic(op, self.arith(left, op, tok), self.arith(right, op, rtok))  # type: ignore[arg-type]
        return left

    def product(self) -> Node:
        tok = self.tok
        left = self.unary()
        while self.tok.kind == "op" and self.tok.text in ("*", "/"):
            op = self.tok.text
            self.i += 1
            rtok = self.tok
            right = self.unary()
            left = Arithmetic(op, self.arith(left, op, tok), self.arith(right, op, rtok))  # type: ignore[arg-type]
        return left

    def arith(self, node: Node, op: str, tok: Token) -> Node:
        return self.check(node, (_NUM, _ANY), f"an operand of {op}", tok)

    def unary(self) -> Node:
        tok = self.tok
        if tok.kind == "op" and tok.text in ("+", "-"):
            self.i += 1
            nxt = self.tok
            if nxt.kind == "number":
                self.i += 1
                return self.number(nxt, negative=tok.text == "-")
            operand = self.arith(self.unary(), f"unary {tok.text}", nxt)
            return Unary(tok.text, operand)  # type: ignore[arg-type]
        return self.primary()

    def number(self, tok: Token, negative: bool) -> Literal:
        try:
            return number_literal(tok.text, tok.form, negative)
        except ValueError as exc:
            raise selector_error(self.text, tok.pos, str(exc)) from None

    def primary(self) -> Node:
        tok = self.tok
        if tok.kind == "number":
            self.i += 1
            return self.number(tok, negative=False)
        if tok.kind == "string":
            self.i += 1
            return Literal(tok.text, "string")
        if tok.kind == "ident":
            self.i += 1
            name = tok.text
            if (
                name.startswith("JMS")
                and name not in HEADER_IDENTIFIERS
                and not name.startswith(("JMSX", "JMS_"))
            ):
                raise selector_error(
                    self.text,
                    tok.pos,
                    f"{name} can't be used in a selector (headers allowed: "
                    f"{', '.join(sorted(HEADER_IDENTIFIERS))}; JMSX* and JMS_* name properties)",
                )
            return Identifier(name)
        if tok.kind == "keyword" and tok.text in ("TRUE", "FALSE"):
            self.i += 1
            return Literal(tok.text == "TRUE", "boolean")
        if self.accept("op", "("):
            inner = self.or_expr()
            self.expect("op", ")", "')'")
            return inner
        if tok.kind == "keyword" and tok.text == "NULL":
            raise selector_error(self.text, tok.pos, "NULL is only allowed in IS [NOT] NULL")
        raise self.error("an identifier, a literal, '(', '+' or '-'")


def _dangling_escape(pattern: str, escape: str) -> bool:
    i = 0
    while i < len(pattern):
        if pattern[i] == escape:
            if i + 1 == len(pattern):
                return True
            i += 2
        else:
            i += 1
    return False
