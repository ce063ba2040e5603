"""The ``jms`` sink with a ``failover:`` url rides through a dropped connection (a real fault, a
:class:`FaultProxy` drop mid-write): the task re-sends what the failover voided, under the same
message ids. (The source with a failover url over a broker restart: test_spark_resilience.py.)"""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from amqp_jms import Queue
from amqp_jms.client import ConnectionFactory
from amqp_jms.testing.proxy import FaultProxy

pytestmark = [pytest.mark.spark, pytest.mark.slow]

FAST = "failover.initialReconnectDelay=0&failover.reconnectDelay=50&failover.maxReconnectDelay=250"


def _drain_texts(url: str, queue: str) -> list[tuple[str, str]]:
    """(message_id, text) of everything on ``queue``."""
    out = []
    with ConnectionFactory(url).create_connection() as conn:
        conn.start()
        consumer = conn.create_session(False).create_consumer(Queue(queue))
        while (message := consumer.receive(1000)) is not None:
            out.append((message.get_jms_message_id(), message.get_text()))
    return out


def test_writer_with_failover_url_resends_what_a_dropped_connection_voided(
    spark: Any, check_same_ids: Any
) -> None:
    from amqp_jms.broker import Broker

    n = 20000
    with Broker(port=0) as broker, FaultProxy(broker.port) as proxy:
        df = spark.range(n).selectExpr("concat('w', cast(id as string)) as text").coalesce(1)
        dropped: list[tuple[int, bool]] = []
        done = threading.Event()

        def drop_mid_write() -> None:
            while proxy.accepted == 0 and not done.is_set():
                time.sleep(0.01)
            time.sleep(0.3)  # the task is sending its partition in one transaction
            dropped.append((proxy.drop(), done.is_set()))

        dropper = threading.Thread(target=drop_mid_write, daemon=True)
        dropper.start()
        try:
            df.write.format("jms").option("url", f"failover:({proxy.url})?{FAST}").option(
                "destination", "queue://fo-written"
            ).mode("append").save()
        finally:
            done.set()
            dropper.join(10)
        assert dropped and dropped[0][0] >= 1 and not dropped[0][1], dropped  # dropped mid-write
        assert proxy.accepted >= 2  # the task's connection came back through failover
        check_same_ids(_drain_texts(broker.url, "fo-written"), {f"w{i}" for i in range(n)})
