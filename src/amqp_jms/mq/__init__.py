"""IBM MQ: MQMD and MQRFH2 as bytes, the JMS <-> MQ mapping, dmpmqmsg files and an MQ <-> AMQP bridge.

* ``to_mq(message)`` -> ``MQMessage`` (``.md``, ``.data``, ``.to_bytes()``); ``from_mq(md, data)``
  and ``from_mq_bytes(raw)`` -> a received JMS message. IBM's field tables, both directions.
* ``mq_to_amqp`` / ``amqp_to_mq``: the same composed with ``amqp_jms.mapping``.
* ``MQMD``, ``MQMDE``, ``MQRFH2``, ``parse_headers``: the structures, both byte orders.
* ``load_dump`` / ``write_dump`` / ``iter_dump``: IBM ``dmpmqmsg`` queue-dump text files.

Bad input raises ``MQFormatError`` (a ``MessageFormatException``) naming structure, field, offset.
"""

from .bridge import amqp_to_mq, mq_to_amqp
from .dump import dump_messages, iter_dump, load_dump, write_dump
from .errors import MQFormatError
from .incoming import from_mq, from_mq_bytes
from .message import MQMessage
from .mqmd import MQMD, MQMDE
from .outgoing import to_mq
from .rfh2 import MQRFH2, ParsedData, parse_headers

__all__ = [
    "MQMD",
    "MQMDE",
    "MQRFH2",
    "MQFormatError",
    "MQMessage",
    "ParsedData",
    "amqp_to_mq",
    "dump_messages",
    "from_mq",
    "from_mq_bytes",
    "iter_dump",
    "load_dump",
    "mq_to_amqp",
    "parse_headers",
    "to_mq",
    "write_dump",
]
