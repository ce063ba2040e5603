"""The selector's evaluators, fast and general, pinned to each other on generated selectors and
messages (the benchmarks justify keeping several; this keeps them one rule).

On every row these agree with the deliberately naive tree walk of ``test_selector_hypothesis``:

- the general closures of ``selector.compiler`` (``compile_condition``: is-true and is-false,
  three-valued logic without ``None``), which the generated code falls back to;
- the generated per-message functions of ``selector.codegen`` (``Selector.matches`` on a JMS
  message, ``matches_lookup`` on a lookup function);
- the Arrow plan (``evaluate_batch``) with the C string kernels (``_strkernels``, when built)
  and with the numpy path that replaces them;
- the broker's filter (``broker.selectors.compile_selector``) on the broker's record of the
  message as the mapping encodes it: properties and headers read back from the bytes.

(An Arrow column has one type, so the generated messages give each property one type per batch.)
Selectors include LIKE with every escape the grammar allows; sizes stay modest (a few messages,
up to six leaves) so each case runs in milliseconds.
"""

from __future__ import annotations

import pyarrow as pa
from hypothesis import HealthCheck, example, given, settings
from test_selector_accel import numpy_path
from test_selector_hypothesis import _message_with as msg
from test_selector_hypothesis import conditions, large_variants, lookup, messages, reference

from amqp_jms.broker.routing.selectors import compile_selector
from amqp_jms.broker.storage.message import BrokerMessage
from amqp_jms.mapping import encode
from amqp_jms.message import Message
from amqp_jms.message._data import view
from amqp_jms.selector import Compare, Identifier, Like, Literal, Node, Not, Or, Selector
from amqp_jms.selector.arrow import messages_to_batch
from amqp_jms.selector.compiler import compile_condition, message_headers
from amqp_jms.types import Byte, Float

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _batch_answers(s: Selector, batch: pa.RecordBatch) -> list[bool]:
    small = s.evaluate_batch(batch).to_pylist()
    for big in large_variants(batch):  # big batches take other kernels
        assert s.evaluate_batch(big).to_pylist() == small * 20
    return small


@SETTINGS
@given(conditions, messages())
@example(Like(Identifier("a"), "a!%_", "!", False), [msg(a="a%b"), msg(a="a%"), msg(a="ab_")])
@example(Not(Like(Identifier("b"), "%\n%", None, True)), [msg(b="x\ny"), msg(b=None), msg()])
@example(
    Or(Compare("=", Identifier("a"), Literal(1.1, "double")), Compare("<", Identifier("c"), Identifier("a"))),
    [msg(a=Float(1.1), c=Byte(1)), msg(a=Float(2.5), c=Byte(2)), msg(c=Byte(3))],
)
def test_every_evaluator_agrees_row_by_row(ast: Node, msgs: list[Message]) -> None:
    s = Selector(str(ast))
    assert s.ast is not None
    walked = [reference(s.ast, lookup(m)) for m in msgs]
    expected = [w is True for w in walked]

    # general closures: is-true and is-false are the walk's TRUE and FALSE
    is_true = compile_condition(s.ast, message_headers(), True)
    is_false = compile_condition(s.ast, message_headers(), False)
    assert [is_true(view(m).properties, m) for m in msgs] == expected
    assert [is_false(view(m).properties, m) for m in msgs] == [w is False for w in walked]

    # generated code
    assert [s.matches(m) for m in msgs] == expected
    assert [s.matches_lookup(lookup(m)) for m in msgs] == expected

    # Arrow: C string kernels (when built), then the numpy path
    batch = messages_to_batch(msgs)
    assert _batch_answers(s, batch) == expected
    with numpy_path():
        assert _batch_answers(Selector(str(ast)), batch) == expected

    # the broker's filter on what the mapping puts on the wire (JMSTimestamp 0, "not set",
    # is the known disagreement pinned in test_broker_selector_view)
    broker_filter = compile_selector(str(ast))
    assert broker_filter is not None
    records = [BrokerMessage.parse(encode(m), now=0.0) for m in msgs]
    stamped = [i for i, m in enumerate(msgs) if m.get_jms_timestamp() != 0]
    assert [broker_filter(records[i]) for i in stamped] == [expected[i] for i in stamped]

