"""Only the optional C accelerator of the selector's string tests; all metadata is in pyproject.toml.

``optional=True``: without a C compiler the build still succeeds and the selector uses its numpy
path (``amqp_jms.selector.arrow_strings``), as msgpack and PyYAML do.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "amqp_jms.selector._strkernels",
            ["src/amqp_jms/selector/_strkernels.c"],
            optional=True,
            extra_compile_args=["-O3"],
        )
    ]
)
