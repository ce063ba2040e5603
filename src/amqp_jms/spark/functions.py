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
- every value carries its type at run time: numbers compare by Java promotion (exact vs
  approximate compares as double), strings and booleans only with ``=``/``<>``, unlike types
  compare false, a string is never a number in arithmetic (the result is NULL), NaN compares
  false except ``<>``.
- exact arithmetic is 64-bit; integer division truncates toward zero; exact division by zero and
  exact overflow give NULL (unknown); approximate division by zero gives ±Infinity/NaN as in Java.
- ``LIKE`` matches ``%``/``_`` only (everything else literally, newlines included);
  ``IN``/``LIKE`` need a String value (other types: false).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["decode_amqp", "encode_amqp", "selector"]

_HEADERS = {
    "JMSMessageID": "message_id",
    "JMSCorrelationID": "correlation_id",
    "JMSType": "jms_type",
}
_EXACT_TYPES = ("byte", "short", "int", "long", "ubyte", "ushort", "uint", "ulong")
_APPROX_TYPES = ("float", "double")
_PROPS_SCHEMA = "map<string,struct<type:string,value:string>>"


@dataclass(frozen=True)
class _Typed:
    """A value whose JMS type is known only per row: ``kind`` is 'L', 'D', 'S', 'B' or NULL."""

    kind: Any
    long: Any
    double: Any
    string: Any
    boolean: Any

    def as_double(self) -> Any:
        from pyspark.sql import functions as F

        return F.when(self.kind == "L", self.long.cast("double")).otherwise(self.double)


def _none(F: Any) -> Any:
    return F.lit(None)


def _typed(F: Any, kind: str, col: Any) -> _Typed:
    null = F.lit(None)
    k = F.when(col.isNotNull(), F.lit(kind))
    return _Typed(
        k,
        col.cast("long") if kind == "L" else null.cast("long"),
        col.cast("double") if kind == "D" else null.cast("double"),
        col.cast("string") if kind == "S" else null.cast("string"),
        col.cast("boolean") if kind == "B" else null.cast("boolean"),
    )


