"""The JMS 2.0 session operations of issue 7, mixed into ``Session``.

Durable and shared subscriptions (JMS 6.3, 8.3), ``unsubscribe``, temporary destinations
(JMS 6.2.2, 4.4.3) and queue browsers: the session-side checks and link specs. What they share
across the connection (the subscription tracker, the temporary destinations the connection
owns, deleting one) is ``Connection``'s; ``Session`` inherits this mixin and calls
``_check_consumer_destination`` from ``create_consumer``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..destination import Destination, Queue, TemporaryQueue, TemporaryTopic, Topic
from ..exceptions import IllegalStateException, InvalidDestinationException
from ..provider.base import DURABLE_SUBSCRIPTIONS, SHARED_SUBSCRIPTIONS, UNSUBSCRIBE
from .subscriptions import validate_subscription_name

if TYPE_CHECKING:
    from .browser import QueueBrowser
    from .connection import Connection
    from .consumer import MessageConsumer

__all__ = ["SessionFeatures"]


class SessionFeatures:
    """Mixin for ``Session``: subscriptions, temporary destinations, browsers."""

    _connection: Connection

    if TYPE_CHECKING:

        def check_open(self) -> None: ...

        def create_consumer(
            self,
            destination: Destination,
            message_selector: str | None = None,
            no_local: bool = False,
            *,
            _spec: dict[str, Any] | None = None,
        ) -> MessageConsumer: ...

    # -- durable and shared subscriptions ------------------------------------------------------
    def create_durable_subscriber(
        self, topic: Topic, name: str, message_selector: str | None = None, no_local: bool = False
    ) -> MessageConsumer:
        """An unshared durable subscription (needs a client ID); its consumer (JMS 6.3)."""
        return self._subscribe(topic, name, message_selector, no_local, shared=False, durable=True)

    def create_durable_consumer(
        self, topic: Topic, name: str, message_selector: str | None = None, no_local: bool = False
    ) -> MessageConsumer:
        """JMS 2.0 name of ``create_durable_subscriber``."""
        return self._subscribe(topic, name, message_selector, no_local, shared=False, durable=True)

    def create_shared_consumer(
        self, topic: Topic, shared_subscription_name: str, message_selector: str | None = None
    ) -> MessageConsumer:
        """A consumer on a shared non-durable subscription (JMS 2.0): messages are shared out."""
        return self._subscribe(topic, shared_subscription_name, message_selector, False,
                               shared=True, durable=False)

    def create_shared_durable_consumer(
        self, topic: Topic, name: str, message_selector: str | None = None
    ) -> MessageConsumer:
        """A consumer on a shared durable subscription (no client ID needed)."""
        return self._subscribe(topic, name, message_selector, False, shared=True, durable=True)

    def unsubscribe(self, name: str) -> None:
        """Delete durable subscription ``name``; it must have no active consumer."""
        self.check_open()
        validate_subscription_name(name)
        conn = self._connection
        if conn.subscriptions.is_active(name):
            raise IllegalStateException(
                f"cannot unsubscribe {name!r}: the subscription has an active consumer"
            )
        conn.capabilities().check(UNSUBSCRIBE)
        link = name if conn.get_client_id() is not None else f"{name}|global"
        conn.wait_provider(conn.provider().unsubscribe(link), conn.request_timeout(), "unsubscribe")

    def _subscribe(
        self, topic: Topic, name: str, selector: str | None, no_local: bool, *, shared: bool, durable: bool
    ) -> MessageConsumer:
        self.check_open()
        if topic is None or not isinstance(topic, Topic):
            raise InvalidDestinationException(f"a subscription needs a Topic, got {topic!r}")
        validate_subscription_name(name)
        conn = self._connection
        has_client_id = conn.get_client_id() is not None
        if durable and not shared and not has_client_id:
            raise IllegalStateException(
                "a durable subscription needs a client ID: set jms.clientID or call set_client_id first"
            )
        caps = conn.capabilities()
        if shared:
            caps.check(SHARED_SUBSCRIPTIONS)
        if durable:
            caps.check(DURABLE_SUBSCRIPTIONS)
        if selector is not None and not selector.strip():
            selector = None
        tracker = conn.subscriptions
        if shared:
            link = tracker.reserve_shared(name, durable, topic, selector, has_client_id)
        else:
            link = tracker.reserve_durable(name, topic, selector)
        try:
            cons = self.create_consumer(topic, selector, no_local, _spec={
                "subscription_name": link, "durable": durable, "shared": shared})
        except BaseException:
            tracker.release(name, shared, durable)
            raise
        tracker.bind(name, shared, durable, cons)
        return cons

    # -- temporary destinations ----------------------------------------------------------------
    def create_temporary_queue(self) -> TemporaryQueue:
        """A queue that lives as long as this connection; only this connection may consume."""
        return self._temporary(False)  # type: ignore[return-value]

    def create_temporary_topic(self) -> TemporaryTopic:
        return self._temporary(True)  # type: ignore[return-value]

    def _temporary(self, topic: bool) -> Destination:
        self.check_open()
        conn = self._connection
        what = "create_temporary_topic" if topic else "create_temporary_queue"
        address = conn.wait_provider(conn.provider().create_temporary(topic), conn.request_timeout(), what)
        dest: TemporaryQueue | TemporaryTopic = TemporaryTopic(address) if topic else TemporaryQueue(address)
        conn.own_temporary(dest)
        return dest

    def _check_consumer_destination(self, destination: Destination) -> None:
        """Hook of ``create_consumer``: a temporary destination is consumable only by its owner."""
        if not destination.is_temporary:
            return
        if not self._connection.owns_temporary(destination):
            raise InvalidDestinationException(
                f"{destination} was not created by this connection (or was deleted): only the "
                "connection that created a temporary destination may consume from it"
            )

    # -- browsers ------------------------------------------------------------------------------
    def create_browser(self, queue: Queue, message_selector: str | None = None) -> QueueBrowser:
        """Look at the messages on ``queue`` without consuming them (JMS 4.9)."""
        from .browser import QueueBrowser

        self.check_open()
        if queue is None or not isinstance(queue, Queue):
            raise InvalidDestinationException(f"a browser needs a Queue, got {queue!r}")
        if message_selector is not None and not message_selector.strip():
            message_selector = None
        if message_selector is not None:
            from ..selector import Selector

            Selector(message_selector)  # InvalidSelectorException now, before any frame
        self._check_consumer_destination(queue)
        return QueueBrowser(self, queue, message_selector)  # type: ignore[arg-type]
