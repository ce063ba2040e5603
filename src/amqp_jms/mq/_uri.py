"""JMS destinations as IBM MQ URIs, and JMSType as ``mcd`` fields.

IBM writes ``queue://QMGR/QNAME?props`` (``queue:///QNAME`` when the queue manager is left
open) and ``topic://TOPIC?props``. The JMS model has no queue manager, so it is kept beside the
message (``_extra['mq.dst_q_mgr']`` / ``['mq.reply_to_q_mgr']``) to go back out unchanged.
Temporary destinations add ``temporary=true`` (our choice: IBM's temporary queues are ordinary
named queues, so IBM has no marker for them). Names are percent-encoded where they contain
``%``, ``?`` or ``&`` so any AMQP address survives.
"""

from __future__ import annotations

from functools import lru_cache
from urllib.parse import quote, unquote

from ..destination import Destination, Queue, TemporaryQueue, TemporaryTopic, Topic
from ..exceptions import InvalidDestinationException
from .errors import MQFormatError

__all__ = ["destination_from_uri", "destination_to_uri", "join_jms_type", "split_jms_type"]

_SAFE = "/:@!$'()*+,;=-._~ "


@lru_cache(maxsize=1024)
def destination_to_uri(dest: Destination, q_mgr: str | None = None, field: str = "Dst") -> str:
    """IBM's URI for ``dest``; MQFormatError naming ``field`` when the name is not valid Unicode
    (a lone surrogate would otherwise come back as U+FFFD: the destination silently changed)."""
    try:
        name = quote(dest.name, safe=_SAFE)
    except UnicodeEncodeError as exc:
        raise MQFormatError(
            f"destination name {dest.name!r} cannot be encoded as UTF-8", structure="MQRFH2", field=field
        ) from exc
    temp = "?temporary=true" if dest.is_temporary else ""
    if dest.is_topic:
        return f"topic://{name}{temp}"
    return f"queue://{q_mgr or ''}/{name}{temp}"


@lru_cache(maxsize=1024)
def destination_from_uri(uri: str, field: str) -> tuple[Destination, str]:
    """``(destination, queue manager or "")`` from an IBM destination URI."""
    scheme, sep, rest = uri.partition("://")
    if not sep:
        raise MQFormatError(f"{uri!r} is not a queue:// or topic:// URI", structure="MQRFH2", field=field)
    path, _, query = rest.partition("?")
    params = dict(p.partition("=")[::2] for p in query.split("&") if p)
    temporary = params.get("temporary", "").lower() == "true"
    try:
        if scheme.lower() == "queue":
            q_mgr, slash, name = path.partition("/")
            if not slash:
                q_mgr, name = "", path
            name = unquote(name, errors="strict")
            return (TemporaryQueue(name) if temporary else Queue(name)), q_mgr
        if scheme.lower() == "topic":
            name = unquote(path, errors="strict")
            return (TemporaryTopic(name) if temporary else Topic(name)), ""
    except InvalidDestinationException as exc:  # an empty name
        raise MQFormatError(f"{uri!r}: {exc}", structure="MQRFH2", field=field) from None
    except UnicodeDecodeError:  # replacing the bytes with U+FFFD would name another destination
        raise MQFormatError(
            f"{uri!r}: percent-escapes are not UTF-8", structure="MQRFH2", field=field
        ) from None
    raise MQFormatError(
        f"{uri!r} has scheme {scheme!r}, expected queue or topic", structure="MQRFH2", field=field
    )


def join_jms_type(msd: str, set_: str, type_: str, fmt: str) -> str:
    """JMSType as IBM shows it when mcd has Set or Fmt: ``mcd://msd/set/type[?format=fmt]``."""
    text = f"mcd://{msd}/{set_}/{type_}"
    return f"{text}?format={fmt}" if fmt else text


def split_jms_type(jms_type: str, msd: str) -> tuple[str, str, str]:
    """``(Type, Set, Fmt)`` for a JMSType; a URI form is split only when it reads back identically
    (its domain is this message's Msd), otherwise the whole string goes in Type."""
    if jms_type.startswith("mcd://"):
        path, _, query = jms_type[6:].partition("?")
        parts = path.split("/")
        fmt = query[7:] if query.startswith("format=") else ""
        if len(parts) == 3 and parts[0] == msd and (parts[1] or fmt):
            set_, type_ = parts[1], parts[2]
            if join_jms_type(msd, set_, type_, fmt) == jms_type:
                return type_, set_, fmt
    return jms_type, "", ""
