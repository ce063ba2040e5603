"""Only the optional C accelerators; all metadata is in pyproject.toml.

``optional=True``: without a C compiler the build still succeeds and each accelerated path runs
its pure-Python twin (as msgpack and PyYAML do), with the same results. ``AMQP_JMS_NO_ACCEL=1``
makes a running process use the Python paths too.

- ``selector._strkernels``: string tests of the vectorized selector (else numpy).
- ``mq._mqxml``: the XML of RFH2 folders and map/stream bodies on the incoming fast path (else
  the expat-backed ElementTree parser).
- ``mq._mqout``: assembling the MQMD and RFH2 bytes on the outgoing path (else struct and str).
- ``mapping.codec._csections``: ``decode_sections``, the AMQP sections of every received message
  and of every transfer the broker routes (else ``sections.decode_sections_py``).
"""

from setuptools import Extension, setup

_ACCELERATORS = {
    "amqp_jms.selector._strkernels": "src/amqp_jms/selector/_strkernels.c",
    "amqp_jms.mq._mqxml": "src/amqp_jms/mq/_mqxml.c",
    "amqp_jms.mq._mqout": "src/amqp_jms/mq/_mqout.c",
    "amqp_jms.mapping.codec._csections": "src/amqp_jms/mapping/codec/_csections.c",
}

setup(
    ext_modules=[
        Extension(name, [path], optional=True, extra_compile_args=["-O3"])
        for name, path in _ACCELERATORS.items()
    ]
)
