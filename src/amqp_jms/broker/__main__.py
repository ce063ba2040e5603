"""``python -m amqp_jms.broker``: the same as ``amqp-jms broker``."""

import sys

from .operations.cli import main

sys.exit(main())
