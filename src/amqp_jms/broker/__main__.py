"""``python -m amqp_jms.broker``: the same as ``amqp-jms broker``."""

import sys

from .cli import main

sys.exit(main())
