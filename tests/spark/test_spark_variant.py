"""typedPropertiesAs=variant: the Variant encoding of typed properties, checked against PySpark's
own Variant reader (``VariantVal``), and read back for writes."""

from __future__ import annotations

from typing import Any

import pytest

from amqp_jms.exceptions import MessageFormatException
from amqp_jms.spark.variant import decode_properties, encode_properties
from amqp_jms.types import Byte, Char, Double, Float, Int, Long, Short, Timestamp, UInt, ULong

_PROPS: dict[str, Any] = {
    "b": Byte(-3),
    "s": Short(300),
    "i": Int(70000),
    "l": Long(1 << 40),
    "f": Float(1.5),
    "d": Double(2.25),
    "yes": True,
    "no": False,
    "short": "hé",
    "long_text": "x" * 100,
    "c": Char("z"),
    "u": UInt(4_000_000_000),
    "ts": Timestamp(1_700_000_000_000),
}


def test_pyspark_reads_what_the_encoder_writes() -> None:
    from pyspark.sql.types import VariantVal

    value, metadata = encode_properties(_PROPS)
    assert VariantVal(value, metadata).toPython() == {
        "b": -3, "s": 300, "i": 70000, "l": 1 << 40, "f": 1.5, "d": 2.25, "yes": True, "no": False,
        "short": "hé", "long_text": "x" * 100, "c": "z", "u": 4_000_000_000,
        "ts": VariantVal(value, metadata).toPython()["ts"],
    }  # fmt: skip
    assert '"ts":"2023-11-14 22:13:20+00:00"' in VariantVal(value, metadata).toJson()
    many = {f"k{i:03d}": Int(i) for i in range(300)}  # a large object: 4-byte count, 2-byte ids
    value, metadata = encode_properties(many)
    assert VariantVal(value, metadata).toPython() == {k: int(v) for k, v in many.items()}


def test_a_round_trip_keeps_every_jms_type() -> None:
    decoded = decode_properties(*encode_properties(_PROPS))
    jms = {k: v for k, v in _PROPS.items() if k not in ("c", "u", "ts")}
    for name, value in jms.items():
        assert decoded[name] == value and type(decoded[name]) is type(value), name
    assert decoded["c"] == "z" and decoded["u"] == Long(4_000_000_000)
    assert decoded["ts"] == Long(1_700_000_000_000)
    assert decode_properties(*encode_properties({"big": ULong((1 << 64) - 1)}))["big"] == Double(2.0**64)


def test_a_users_parse_json_variant_reads_as_properties() -> None:
    from pyspark.sql.types import VariantVal

    made = VariantVal.parseJson('{"n": 1, "x": 1.5, "s": "a", "big": 12345678901, "t": true}')
    props = decode_properties(made.value, made.metadata)
    assert props == {"n": 1, "x": 1.5, "s": "a", "big": 12345678901, "t": True}
    assert type(props["x"]) is Double
    nested = VariantVal.parseJson('{"a": {"b": 1}}')
    with pytest.raises(MessageFormatException, match="property 'a' is a variant object"):
        decode_properties(nested.value, nested.metadata)
    scalar = VariantVal.parseJson("5")
    with pytest.raises(MessageFormatException, match="must be a variant object"):
        decode_properties(scalar.value, scalar.metadata)
