"""Compile a selector into ONE Python function: the fast per-message path.

Why generate source: a selector evaluated per message competes with a hand-written ``lambda``.
A tree of closures costs a Python call per node, several times the predicate itself; one
generated function costs one call, like the hand-written one (see benchmarks/selector_bench.py).

The function reads every identifier the selector uses once, into a local, then evaluates one
boolean expression built from *is-true* / *is-false* forms (see ``compiler.py``: with them SQL's
three-valued logic needs no ``None`` juggling). Common leaves are inlined: identifier vs literal
comparisons with a type-guarded fast path (``v > 500 if v.__class__ in FAST else helper(v)``),
``BETWEEN`` with literal bounds, ``IN``, ``LIKE`` (prefix/suffix/contains/equality become str
methods, the rest a regex), ``IS NULL``; the terms of an OR/AND chain over one property that a
set answers (``id = 'a' OR id = 'b' ...``, ``IN`` lists) become one membership test
(``chains.py``), so a chain of thousands costs one lookup per message. Everything else
(arithmetic, comparisons of expressions) calls the closure compiler's predicate for that
sub-tree, so the semantics live in one place (``values.py``).

No selector text is ever pasted into the source: names, literals and helpers are bound as
globals of the generated function (``k0``, ``h1`` ...), so the source is built only from
identifiers this module chooses.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

from .ast import And, Between, Compare, Identifier, In, IsNull, Like, Literal, Node, Not, Or, operands
from .chains import Group, group_terms
from .compiler import HeaderReaders, compile_condition, lookup_headers, message_headers
from .like import like_matcher
from .values import CMP_OPS, KINDS, NUMERIC, D, F, I, L, classify, delivery_mode, priority, to_f32

__all__ = ["compile_lookup", "compile_message"]

_NUMERIC_CLASSES = [cls for cls, kind in KINDS.items() if kind in (I, L, F, D)]
_FLIP = {"=": "=", "<>": "<>", "<": ">", "<=": ">=", ">": "<", ">=": "<="}
_PY_OP = {"=": "==", "<>": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}
_NUMERIC_KINDS = ("int", "long", "float", "double")

_MESSAGE_HEADER_SOURCE = {
    "JMSDeliveryMode": "_dm(m.get_jms_delivery_mode())",
    "JMSPriority": "_prio(m.get_jms_priority())",
    "JMSMessageID": "m.get_jms_message_id()",
    "JMSTimestamp": "m.get_jms_timestamp()",
    "JMSCorrelationID": "m.get_jms_correlation_id()",
    "JMSType": "m.get_jms_type()",
}


class _Lookup:
    """Adapts ``get(name)`` to the ``props.get(name)`` shape the closure compiler calls."""

    __slots__ = ("get",)

    def __init__(self, get: Callable[[str], object]) -> None:
        self.get = get


def compile_message(node: Node) -> Callable[[Any], bool]:
    """``fn(message) -> bool`` for JMS messages (``get_object_property`` and ``get_jms_*()``)."""
    return _Generator("message").build(node)


def compile_lookup(node: Node) -> Callable[[Callable[[str], object]], bool]:
    """``fn(get) -> bool`` where ``get(identifier)`` answers every identifier, headers included."""
    return _Generator("lookup").build(node)


def _like_plan(pattern: str, escape: str | None) -> tuple[str, str]:
    """How to test a LIKE pattern: ('eq'|'prefix'|'suffix'|'contains'|'any'|'regex', text)."""
    items: list[str | None] = []  # None = '%', '' never, a 1-char str = literal, '_' marker below
    wild_one = False
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if escape is not None and c == escape and i + 1 < len(pattern):
            items.append(pattern[i + 1])
            i += 2
            continue
        if c == "%":
            if not items or items[-1] is not None:
                items.append(None)
        elif c == "_":
            wild_one = True
        else:
            items.append(c)
        i += 1
    if wild_one:
        return "regex", ""
    runs: list[str | None] = []
    for it in items:
        if it is None:
            runs.append(None)
        elif runs and runs[-1] is not None:
            runs[-1] += it
        else:
            runs.append(it)
    if not runs:
        return "eq", ""
    if runs == [None]:
        return "any", ""
    if len(runs) == 1:
        return "eq", runs[0]  # type: ignore[return-value]
    if len(runs) == 2:
        return ("prefix", runs[0]) if runs[1] is None else ("suffix", runs[1])  # type: ignore[return-value]
    if len(runs) == 3 and runs[0] is None and runs[2] is None:
        return "contains", runs[1]  # type: ignore[return-value]
    return "regex", ""


class _Generator:
    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.headers: HeaderReaders = message_headers() if mode == "message" else lookup_headers()
        self.ns: dict[str, Any] = {"_dm": delivery_mode, "_prio": priority, "_Lookup": _Lookup}
        self.locals: dict[str, str] = {}
        self.hoisted: list[str] = []
        self.uses_generic = False

    def bind(self, value: object, prefix: str = "k") -> str:
        name = f"{prefix}{len(self.ns)}"
        self.ns[name] = value
        return name

    def var(self, ident: Identifier) -> str:
        """The local holding the identifier's value (read once, at the top of the function)."""
        name = ident.name
        local = self.locals.get(name)
        if local is not None:
            return local
        local = f"v{len(self.locals)}"
        self.locals[name] = local
        key = self.bind(name)
        if self.mode == "message":
            source = _MESSAGE_HEADER_SOURCE.get(name) or f"prop({key})"
        elif name == "JMSDeliveryMode":
            source = f"_dm(get({key}))"
        elif name == "JMSPriority":
            source = f"_prio(get({key}))"
        else:
            source = f"get({key})"
        self.hoisted.append(f"    {local} = {source}")
        return local

    def build(self, node: Node) -> Callable[..., bool]:
        try:
            return self._build(node)
        except (SyntaxError, RecursionError, MemoryError):  # pragma: no cover - parser limits depth
            return self._closures(node)

    def _closures(self, node: Node) -> Callable[..., bool]:
        """The closure compiler's predicate, for a tree Python's compiler would refuse."""
        pred = compile_condition(node, self.headers, True)
        if self.mode == "message":
            return lambda m: pred(_Lookup(m.get_object_property), m)

        def lookup(get: Callable[[str], object]) -> bool:
            w = _Lookup(get)
            return pred(w, w)

        return lookup

    def _build(self, node: Node) -> Callable[..., bool]:
        expr = self.cond(node, True)
        if self.mode == "message":
            # properties through the JMS API (``get_object_property`` returns the typed value as
            # stored), so any JMS message the selector is given is read the same way
            head = ["def _selector(m):", "    prop = m.get_object_property"]
            if self.uses_generic:
                head.append("    p = _Lookup(prop)")
        else:
            head = ["def _selector(get):"]
            if self.uses_generic:
                head.append("    p = m = _Lookup(get)")
        source = "\n".join([*head, *self.hoisted, f"    return {expr}", ""])
        exec(compile(source, "<selector>", "exec"), self.ns)
        # taken out of its own globals: no reference cycle, so a selector's generated code is
        # freed the moment its consumer goes, without waiting for the cyclic garbage collector
        fn: Callable[..., bool] = self.ns.pop("_selector")
        fn.__doc__ = source
        return fn

    # -- conditions: a Python expression that is True iff the node evaluates to ``want`` -------
    def cond(self, node: Node, want: bool) -> str:
        if isinstance(node, Not):
            return self.cond(node.operand, not want)
        if isinstance(node, (And, Or)):
            # one flat Python and/or over the whole chain: thousands of terms, no nesting; terms
            # over one property that a set answers become one membership test (chains.py)
            word = " and " if isinstance(node, And) == want else " or "
            groups, rest = group_terms(node, operands(node))
            parts = [self.set_lookup(g, want) for g in groups] + [self.cond(t, want) for t in rest]
            return "(" + word.join(parts) + ")"
        if isinstance(node, Literal) and node.kind == "boolean":
            return "True" if node.value is want else "False"
        if isinstance(node, Identifier):
            return f"({self.var(node)} is {want})"
        if isinstance(node, IsNull):
            return f"({self.var(node.identifier)} is {'' if want != node.negated else 'not '}None)"
        if isinstance(node, In):
            # TRUE/FALSE only for a String; NULL or any other type is unknown, so that NOT IN
            # does not match a number either (Jakarta Messaging TCK)
            v = self.var(node.identifier)
            word = "in" if want != node.negated else "not in"
            return f"(isinstance({v}, str) and {v} {word} {self.bind(frozenset(node.values))})"
        if isinstance(node, Like):
            return self.like(node, want)
        if isinstance(node, Compare):
            special = self.compare(node, want)
            if special is not None:
                return special
        if isinstance(node, Between):
            special = self.between(node, want)
            if special is not None:
                return special
        self.uses_generic = True
        return f"{self.bind(compile_condition(node, self.headers, want), 'g')}(p, m)"

    def set_lookup(self, group: Group, want: bool) -> str:
        """True iff the group's terms, combined as their chain combines them, are ``want``."""
        v = self.var(group.identifier)
        member = group.in_chain_or == want  # OR-true and AND-false ask "in"; the others "not in"
        word = "in" if member else "not in"
        if group.kind == "string":
            # another type: each comparison is FALSE, each [NOT] IN UNKNOWN (see chains.py)
            other_false = not group.has_in if group.in_chain_or else group.has_compare
            other = f"({v} is not None)" if other_false and not want else "False"
            return f"({v} {word} {self.bind(group.values)} if isinstance({v}, str) else {other})"
        sets = _integer_sets(group.values)
        table = self.bind(sets)
        helper = self.bind(_integer_group_helper(sets, group.in_chain_or, want), "h")
        return f"({v} {word} {table}[{v}.__class__] if {v}.__class__ in {table} else {helper}({v}))"

    @staticmethod
    def string_test(v: str, test: str, positive: bool) -> str:
        """TRUE when a String passes ``test``; FALSE for any other non-NULL value."""
        if positive:
            return f"(isinstance({v}, str) and {test})"
        return f"({v} is not None and not (isinstance({v}, str) and {test}))"

    def like(self, node: Like, want: bool) -> str:
        v = self.var(node.identifier)
        kind, text = _like_plan(node.pattern, node.escape)
        k = self.bind(text)
        test = {
            "eq": f"{v} == {k}",
            "prefix": f"{v}.startswith({k})",
            "suffix": f"{v}.endswith({k})",
            "contains": f"{k} in {v}",
            "any": "True",
        }.get(kind)
        if test is None:
            test = f"{self.bind(like_matcher(node.pattern, node.escape))}({v})"
        return self.string_test(v, test, want != node.negated)

    def compare(self, node: Compare, want: bool) -> str | None:
        op: str = node.op
        left, right = node.left, node.right
        if isinstance(left, Literal) and isinstance(right, Identifier):
            op, left, right = _FLIP[op], right, left
        if not (isinstance(left, Identifier) and isinstance(right, Literal)):
            return None
        v, lit = self.var(left), right
        if lit.kind in ("string", "boolean"):
            if op not in ("=", "<>"):
                return None
            k = self.bind(lit.value)
            if op == "=":
                # only a String equals a String literal, only the bool singletons are booleans
                test = f"({v} == {k})" if lit.kind == "string" else f"({v} is {k})"
            else:
                cls = "str" if lit.kind == "string" else "bool"
                test = f"(isinstance({v}, {cls}) and {v} != {k})"
            return test if want else f"({v} is not None and not {test})"
        table = _numeric_table(lit)
        fast = frozenset(
            cls
            for cls, (conv, x) in table.items()
            if conv is None and type(x) is type(lit.value) and x == lit.value
        )
        k = self.bind(lit.value)
        helper = self.bind(_numeric_helper(table, CMP_OPS[op], want), "h")
        test = f"{v} {_PY_OP[op]} {k}"
        if not want:
            test = f"not ({test})"
        return f"({test} if {v}.__class__ in {self.bind(fast)} else {helper}({v}))"

    def between(self, node: Between, want: bool) -> str | None:
        x, lo, hi = node.operand, node.low, node.high
        if not (
            isinstance(x, Identifier)
            and isinstance(lo, Literal)
            and isinstance(hi, Literal)
            and lo.kind in _NUMERIC_KINDS
            and hi.kind in _NUMERIC_KINDS
        ):
            return None
        v = self.var(x)
        lo_t, hi_t = _numeric_table(lo), _numeric_table(hi)
        both = {cls: (*lo_t[cls], *hi_t[cls]) for cls in lo_t}
        pivot = int if lo.kind in ("int", "long") and hi.kind in ("int", "long") else float
        ref = both[pivot]
        fast = frozenset(
            cls
            for cls, e in both.items()
            if e[0] is None and e[2] is None and all(type(a) is type(b) and a == b for a, b in zip(e, ref))
        )
        a, b = self.bind(ref[1]), self.bind(ref[3])
        test = f"({v} < {a} or {v} > {b})" if node.negated else f"({a} <= {v} <= {b})"
        if not want:
            test = f"not {test}"
        helper = self.bind(_between_helper(both, node.negated, want), "h")
        return f"({test} if {v}.__class__ in {self.bind(fast)} else {helper}({v}))"


