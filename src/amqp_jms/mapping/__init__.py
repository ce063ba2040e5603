"""amqp_jms.mapping: the OASIS AMQP JMS Mapping (wd06), both directions, as pure functions.

* ``encode(message, *, context=None) -> bytes``: what a producer transfers.
* ``decode(data, *, context=None) -> Message``: what a consumer receives (read-only, the right
  subclass, every header set).
* ``amqp_jms.mapping.proton_bridge.to_amqp`` / ``from_amqp``: the same with ``proton.Message``
  objects; an explicit import, so that the mapping itself imports without proton.
* ``MappingContext``: consumer destination, peer queue/topic prefixes, producer time-to-live,
  current time.

Receivers also accept the early draft's forms (``x-opt-to-type``/``x-opt-reply-type`` strings,
``x-opt-jms-type``, bodies without a type annotation). Malformed input raises
``MessageFormatException`` saying what is wrong. Id encodings and other choices: docs/mapping.md.

For the broker and Spark, :mod:`amqp_jms.mapping.codec` gives section-level access without a JMS
message: ``decode_sections(data, body=False)`` -> ``Sections`` (``header``,
``message_annotations``, ``properties``, ``application_properties`` ..., with byte spans), and
``Sections.with_delivery_count(n)`` re-encodes only the header. ``message_from_sections`` turns
such a ``Sections`` into the JMS message without parsing twice.
"""

from .codec import Sections, decode_sections, encode_sections
from .context import MappingContext
from .inbound import decode, message_from_sections
from .outbound import encode

__all__ = [
    "MappingContext",
    "Sections",
    "decode",
    "decode_sections",
    "encode",
    "encode_sections",
    "message_from_sections",
]
