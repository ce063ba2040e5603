"""Column functions: JMS selectors as Spark expressions, and the AMQP codec as Arrow UDFs.

``selector(text)`` compiles the selector's AST (:mod:`amqp_jms.selector.ast`) to one Spark
``Column`` over the row schema (:mod:`.schema`), for filtering message data at rest
(``df.filter(selector("region = 'EU' AND total > 100"))``). It follows JMS 3.8 exactly as far as a
row can tell:

- headers: ``JMSDeliveryMode`` (``'PERSISTENT'``/``'NON_PERSISTENT'``), ``JMSPriority``,
  ``JMSMessageID``, ``JMSTimestamp`` (epoch ms), ``JMSCorrelationID``, ``JMSType`` read their
  columns; every other identifier reads ``typed_properties`` with its JMS type; absent is NULL.
- three-valued logic (tables 3.4–3.6) is SQL's, and the column is ``coalesce(expr, false)``:
  unknown never matches.
- every value carries its JMS type at run time (byte/short/int, long, float, double, String,
  boolean): arithmetic and comparison use Java binary numeric promotion, so int arithmetic wraps
  at 32 bits, long at 64, float rounds to binary32; strings and booleans compare only with
  ``=``/``<>``; unlike types compare false; a String is never a number in arithmetic (NULL);
  NaN compares false except ``<>``.
- integer division truncates toward zero; integer division by zero is NULL (unknown); floating
  division by zero is ±Infinity/NaN as in Java. These are the choices of
  :mod:`amqp_jms.selector`, so ``selector(text)`` agrees with ``Selector(text).matches``.
- ``LIKE`` matches ``%``/``_`` only (everything else literally, newlines included);
  ``IN``/``LIKE`` need a String value (other types: false).
"""

from __future__ import annotations

from typing import Any

import pandas as pd  # the Arrow UDFs' type hints name it (pandas comes with pyspark's extras)

from ..selector.like import LikeSegment, like_segments

__all__ = ["decode_amqp", "encode_amqp", "selector"]

_HEADERS = {
    "JMSMessageID": "message_id",
    "JMSCorrelationID": "correlation_id",
    "JMSType": "jms_type",
}
_INT_TYPES = ("byte", "short", "int", "ubyte", "ushort")
_LONG_TYPES = ("long", "uint", "ulong")
_NUMERIC = ("I", "L", "F", "D")
#: Exact arithmetic runs in decimal(38,0) (a product of two longs fits) and wraps like Java.
_WIDE = "decimal(38,0)"
_PROPS_SCHEMA = "map<string,struct<type:string,value:string>>"


_VALUE_TYPE = "struct<kind:string,long:bigint,double:double,string:string,boolean:boolean>"


def _mk(
    F: Any, kind: Any, long: Any = None, double: Any = None, string: Any = None, boolean: Any = None
) -> Any:
    """A typed value: one struct column (kind is 'I', 'L', 'F', 'D', 'S', 'B' or NULL)."""

    def field(value: Any, type_name: str) -> Any:
        return (F.lit(None) if value is None else value).cast(type_name)

    return F.struct(
        field(kind, "string").alias("kind"),
        field(long, "bigint").alias("long"),
        field(double, "double").alias("double"),
        field(string, "string").alias("string"),
        field(boolean, "boolean").alias("boolean"),
    )


def _of(F: Any, kind: str, col: Any) -> Any:
    """A column of a statically known JMS kind as a typed value (NULL stays NULL)."""
    k = F.when(col.isNotNull(), F.lit(kind))
    return _mk(
        F,
        k,
        long=col if kind in ("I", "L") else None,
        double=col if kind in ("F", "D") else None,
        string=col if kind == "S" else None,
        boolean=col if kind == "B" else None,
    )


def _let(F: Any, value: Any, body: Any) -> Any:
    """Evaluate ``value`` once and hand it to ``body`` (a lambda variable: no tree duplication)."""
    return F.transform(F.array(value), body).getItem(0)


def _let2(F: Any, a: Any, b: Any, body: Any) -> Any:
    pair = F.struct(a.alias("a"), b.alias("b"))
    return F.transform(F.array(pair), lambda p: body(p.getField("a"), p.getField("b"))).getItem(0)


