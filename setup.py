"""Only the optional C accelerators; all metadata is in pyproject.toml.

``optional=True``: without a C compiler the build still succeeds and each accelerated path runs
its pure-Python twin (as msgpack and PyYAML do), with the same results. ``AMQP_JMS_NO_ACCEL=1``
makes a running process use the Python paths too.

Building: a wheel built where no C compiler works still installs and runs everywhere its tag says
(``cp311-cp311-<platform>``, since setuptools tags any build that declares extensions), just
without the accelerators. ``AMQP_JMS_NO_ACCEL=1 python -m build`` declares none and makes the
pure-Python wheel, ``py3-none-any``, for platforms without a compiled one.

- ``selector._strkernels``: string tests of the vectorized selector (else numpy).
- ``mq._mqxml``: the XML of RFH2 folders and map/stream bodies on the incoming fast path (else
  the expat-backed ElementTree parser).
- ``mq._mqout``: assembling the MQMD and RFH2 bytes on the outgoing path (else struct and str).
- ``mapping.codec._csections``: ``decode_sections``, the AMQP sections of every received message
  and of every transfer the broker routes (else ``sections.decode_sections_py``); and a producer's
  plain text or bytes message assembled from its shape (else ``outbound._encode``'s Python).
- ``provider.amqp._ctransfer``: a waiting send's transfer and its write to the socket in one call
  (else the provider's Python path: ``write_through``).
"""

import os

from setuptools import Extension, setup

_ACCELERATORS = {
    "amqp_jms.selector._strkernels": "src/amqp_jms/selector/_strkernels.c",
    "amqp_jms.mq._mqxml": "src/amqp_jms/mq/_mqxml.c",
    "amqp_jms.mq._mqout": "src/amqp_jms/mq/_mqout.c",
    "amqp_jms.mapping.codec._csections": "src/amqp_jms/mapping/codec/_csections.c",
    "amqp_jms.provider.amqp._ctransfer": "src/amqp_jms/provider/amqp/_ctransfer.c",
}

_PURE = os.environ.get("AMQP_JMS_NO_ACCEL", "") not in ("", "0")

setup(
    ext_modules=[]
    if _PURE
    else [
        Extension(name, [path], optional=True, extra_compile_args=["-O3"])
        for name, path in _ACCELERATORS.items()
    ]
)
