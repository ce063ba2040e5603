"""The broker's queue depth as the ``backlog`` progress figure (``reportBacklog=true``).

AMQP 1.0 has no standard "how many messages wait" question; a broker with an AMQP Management node
answering ``READ`` for its queues (the embedded broker: ``org.amqpjms.queue`` and
``org.amqpjms.subscription``, docs/operations.md) reports ``messageCount``. The probe asks that
once per trigger over a connection of its own (without the query's ``clientId``, which the
receiver holds). It is opt-in because a broker without such a node may auto-create a queue named
``$management`` for the request; the first request that fails or goes unanswered turns the probe
off for the rest of the query with one WARNING, and no figure is reported.
"""

from __future__ import annotations

from typing import Any

from .options import JmsOptions

__all__ = ["BacklogProbe"]

#: How long one depth request may take before the probe gives up on this broker.
TIMEOUT_S = 2.0


class BacklogProbe:
    """Asks the broker's management node for the depth of the query's queue or subscription."""

    def __init__(self, options: JmsOptions) -> None:
        self.options = options
        self._connection: Any = None
        self._client: Any = None
        self._off = False

    def _entity(self) -> tuple[str, str]:
        opts = self.options
        destination = opts.require_destination()
        if destination.is_topic:
            if not opts.subscription:
                raise ValueError("a topic without a subscription has no backlog at the broker")
            return "org.amqpjms.subscription", f"{opts.client_id or ''}:{opts.subscription}"
        return "org.amqpjms.queue", destination.name

    def depth(self) -> int | None:
        """Messages waiting at the broker, or ``None`` (the probe is off)."""
        if self._off:
            return None
        try:
            entity, name = self._entity()
            if self._client is None:
                from ..management import ManagementClient
                from ._client import open_connection

                self._connection = open_connection(self.options.with_(client_id=None))
                self._client = ManagementClient(self._connection, timeout=TIMEOUT_S)
            body = self._client.request("READ", entity, name).body
            return int(body["messageCount"])
        except Exception as exc:
            from .._logs import SPARK

            SPARK.warning(
                "jms data source: reportBacklog: the broker did not report the depth of %s (%s); "
                "no backlog figure for this query",
                self.options.destination,
                exc,
            )
            self._off = True
            self.close()
            return None

    def close(self) -> None:
        connection, self._connection, self._client = self._connection, None, None
        if connection is not None:
            try:
                connection.close()
            except Exception:
                pass
