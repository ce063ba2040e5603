"""amqp_jms.selector."""