def _numeric_table(lit: Literal) -> dict[type, tuple[Callable[[Any], Any] | None, Any]]:
    """For each numeric value class: (convert the value or None, the literal as compared)."""
    n, lk = lit.value, lit.kind
    table: dict[type, tuple[Callable[[Any], Any] | None, Any]] = {}
    entry: tuple[Callable[[Any], Any] | None, Any]
    for cls in _NUMERIC_CLASSES:
        vk = KINDS[cls]
        if lk in ("int", "long"):
            entry = (None, n) if vk in (I, L) else (None, float(n)) if vk == D else (None, to_f32(n))  # type: ignore[arg-type]
        elif lk == "double":
            entry = (float, n) if vk in (I, L) else (None, n)
        else:  # float literal
            entry = (to_f32, n) if vk in (I, L) else (None, n)
        table[cls] = entry
    return table


def _integer_sets(values: frozenset[object]) -> dict[type, frozenset[object]]:
    """For each numeric value class, the int literals as that class compares them (Java's
    promotion: to double for a double, to binary32 for a float), as in ``_numeric_table``."""
    sets: dict[type, set[object]] = {cls: set() for cls in _NUMERIC_CLASSES}
    for n in values:
        for cls, (_, x) in _numeric_table(Literal(cast(int, n), "long")).items():  # never a conversion
            sets[cls].add(x)
    return {cls: frozenset(xs) for cls, xs in sets.items()}