class _Compiler:
    def __init__(self) -> None:
        from pyspark.sql import functions as F

        self.F = F
        self.props = F.from_json(F.col("typed_properties"), _PROPS_SCHEMA)

    # values -----------------------------------------------------------------------------
    def value(self, node: Any) -> _Typed:
        from ..selector import ast

        F = self.F
        if isinstance(node, ast.Literal):
            kind = {"string": "S", "boolean": "B", "int": "L", "long": "L"}.get(node.kind, "D")
            return _typed(F, kind, F.lit(node.value))
        if isinstance(node, ast.Identifier):
            return self.identifier(node.name)
        if isinstance(node, ast.Unary):
            v = self.value(node.operand)
            if node.op == "+":
                return self._numeric_only(v)
            return _Typed(
                F.when(v.kind.isin("L", "D"), v.kind),
                F.try_subtract(F.lit(0).cast("long"), v.long),
                -v.double,
                F.lit(None).cast("string"),
                F.lit(None).cast("boolean"),
            )
        if isinstance(node, ast.Arithmetic):
            return self.arithmetic(node.op, self.value(node.left), self.value(node.right))
        # a condition used as a value (e.g. ``(a > 1) = TRUE``)
        return _typed(F, "B", self.condition(node))

    def _numeric_only(self, v: _Typed) -> _Typed:
        F = self.F
        return _Typed(F.when(v.kind.isin("L", "D"), v.kind), v.long, v.double, v.string, v.boolean)

    def identifier(self, name: str) -> _Typed:
        F = self.F
        if name in _HEADERS:
            return _typed(F, "S", F.col(_HEADERS[name]))
        if name == "JMSPriority":
            return _typed(F, "L", F.col("priority"))
        if name == "JMSTimestamp":
            return _typed(F, "L", F.unix_millis(F.col("timestamp")))
        if name == "JMSDeliveryMode":
            mode = F.col("delivery_mode")
            text = F.when(mode == 2, F.lit("PERSISTENT")).when(mode == 1, F.lit("NON_PERSISTENT"))
            return _typed(F, "S", text)
        entry = self.props.getItem(name)
        jtype = entry.getField("type")
        raw = entry.getField("value")
        kind = (
            F.when(jtype.isin(*_EXACT_TYPES), F.lit("L"))
            .when(jtype.isin(*_APPROX_TYPES), F.lit("D"))
            .when(jtype == "string", F.lit("S"))
            .when(jtype == "boolean", F.lit("B"))
        )
        return _Typed(
            kind,
            raw.try_cast("long"),
            raw.try_cast("double"),
            raw,
            raw == F.lit("true"),
        )

    def arithmetic(self, op: str, a: _Typed, b: _Typed) -> _Typed:
        F = self.F
        numeric = a.kind.isin("L", "D") & b.kind.isin("L", "D")
        exact = (a.kind == "L") & (b.kind == "L")
        kind = F.when(numeric, F.when(exact, F.lit("L")).otherwise(F.lit("D")))
        x, y = a.as_double(), b.as_double()
        if op == "+":
            long, double = F.try_add(a.long, b.long), x + y
        elif op == "-":
            long, double = F.try_subtract(a.long, b.long), x - y
        elif op == "*":
            long, double = F.try_multiply(a.long, b.long), x * y
        else:
            quotient = (a.long.cast("decimal(20,0)") / b.long.cast("decimal(20,0)")).try_cast("long")
            long = F.when(b.long != 0, quotient)
            double = (
                F.when(y != 0, x / F.when(y != 0, y))
                .when(F.isnan(x) | (x == 0), F.lit(float("nan")))
                .when(x > 0, F.lit(float("inf")))
                .otherwise(F.lit(float("-inf")))
            )
        # exact overflow / division by zero leave ``long`` NULL: the result is unknown
        kind = F.when(~exact | long.isNotNull(), kind)
        null = F.lit(None)
        return _Typed(kind, long, double, null.cast("string"), null.cast("boolean"))

    # conditions -------------------------------------------------------------------------
    def compare(self, op: str, a: _Typed, b: _Typed) -> Any:
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

        numeric = a.kind.isin("L", "D") & b.kind.isin("L", "D")
        exact = (a.kind == "L") & (b.kind == "L")
        x, y = a.as_double(), b.as_double()
        nan = F.isnan(x) | F.isnan(y)
        num = F.when(exact, apply(a.long, b.long)).when(nan, F.lit(op == "<>")).otherwise(apply(x, y))
        equality = op in ("=", "<>")
        strings = apply(a.string, b.string) if equality else F.lit(False)
        booleans = apply(a.boolean, b.boolean) if equality else F.lit(False)
        return (
            F.when(a.kind.isNull() | b.kind.isNull(), F.lit(None).cast("boolean"))
            .when(numeric, num)
            .when((a.kind == "S") & (b.kind == "S"), strings)
            .when((a.kind == "B") & (b.kind == "B"), booleans)
            .otherwise(F.lit(False))
        )

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
        if isinstance(node, ast.In):
            v = self.value(node.identifier)
            hit = (
                F.when(v.kind.isNull(), F.lit(None).cast("boolean"))
                .when(v.kind == "S", v.string.isin(*node.values))
                .otherwise(F.lit(False))
            )
            return ~hit if node.negated else hit
        if isinstance(node, ast.Like):
            v = self.value(node.identifier)
            regex = _like_regex(node.pattern, node.escape)
            hit = (
                F.when(v.kind.isNull(), F.lit(None).cast("boolean"))
                .when(v.kind == "S", v.string.rlike(regex))
                .otherwise(F.lit(False))
            )
            return ~hit if node.negated else hit
        if isinstance(node, ast.IsNull):
            v = self.value(node.identifier)
            return v.kind.isNotNull() if node.negated else v.kind.isNull()
        # a bare value used as a condition: only a boolean counts
        v = self.value(node)
        return F.when(v.kind == "B", v.boolean)


def _like_regex(pattern: str, escape: str | None) -> str:
    """A Java regex (Spark's ``rlike``) matching exactly what the LIKE pattern matches."""
    out = ["(?s)^"]
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if escape is not None and ch == escape and i + 1 < len(pattern):
            out.append(_java_quote(pattern[i + 1]))
            i += 2
            continue
        if ch == "%":
            out.append(".*")
        elif ch == "_":
            out.append(".")
        else:
            out.append(_java_quote(ch))
        i += 1
    out.append("$")
    return "".join(out)


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
    def _decode(data: Any) -> Any:
        import pandas as pd

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
    def _encode(frame: Any) -> Any:
        import pandas as pd

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
