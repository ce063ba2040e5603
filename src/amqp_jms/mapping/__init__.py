"""amqp_jms.mapping."""