def _integer_group_helper(
    sets: dict[type, frozenset[object]], chain_or: bool, want: bool
) -> Callable[[Any], bool]:
    """The slow path of an integer group: NULL, non-numbers (each term FALSE), subclasses."""
    by_kind = {KINDS[cls]: xs for cls, xs in sets.items()}

    def helper(v: Any) -> bool:
        if v is None:
            return False
        kind = classify(v)
        if kind not in NUMERIC:
            return not want  # a number compared with a non-number: every term is FALSE
        hit = v in by_kind[kind]
        return (hit if chain_or else not hit) is want

    return helper


def _slow_entry(table: dict[type, tuple[Any, Any]], v: object) -> tuple[Any, Any] | None:
    """Table entry for a value whose exact class isn't listed (a subclass), or None."""
    kind = classify(v)
    for cls, entry in table.items():
        if KINDS[cls] == kind:
            return entry
    return None


def _numeric_helper(
    table: dict[type, tuple[Callable[[Any], Any] | None, Any]], opf: Callable[[Any, Any], bool], want: bool
) -> Callable[[Any], bool]:
    """The slow path of an identifier-vs-number comparison: conversions, NULL, unlike types."""

    def helper(v: Any) -> bool:
        if v is None:
            return False
        e = table.get(v.__class__) or _slow_entry(table, v)
        if e is None:
            return not want  # unlike types: the comparison is FALSE
        conv, x = e
        return opf(v if conv is None else conv(v), x) is want

    return helper


def _between_helper(both: dict[type, tuple[Any, ...]], negated: bool, want: bool) -> Callable[[Any], bool]:
    def helper(v: Any) -> bool:
        if v is None:
            return False
        e = both.get(v.__class__)
        if e is None:
            kind = classify(v)
            e = next((ent for cls, ent in both.items() if KINDS[cls] == kind), None)
            if e is None:
                return not want  # unlike types: both comparisons FALSE, so (NOT) BETWEEN is FALSE
        c1, a, c2, b = e
        u1 = v if c1 is None else c1(v)
        u2 = v if c2 is None else c2(v)
        result = (u1 < a or u2 > b) if negated else (a <= u1 and u2 <= b)
        return result is want

    return helper
