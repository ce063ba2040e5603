"""JMS message selectors (JMS 2.0 section 3.8): one engine for the client, the broker and Spark.

``Selector(text)`` parses a selector into a small AST (``amqp_jms.selector.ast``), compiles it
once into Python closures for per-message evaluation (``matches``, ``matches_lookup``), and
evaluates it vectorized over Arrow data (``evaluate_batch``). The Spark connector compiles the same
AST to Spark Columns.

Choices where the specification is silent (each one tested, and listed in docs/selectors.md),
following what a Java JMS user gets from Java semantics / ActiveMQ:

- Types: a property's type is the one it was set with (``amqp_jms.types``); no conversions. Byte,
  Short, Int are Java ``int``, plain int / Long are ``long``, Float is binary32, plain float is
  double. JMSPriority is an ``int``, JMSTimestamp a ``long``, JMSDeliveryMode the String
  ``'PERSISTENT'``/``'NON_PERSISTENT'``.
- Numeric literals follow Java: ``57`` is an int, ``57L`` a long, an exact literal outside the
  int range is a long, outside the long range it is an ``InvalidSelectorException``; hex, octal
  and binary literals are two's complement (``0xFFFFFFFF`` = -1) like Java; ``1.5F`` is a
  float, other approximate literals are doubles; out-of-range or underflowing ones are rejected.
- Arithmetic and comparison use Java binary numeric promotion (int < long < float < double), so
  ``Int`` arithmetic wraps at 32 bits and long arithmetic at 64 bits, like Java.
- Integer division truncates toward zero (Java). Integer division by zero is NULL (unknown; Java
  would throw, ActiveMQ then fails the match); floating division by zero is +-Infinity / NaN.
- Arithmetic or unary minus on a String, boolean or other non-number gives NULL (unknown).
- Comparing unlike types is FALSE (spec); ordering Strings or booleans (``<`` etc.) is FALSE at
  run time and an ``InvalidSelectorException`` when a literal makes it visible at parse time.
- An identifier used as a condition is its boolean value; a non-boolean value is unknown.
- ``x NOT BETWEEN a AND b`` is ``x < a OR x > b`` (the spec's equivalence), ``NOT IN``/``NOT
  LIKE`` are ``NOT (IN/LIKE)``; LIKE on a non-String value is FALSE (so NOT LIKE is TRUE); IN on
  a non-String value is unknown, so neither IN nor NOT IN matches it (Jakarta Messaging TCK).
- Comparing a boolean (literal or condition) with a number (``TRUE = 0``) is an
  ``InvalidSelectorException`` when the selector is created (Jakarta Messaging TCK).
- ``ESCAPE`` makes the next pattern character literal, whatever it is; a pattern ending in its
  escape character is an ``InvalidSelectorException``.
- Header names other than the six listed in 3.8.1.1 (``JMSDestination``, ``JMSRedelivered``,
  ...) are rejected; ``JMSX*`` and ``JMS_*`` names are ordinary property lookups.
- ``NULL`` is only allowed in ``IS [NOT] NULL``; ``=`` and ``<>`` do not chain (``a = b = c``).
"""

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
    term_count,
)
from .selector import Selector

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
    "Selector",
    "Unary",
    "term_count",
]
