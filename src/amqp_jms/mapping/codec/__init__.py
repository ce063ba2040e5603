"""A pure-Python AMQP 1.0 type-system codec, and section-level access to AMQP messages.

* :func:`encode_value` / :func:`decode_value`: one AMQP value <-> a typed value of
  :mod:`amqp_jms.types` (plain ``int`` = long, ``float`` = double, ``str`` = string, ``bytes`` =
  binary, ``list``, ``dict``, :class:`Array`, ``Described``, ``Symbol``, ``UInt`` ...).
  Writes the smallest encodings, reads every encoding.
* :func:`decode_sections` -> :class:`Sections`: a payload split into header, annotations,
  properties, application-properties, body and footer, with each section's byte span kept, so a
  broker can route/expire/select without building a JMS message and can bump the delivery-count
  with :meth:`Sections.with_delivery_count` without re-encoding the rest.
* :func:`encode_sections` and the ``encode_*`` section builders for the other direction.

Malformed input raises :class:`~amqp_jms.exceptions.MessageFormatException` saying what and
where. proton's codec is the reference these are tested against (tests/unit/test_mapping_codec*).
"""

from ._array import Array
from ._decode import decode_value, skip_value
from ._encode import encode_value
from .sections import (
    AMQP_SEQUENCE,
    AMQP_VALUE,
    APPLICATION_PROPERTIES,
    DATA,
    DELIVERY_ANNOTATIONS,
    FOOTER,
    HEADER,
    MESSAGE_ANNOTATIONS,
    PROPERTIES,
    SECTION_NAMES,
    Header,
    Properties,
    Sections,
    decode_sections,
    encode_annotations,
    encode_application_properties,
    encode_body_data,
    encode_body_sequence,
    encode_body_value,
    encode_header,
    encode_properties,
    encode_sections,
)

__all__ = [
    "AMQP_SEQUENCE",
    "AMQP_VALUE",
    "APPLICATION_PROPERTIES",
    "DATA",
    "DELIVERY_ANNOTATIONS",
    "FOOTER",
    "HEADER",
    "MESSAGE_ANNOTATIONS",
    "PROPERTIES",
    "SECTION_NAMES",
    "Array",
    "Header",
    "Properties",
    "Sections",
    "decode_sections",
    "decode_value",
    "encode_annotations",
    "encode_application_properties",
    "encode_body_data",
    "encode_body_sequence",
    "encode_body_value",
    "encode_header",
    "encode_properties",
    "encode_sections",
    "encode_value",
    "skip_value",
]