def _as_double(F: Any, v: Any) -> Any:
    return F.when(v["kind"].isin("I", "L"), v["long"].cast("double")).otherwise(v["double"])


def _wrap(F: Any, wide: Any, bits: int) -> Any:
    """Two's complement wrap of an exact result to ``bits`` bits, as Java's int/long arithmetic."""
    half = F.lit(str(2 ** (bits - 1))).cast(_WIDE)
    full = F.lit(str(2**bits)).cast(_WIDE)
    return (F.pmod(wide + half, full) - half).cast("long")


def _promote(F: Any, a: Any, b: Any) -> Any:
    """Java binary numeric promotion: the wider of the two kinds (NULL unless both numeric)."""
    ka, kb = a["kind"], b["kind"]
    return F.when(
        ka.isin(*_NUMERIC) & kb.isin(*_NUMERIC),
        F.when((ka == "D") | (kb == "D"), F.lit("D"))
        .when((ka == "F") | (kb == "F"), F.lit("F"))
        .when((ka == "L") | (kb == "L"), F.lit("L"))
        .otherwise(F.lit("I")),
    )


def _as_float(F: Any, v: Any, promoted: Any) -> Any:
    """``v`` converted to the approximate kind ``promoted`` (a float rounds to binary32)."""
    d = _as_double(F, v)
    return F.when(promoted == "F", d.cast("float").cast("double")).otherwise(d)


