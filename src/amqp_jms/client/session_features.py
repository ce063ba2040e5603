"""The JMS 2.0 session operations of issue 7: a collaborator of ``Session``.

Durable and shared subscriptions (JMS 6.3, 8.3), ``unsubscribe``, temporary destinations
(JMS 6.2.2, 4.4.3) and queue browsers: the session-side checks and link specs. What they share
across the connection (the subscription tracker, the temporary destinations the connection
owns, deleting one) is ``Connection``'s. ``Session``'s JMS methods of these names call
``SessionFeatures``; its ``create_consumer`` asks ``check_consumer_destination``, and a
subscription's consumer is opened with ``Session.open_consumer`` (the link's subscription
fields: ``SubscriptionLink``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from ..destination import Destination, Queue, TemporaryQueue, TemporaryTopic, Topic
from ..exceptions import IllegalStateException, InvalidDestinationException
from ..provider.base import DURABLE_SUBSCRIPTIONS, SHARED_SUBSCRIPTIONS, UNSUBSCRIBE
from .subscriptions import durable_link_name, validate_subscription_name

if TYPE_CHECKING:
    from .browser import QueueBrowser
    from .consumer import MessageConsumer
    from .session import Session

__all__ = ["SessionFeatures", "SubscriptionLink"]


class SubscriptionLink(NamedTuple):
    """How a subscription's consumer attaches (``ConsumerSpec``'s subscription fields, in order)."""

    subscription_name: str
    durable: bool
    shared: bool


class SessionFeatures:
    """A session's subscriptions, temporary destinations and browsers: a collaborator of
    ``Session``, whose JMS methods of the same names call it."""

    def __init__(self, session: Session) -> None:
        self._session = session

    def unsubscribe(self, name: str) -> None:
        self._session.internal.check_open()
        validate_subscription_name(name)
        conn = self._session.internal.connection
        if conn.internal.subscriptions.is_active(name):
            raise IllegalStateException(
                f"cannot unsubscribe {name!r}: the subscription has an active consumer"
            )
        conn.internal.capabilities().check(UNSUBSCRIBE)
        link = durable_link_name(name, conn.get_client_id() is not None)
        seam = conn.internal
        try:
            seam.wait_provider(seam.opened_provider().unsubscribe(link), seam.request_timeout(),
                               "unsubscribe")
        except InvalidDestinationException as e:  # named as the application named it, not by link
            raise InvalidDestinationException(
                f"no durable subscription named {name!r} exists", e.error_code, e
            ) from e

    def subscribe(
        self, topic: Topic, name: str, selector: str | None, no_local: bool, *, shared: bool, durable: bool
    ) -> MessageConsumer:
        self._session.internal.check_open()
        if topic is None or not isinstance(topic, Topic):
            raise InvalidDestinationException(f"a subscription needs a Topic, got {topic!r}")
        validate_subscription_name(name)
        conn = self._session.internal.connection
        has_client_id = conn.get_client_id() is not None
        if durable and not shared and not has_client_id:
            raise IllegalStateException(
                "a durable subscription needs a client ID: set jms.clientID or call set_client_id first"
            )
        caps = conn.internal.capabilities()
        if shared:
            caps.check(SHARED_SUBSCRIPTIONS)
        if durable:
            caps.check(DURABLE_SUBSCRIPTIONS)
        if selector is not None and not selector.strip():
            selector = None
        tracker = conn.internal.subscriptions
        if shared:
            link = tracker.reserve_shared(name, durable, topic, selector, has_client_id)
        else:
            link = tracker.reserve_durable(name, topic, selector)
        try:
            cons = self._session.internal.open_consumer(topic, selector, no_local,
                                               SubscriptionLink(link, durable, shared))
        except BaseException:
            tracker.release(name, shared, durable)
            raise
        tracker.bind(name, shared, durable, cons)
        return cons

    # -- temporary destinations ----------------------------------------------------------------
    def create_temporary_queue(self) -> TemporaryQueue:
        return self._temporary(False)  # type: ignore[return-value]

    def create_temporary_topic(self) -> TemporaryTopic:
        return self._temporary(True)  # type: ignore[return-value]

    def _temporary(self, topic: bool) -> Destination:
        self._session.internal.check_open()
        conn = self._session.internal.connection.internal
        what = "create_temporary_topic" if topic else "create_temporary_queue"
        address = conn.wait_provider(conn.opened_provider().create_temporary(topic), conn.request_timeout(),
                                     what)
        dest: TemporaryQueue | TemporaryTopic = TemporaryTopic(address) if topic else TemporaryQueue(address)
        conn.own_temporary(dest)
        return dest

    def check_consumer_destination(self, destination: Destination) -> None:
        """Asked by ``create_consumer``: a temporary destination is consumable only by its owner."""
        if not destination.is_temporary:
            return
        if not self._session.internal.connection.internal.owns_temporary(destination):
            raise InvalidDestinationException(
                f"{destination} was not created by this connection (or was deleted): only the "
                "connection that created a temporary destination may consume from it"
            )

    # -- browsers ------------------------------------------------------------------------------
    def create_browser(self, queue: Queue, message_selector: str | None = None) -> QueueBrowser:
        from .browser import QueueBrowser

        self._session.internal.check_open()
        if queue is None or not isinstance(queue, Queue):
            raise InvalidDestinationException(f"a browser needs a Queue, got {queue!r}")
        if message_selector is not None and not message_selector.strip():
            message_selector = None
        if message_selector is not None:
            from ..selector import Selector

            Selector(message_selector)  # InvalidSelectorException now, before any frame
        self.check_consumer_destination(queue)
        return QueueBrowser(self._session, queue, message_selector)
