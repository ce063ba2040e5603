"""amqp_jms.spark."""