class _Compiler:
    def __init__(self) -> None:
        from pyspark.sql import functions as F

        self.F = F
        self.props = F.from_json(F.col("typed_properties"), _PROPS_SCHEMA)

    # values -----------------------------------------------------------------------------
    def value(self, node: Any) -> Any:
        from ..selector import ast

        F = self.F
        if isinstance(node, ast.Literal):
            kind = {"string": "S", "boolean": "B", "int": "I", "long": "L", "float": "F"}.get(node.kind, "D")
            return _of(F, kind, F.lit(node.value))
        if isinstance(node, ast.Identifier):
            return self.identifier(node.name)
        if isinstance(node, ast.Unary):
            v = self.value(node.operand)
            if node.op == "+":
                return _let(
                    F,
                    v,
                    lambda x: F.when(x["kind"].isin(*_NUMERIC), x).otherwise(_mk(F, None)),
                )
            return self.arithmetic("-", _of(F, "I", F.lit(0)), v)
        if isinstance(node, ast.Arithmetic):
            return self.arithmetic(node.op, self.value(node.left), self.value(node.right))
        # a condition used as a value (e.g. ``(a > 1) = TRUE``)
        return _of(F, "B", self.condition(node))

    def identifier(self, name: str) -> Any:
        F = self.F
        if name in _HEADERS:
            return _of(F, "S", F.col(_HEADERS[name]))
        if name == "JMSPriority":
            return _of(F, "I", F.col("priority"))
        if name == "JMSTimestamp":
            return _of(F, "L", F.unix_millis(F.col("timestamp")))
        if name == "JMSDeliveryMode":
            mode = F.col("delivery_mode")
            text = F.when(mode == 2, F.lit("PERSISTENT")).when(mode == 1, F.lit("NON_PERSISTENT"))
            return _of(F, "S", text)

        def typed(entry: Any) -> Any:
            jtype, raw = entry.getField("type"), entry.getField("value")
            kind = (
                F.when(jtype.isin(*_INT_TYPES), F.lit("I"))
                .when(jtype.isin(*_LONG_TYPES), F.lit("L"))
                .when(jtype == "float", F.lit("F"))
                .when(jtype == "double", F.lit("D"))
                .when(jtype == "string", F.lit("S"))
                .when(jtype == "boolean", F.lit("B"))
            )
            return _mk(F, kind, raw.try_cast("long"), raw.try_cast("double"), raw, raw == F.lit("true"))

        return _let(F, self.props.getItem(name), typed)

    def arithmetic(self, op: str, a: Any, b: Any) -> Any:
        F = self.F

        def body(x: Any, y: Any) -> Any:
            kind = _promote(F, x, y)
            return _let(F, kind, lambda k: self._arith(op, x, y, k))

        return _let2(F, a, b, body)

    def _arith(self, op: str, a: Any, b: Any, kind: Any) -> Any:
        F = self.F
        x, y = _as_float(F, a, kind), _as_float(F, b, kind)
        wide_a, wide_b = a["long"].cast(_WIDE), b["long"].cast(_WIDE)
        if op == "+":
            wide, double = wide_a + wide_b, x + y
        elif op == "-":
            wide, double = wide_a - wide_b, x - y
        elif op == "*":
            wide, double = wide_a * wide_b, x * y
        else:
            # truncation toward zero; exact division by zero is NULL (unknown)
            nonzero = b["long"] != 0
            quotient = wide_a / F.when(nonzero, wide_b)
            wide = F.when(quotient >= 0, F.floor(quotient)).otherwise(F.ceil(quotient)).cast(_WIDE)
            double = (
                F.when(y != 0, x / F.when(y != 0, y))
                .when(F.isnan(x) | (x == 0), F.lit(float("nan")))
                .when(x > 0, F.lit(float("inf")))
                .otherwise(F.lit(float("-inf")))
            )
        long = F.when(kind == "I", _wrap(F, wide, 32)).when(kind == "L", _wrap(F, wide, 64))
        double = F.when(kind == "F", double.cast("float").cast("double")).when(kind == "D", double)
        final = F.when(~kind.isin("I", "L") | long.isNotNull(), kind)
        return _mk(F, final, long, double)

    # conditions -------------------------------------------------------------------------
    def compare(self, op: str, a: Any, b: Any) -> Any:
        F = self.F

        def apply(x: Any, y: Any) -> Any:
            return {
                "=": x == y,
                "<>": x != y,
                "<": x < y,
                "<=": x <= y,
                ">": x > y,
                ">=": x >= y,
            }[op]

        def body(a: Any, b: Any) -> Any:
            kind = _promote(F, a, b)
            x, y = _as_float(F, a, kind), _as_float(F, b, kind)
            num = (
                F.when(kind.isin("I", "L"), apply(a["long"], b["long"]))
                .when(F.isnan(x) | F.isnan(y), F.lit(op == "<>"))
                .otherwise(apply(x, y))
            )
            equality = op in ("=", "<>")
            strings = apply(a["string"], b["string"]) if equality else F.lit(False)
            booleans = apply(a["boolean"], b["boolean"]) if equality else F.lit(False)
            ka, kb = a["kind"], b["kind"]
            return (
                F.when(ka.isNull() | kb.isNull(), F.lit(None).cast("boolean"))
                .when(kind.isNotNull(), num)
                .when((ka == "S") & (kb == "S"), strings)
                .when((ka == "B") & (kb == "B"), booleans)
                .otherwise(F.lit(False))
            )

        return _let2(F, a, b, body)

    def condition(self, node: Any) -> Any:
        from ..selector import ast

        F = self.F
        if isinstance(node, ast.And):
            return self.condition(node.left) & self.condition(node.right)
        if isinstance(node, ast.Or):
            return self.condition(node.left) | self.condition(node.right)
        if isinstance(node, ast.Not):
            return ~self.condition(node.operand)
        if isinstance(node, ast.Compare):
            return self.compare(node.op, self.value(node.left), self.value(node.right))
        if isinstance(node, ast.Between):
            v, lo, hi = self.value(node.operand), self.value(node.low), self.value(node.high)
            if node.negated:
                return self.compare("<", v, lo) | self.compare(">", v, hi)
            return self.compare(">=", v, lo) & self.compare("<=", v, hi)
        if isinstance(node, ast.In | ast.Like):
            if isinstance(node, ast.In):
                values = node.values

                def test(text: Any) -> Any:
                    return text.isin(*values)
            else:
                regex = _like_regex(node.pattern, node.escape)

                def test(text: Any) -> Any:
                    return text.rlike(regex)

            # IN on a non-String is unknown (so NOT IN does not match it either: TCK)
            other = F.lit(None).cast("boolean") if isinstance(node, ast.In) else F.lit(False)

            def hit(v: Any) -> Any:
                return (
                    F.when(v["kind"].isNull(), F.lit(None).cast("boolean"))
                    .when(v["kind"] == "S", test(v["string"]))
                    .otherwise(other)
                )

            result = _let(F, self.value(node.identifier), hit)
            return ~result if node.negated else result
        if isinstance(node, ast.IsNull):
            kind = self.value(node.identifier)["kind"]
            return kind.isNotNull() if node.negated else kind.isNull()
        # a bare value used as a condition: only a boolean counts
        return _let(F, self.value(node), lambda v: F.when(v["kind"] == "B", v["boolean"]))


