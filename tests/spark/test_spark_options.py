"""Options of the jms data source: defaults, spellings, and unknown/malformed ones rejected."""

from __future__ import annotations

import pickle

import pytest

from amqp_jms.destination import Queue, Topic
from amqp_jms.spark.options import parse_options


def test_defaults_and_required_url() -> None:
    opts = parse_options({"url": "amqp://127.0.0.1:5672", "destination": "queue://orders"})
    assert opts.destination == Queue("orders")
    assert (opts.mode, opts.body_as, opts.include_amqp, opts.delivery_mode, opts.priority) == (
        "browse",
        "binary",
        False,
        2,
        4,
    )
    assert opts.max_messages_per_trigger is None
    with pytest.raises(ValueError, match="'url' is required"):
        parse_options({"destination": "queue://a"})


def test_keys_arrive_lower_cased_from_spark() -> None:
    opts = parse_options(
        {
            "url": "amqp://h:1",
            "destination": "topic://prices",
            "maxmessagespertrigger": "500",
            "walpath": "/tmp/wal",
            "clientid": "c1",
            "subscription": "sub1",
            "bodyas": "STRING",
            "includeamqp": "true",
            "deliverymode": "NON_PERSISTENT",
        }
    )
    assert opts.destination == Topic("prices")
    assert opts.max_messages_per_trigger == 500
    assert opts.wal_path == "/tmp/wal"
    assert (opts.client_id, opts.subscription, opts.body_as, opts.include_amqp) == (
        "c1",
        "sub1",
        "string",
        True,
    )
    assert opts.delivery_mode == 1


def test_max_offsets_per_trigger_is_kafkas_name_for_max_messages_per_trigger() -> None:
    """A Kafka user's ``maxOffsetsPerTrigger`` (lower-cased by Spark) sets the same read limit."""
    from pyspark.sql.streaming.datasource import ReadMaxRows

    from amqp_jms.spark.stream import JmsStreamReader

    opts = parse_options({"url": "amqp://h:1", "destination": "q", "maxoffsetspertrigger": "250"})
    assert opts.max_messages_per_trigger == 250
    assert JmsStreamReader(opts).getDefaultReadLimit() == ReadMaxRows(250)
    assert parse_options({"url": "amqp://h:1", "failondataloss": "false"}).fail_on_data_loss is False
    assert parse_options({"url": "amqp://h:1"}).fail_on_data_loss is True


def test_client_options_restore_their_spelling_in_the_url() -> None:
    opts = parse_options(
        {"url": "amqp://h:5672?amqp.idleTimeout=0", "jms.prefetchpolicy.all": "50", "destination": "q"}
    )
    assert opts.url == "amqp://h:5672?amqp.idleTimeout=0&jms.prefetchPolicy.all=50"
    assert opts.destination == Queue("q")


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"destinaton": "queue://a"}, "unknown option 'destinaton'"),
        ({"mode": "drain"}, "'mode' must be one of browse, consume"),
        ({"maxMessagesPerTrigger": "0"}, "'maxMessagesPerTrigger' must be >= 1"),
        ({"maxMessages": "ten"}, "'maxMessages' must be an integer"),
        ({"priority": "10"}, "'priority' must be 0..9"),
        ({"deliveryMode": "3"}, "'deliveryMode' must be PERSISTENT"),
        ({"includeAmqp": "maybe"}, "'includeAmqp' must be true or false"),
        ({"destination": "temp-queue://x"}, "must be queue://"),
        ({"destination": "fifo://x"}, "unknown destination scheme"),
        ({"subscription": "s"}, "'subscription' only applies to topic"),
        ({"messageType": "Json"}, "'messageType' must be one of"),
        ({"maxOffsetsPerTrigger": "0"}, "'maxOffsetsPerTrigger' must be >= 1"),
        ({"maxOffsetsPerTrigger": "5", "maxMessagesPerTrigger": "5"}, "aliases; give one"),
        ({"failOnDataLoss": "perhaps"}, "'failOnDataLoss' must be true or false"),
    ],
)
def test_bad_options_fail_naming_the_option(options: dict[str, str], message: str) -> None:
    full = {"url": "amqp://h:1", "destination": "queue://a", **options}
    with pytest.raises(ValueError, match=message):
        parse_options(full)


def test_spark_own_sink_options_are_ignored() -> None:
    opts = parse_options(
        {"url": "amqp://h:1", "destination": "q", "checkpointLocation": "/c", "queryName": "n"}
    )
    assert opts.destination == Queue("q")


def test_url_scheme_checked_and_path_is_destination_alias() -> None:
    with pytest.raises(ValueError, match="amqp://, amqps:// or failover:"):
        parse_options({"url": "http://h:1"})
    assert parse_options({"url": "amqps://h:1", "path": "topic://t"}).destination == Topic("t")


def test_options_are_frozen_and_picklable() -> None:
    opts = parse_options({"url": "amqp://h:1", "destination": "queue://a", "selector": "a = 1"})
    assert pickle.loads(pickle.dumps(opts)) == opts
    with pytest.raises(AttributeError):
        opts.url = "x"  # type: ignore[misc]
