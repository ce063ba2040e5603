"""The demo's data: a realistic, reproducible order stream, and an IBM MQ queue dump of orders.

Every order carries an ``order_id`` property that survives every hop (MQ dump → bridge → AMQP →
Spark), so the demo can account for each message end to end without trusting any one stage.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

__all__ = [
    "REGIONS",
    "SELECTOR",
    "Order",
    "build_jms_message",
    "orders",
    "write_mq_dump",
]

REGIONS = ("EU", "US", "APAC", "LATAM")
_REGION_WEIGHTS = (0.35, 0.35, 0.2, 0.1)
SELECTOR = "region IN ('EU', 'US') AND total >= 100.0"
"""What the demo's Spark pipeline selects (evaluated by the broker)."""

_PRODUCTS = [
    ("SKU-1001", "espresso beans 1kg", 24.50),
    ("SKU-1002", "grinder", 189.00),
    ("SKU-1003", "milk jug", 12.90),
    ("SKU-1004", "tamper", 29.00),
    ("SKU-1005", "scale", 54.99),
    ("SKU-1006", "kettle", 79.00),
    ("SKU-1007", "filter papers x100", 6.40),
    ("SKU-1008", "espresso machine", 649.00),
]


@dataclass(frozen=True)
class Order:
    """One generated order and how it is to be sent."""

    order_id: str
    region: str
    total: float
    priority: int
    customer: str
    items: tuple[tuple[str, int, float], ...]
    kind: str  # text | map | bytes | stream
    delivery_delay_ms: int = 0
    ttl_ms: int = 0
    status: str = "created"

    def as_json(self) -> str:
        return json.dumps(
            {
                "order_id": self.order_id,
                "customer": self.customer,
                "region": self.region,
                "total": self.total,
                "items": [{"sku": s, "qty": q, "price": p} for s, q, p in self.items],
            },
            separators=(",", ":"),
        )


def orders(
    n: int,
    *,
    seed: int = 7,
    prefix: str = "ord",
    kinds: tuple[str, ...] = ("text", "map"),
    delay_share: float = 0.05,
    ttl_share: float = 0.1,
) -> Iterator[Order]:
    """``n`` reproducible orders; ``kinds`` are cycled with text the most common."""
    rng = random.Random(seed)
    weights = [6 if k == "text" else 3 if k == "map" else 1 for k in kinds]
    for i in range(n):
        items = []
        for _ in range(rng.choice((1, 1, 2, 3))):
            sku, _name, price = rng.choice(_PRODUCTS)
            items.append((sku, rng.choice((1, 1, 1, 2, 3)), price))
        total = round(sum(q * p for _, q, p in items), 2)
        yield Order(
            order_id=f"{prefix}-{i + 1:07d}",
            region=rng.choices(REGIONS, _REGION_WEIGHTS)[0],
            total=total,
            priority=rng.choice((4, 4, 4, 4, 5, 7, 9, 1)),
            customer=f"cust-{rng.randrange(1, 5000):05d}",
            items=tuple(items),
            kind=rng.choices(kinds, weights)[0],
            delivery_delay_ms=1500 if rng.random() < delay_share else 0,
            ttl_ms=3_600_000 if rng.random() < ttl_share else 0,
            status=rng.choice(("created", "created", "created", "updated")),
        )


def build_jms_message(order: Order, factory: Any = None) -> Any:
    """The JMS message for ``order``: body by ``order.kind``, typed properties, JMSType, correlation.

    ``factory`` is a JMS ``Session`` (messages for sending) or ``None`` (standalone message objects,
    e.g. for the MQ dump).
    """
    from ..types import Double, Int

    if factory is None:
        from .. import BytesMessage, MapMessage, StreamMessage, TextMessage

        make: dict[str, Any] = {
            "text": TextMessage,
            "map": MapMessage,
            "bytes": BytesMessage,
            "stream": StreamMessage,
        }
        msg = make[order.kind]()
    else:
        msg = {
            "text": factory.create_text_message,
            "map": factory.create_map_message,
            "bytes": factory.create_bytes_message,
            "stream": factory.create_stream_message,
        }[order.kind]()
    if order.kind == "text":
        msg.set_text(order.as_json())
    elif order.kind == "map":
        msg.set_string("order_id", order.order_id)
        msg.set_string("customer", order.customer)
        msg.set_double("total", order.total)
        msg.set_int("lines", len(order.items))
        msg.set_string("skus", ",".join(s for s, _, _ in order.items))
    elif order.kind == "bytes":
        msg.write_bytes(order.as_json().encode())
    else:
        msg.write_string(order.order_id)
        msg.write_double(order.total)
        msg.write_int(len(order.items))
    msg.set_string_property("order_id", order.order_id)
    msg.set_string_property("region", order.region)
    msg.set_object_property("total", Double(order.total))
    msg.set_object_property("priority", Int(order.priority))
    msg.set_string_property("status", order.status)
    msg.set_jms_type(f"order.{order.status}")
    msg.set_jms_correlation_id(order.customer)
    msg.set_jms_priority(order.priority)
    return msg


def write_mq_dump(path: Path, mq_orders: list[Order]) -> int:
    """Write ``mq_orders`` as IBM MQ messages (MQMD + MQRFH2 as IBM's JMS client puts them)."""
    from ..destination import Queue
    from ..mq import to_mq, write_dump

    records = []
    now = datetime.now(UTC)
    for i, o in enumerate(mq_orders):
        msg = build_jms_message(o)
        msg.set_jms_destination(Queue("ORDERS.IN"))
        msg.set_jms_delivery_mode(2)
        mq = to_mq(msg, queue_manager="QM1")
        # what the queue manager fills in at MQPUT: a unique MsgId and the put date/time (GMT)
        mq.md.msg_id = b"AMQ QM1         " + i.to_bytes(8, "big")
        put = now - timedelta(seconds=len(mq_orders) - i)
        mq.md.put_date = put.strftime("%Y%m%d")
        mq.md.put_time = put.strftime("%H%M%S") + f"{put.microsecond // 10000:02d}"
        records.append((mq.md, mq.data))
    path.parent.mkdir(parents=True, exist_ok=True)
    write_dump(records, path, header="orders from QM1/ORDERS.IN, generated by amqp-jms demo")
    return len(records)