def _like_regex(pattern: str, escape: str | None) -> str:
    """A Java regex (Spark's ``rlike``) matching exactly what the LIKE pattern matches, in time
    linear in the text: ``%`` as ``.*`` would backtrack (``'%a%a%a%a%b'`` on a long run of ``a``
    takes minutes), so each middle segment is an atomic group ``(?>.*?seg)`` found once at its
    leftmost place and never retried, which is exact for LIKE (see ``selector/like.py``)."""
    segments = like_segments(pattern, escape)

    def seg(s: LikeSegment) -> str:
        return "".join("." if c is None else _java_quote(c) for c in s.chars)

    if len(segments) == 1:
        return f"(?s)^{seg(segments[0])}$"
    first, *middle, last = segments
    groups = "".join(f"(?>.*?{seg(m)})" for m in middle if m.chars)
    return f"(?s)^{seg(first)}{groups}.*{seg(last)}$"


def _java_quote(ch: str) -> str:
    if ch.isalnum() or ch == " ":
        return ch
    return f"\\x{{{ord(ch):x}}}"


def selector(text: str) -> Any:
    """``text`` as a boolean Spark ``Column`` over the row schema (unknown → false).

    Raises ``InvalidSelectorException`` for a malformed selector; an empty one matches all.
    """
    from pyspark.sql import functions as F

    from ..selector.parser import parse

    node = parse(text)
    if node is None:
        return F.lit(True)
    return F.coalesce(_Compiler().condition(node), F.lit(False))


def decode_amqp(col: Any, body_as: str = "binary") -> Any:
    """A raw encoded message column (``amqp``) as a struct of the row schema, decoded in Arrow batches."""
    from pyspark.sql.functions import pandas_udf

    from .schema import row_schema

    schema = row_schema(body_as, include_amqp=False)

    @pandas_udf(schema)  # type: ignore[call-overload]
    def _decode(data: pd.Series) -> pd.DataFrame:
        from ._client import decode
        from .schema import message_to_values

        rows = []
        for raw in data:
            values = message_to_values(decode(raw), body_as) if raw is not None else {}
            for name in ("timestamp", "expiration", "delivery_time"):
                if values.get(name) is not None:
                    values[name] = pd.Timestamp(values[name], unit="us", tz="UTC")
            if isinstance(values.get("properties"), list):
                values["properties"] = dict(values["properties"])
            rows.append({name: values.get(name) for name in schema.names})
        return pd.DataFrame(rows, columns=schema.names)

    return _decode(col)


def encode_amqp(*cols: Any) -> Any:
    """Row columns (any subset of the writable ones, by name) as the raw encoded message, BINARY."""
    from pyspark.sql import functions as F
    from pyspark.sql.functions import pandas_udf

    @pandas_udf("binary")  # type: ignore[call-overload]
    def _encode(frame: pd.DataFrame) -> pd.Series:
        from ._client import encode
        from .schema import values_to_message

        out = []
        for record in frame.to_dict("records"):
            values = {k: (None if _isna(v) else v) for k, v in record.items()}
            out.append(encode(values_to_message(values)))
        return pd.Series(out)

    return _encode(F.struct(*cols))


def _isna(value: Any) -> bool:
    try:
        import pandas as pd

        return bool(pd.isna(value)) if not isinstance(value, list | dict | bytes | str) else False
    except (TypeError, ValueError):
        return False
