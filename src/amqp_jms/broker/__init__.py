"""amqp_jms.broker."""
